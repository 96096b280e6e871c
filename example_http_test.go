package mcpactors_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Embedding over HTTP: the server's Streamable HTTP endpoint mounted in a
// net/http server (here an httptest one on loopback; in production,
// srv.Serve or your own http.Server), spoken to by hand.
func ExampleServer_HTTPHandler() {
	srv := mcpactors.NewServer(messages.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	type greetIn struct {
		Name string `json:"name" jsonschema:"description=Who to greet"`
	}
	err := mcpactors.AddTypedTool(srv, &messages.Tool{Name: "greet", Description: "Greets someone"},
		func(_ context.Context, _ *mcpactors.Session, in greetIn) (*messages.CallToolResult, any, error) {
			return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: "Hello, " + in.Name}}}, nil, nil
		})
	if err != nil {
		panic(err)
	}
	// Safe defaults: only loopback Host and Origin headers are accepted
	// until AllowedHosts / ListenAddr say where the server is reached.
	h, err := srv.HTTPHandler(&mcpactors.HTTPOptions{Path: "/mcp", Health: true})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(h)

	post := func(session, body string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	resp, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	fmt.Println("initialize:", resp.StatusCode, session != "")
	resp, _ = post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Println("initialized:", resp.StatusCode)
	_, body := post(session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}`)
	fmt.Println(body)

	health, _ := http.Get(ts.URL + "/readyz")
	health.Body.Close()
	fmt.Println("readyz:", health.StatusCode)

	// The shutdown order: the MCP server first (sessions end, and with them
	// their event streams), then the HTTP server.
	if err := srv.Shutdown(context.Background()); err != nil {
		panic(err)
	}
	ts.Close()
	// Output:
	// initialize: 200 true
	// initialized: 202
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Hello, Ada"}]}}
	// readyz: 200
}

// A tool that asks the user through the client (form-mode elicitation):
// Elicit derives the form's schema from a struct, waits for the answer
// and decodes it. Here the client is the message-level harness.
func ExampleSession_Elicit() {
	srv := mcpactors.NewServer(messages.Implementation{Name: "booker", Version: "1.0.0"}, nil)
	defer srv.Close(context.Background())
	err := srv.AddTool(&messages.Tool{Name: "book"},
		func(ctx context.Context, s *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			var seat struct {
				Row    int    `json:"row" jsonschema:"minimum=1,maximum=30"`
				Window bool   `json:"window"`
				Meal   string `json:"meal" jsonschema:"enum=veg,enum=fish"`
			}
			action, err := s.Elicit(ctx, "Which seat?", &seat)
			if err != nil {
				return nil, err
			}
			if action != messages.ElicitAccept {
				return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: "not booked: " + string(action)}}}, nil
			}
			return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{
				Text: fmt.Sprintf("row %d, window %v, %s meal", seat.Row, seat.Window, seat.Meal)}}}, nil
		})
	if err != nil {
		panic(err)
	}

	ctx := context.Background()
	c, err := harness.Dial(ctx, srv, harness.WithElicitation(func(p *messages.ElicitParams) (*messages.ElicitResult, error) {
		fmt.Println("asked:", p.Message)
		return &messages.ElicitResult{Action: messages.ElicitAccept, Content: []byte(`{"row":12,"window":true,"meal":"veg"}`)}, nil
	}))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	var res messages.CallToolResult
	if err := c.CallResult(ctx, messages.MethodCallTool, map[string]any{"name": "book"}, &res); err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].(*messages.TextContent).Text)
	// Output:
	// asked: Which seat?
	// row 12, window true, veg meal
}
