package harness_test

import (
	"context"
	"fmt"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

// newGreeter returns a server with one tool, greet.
func newGreeter() *mcpactors.Server {
	srv := mcpactors.NewServer(messages.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	type greetIn struct {
		Name string `json:"name"`
	}
	err := mcpactors.AddTypedTool(srv, &messages.Tool{Name: "greet", Description: "Greets someone"},
		func(ctx context.Context, s *mcpactors.Session, in greetIn) (*messages.CallToolResult, any, error) {
			_ = s.Log(ctx, messages.LevelInfo, "greet", "greeting "+in.Name)
			return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: "Hello, " + in.Name}}}, nil, nil
		})
	if err != nil {
		panic(err)
	}
	return srv
}

// Driving a session at the message level: no transport, the client's
// side scripted. In a test, harness.New(t, srv).Connect() does the same and
// cleans up after the test.
func ExampleDial() {
	srv := newGreeter()
	defer srv.Close(context.Background())
	ctx := context.Background()

	c, err := harness.Dial(ctx, srv)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println("server:", c.InitializeResult.ServerInfo.Name)

	if err := c.CallResult(ctx, messages.MethodSetLevel, map[string]string{"level": "info"}, nil); err != nil {
		panic(err)
	}
	var res messages.CallToolResult
	err = c.CallResult(ctx, messages.MethodCallTool, map[string]any{"name": "greet", "arguments": map[string]string{"name": "Ada"}}, &res)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].(*messages.TextContent).Text)
	for _, m := range c.Notifications(messages.MethodLogMessage) {
		fmt.Println("log:", string(m.Params))
	}
	// Output:
	// server: greeter
	// Hello, Ada
	// log: {"level":"info","logger":"greet","data":"greeting Ada"}
}

// A golden scenario (testdata/example/greet.txtar) played against a
// server. In a test, harness.RunScenarios(t, "testdata/*.txtar", newServer)
// plays every file, and go test -update rewrites what the server sends.
func ExampleCheckScenario() {
	srv := newGreeter()
	defer srv.Close(context.Background())
	err := harness.CheckScenario(context.Background(), "testdata/example/greet.txtar", srv)
	fmt.Println("mismatches:", err)
	// Output:
	// mismatches: <nil>
}
