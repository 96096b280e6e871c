package mcpactors_test

import (
	"bufio"
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"io"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
)

// pipeClient plays an MCP client against srv.ServeStdio over a pair of
// in-memory pipes, one JSON-RPC message per line.
type pipeClient struct {
	in   *io.PipeWriter // the server's stdin
	out  *bufio.Reader  // the server's stdout
	raw  *io.PipeReader
	done chan error // ServeStdio's result
}

// startStdio runs srv.ServeStdio on a goroutine of its own.
func startStdio(srv *mcpactors.Server) *pipeClient {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &pipeClient{in: inW, out: bufio.NewReader(outR), raw: outR, done: make(chan error, 1)}
	go func() {
		err := srv.ServeStdio(context.Background(), inR, outW)
		outW.Close() // the client reads EOF once everything is written
		c.done <- err
	}()
	return c
}

// send writes one line to the server.
func (c *pipeClient) send(line string) {
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		panic(err)
	}
}

// receive reads one line from the server.
func (c *pipeClient) receive() string {
	line, err := c.out.ReadString('\n')
	if err != nil {
		panic(err)
	}
	return line[:len(line)-1]
}

// call sends a request and returns the server's response line.
func (c *pipeClient) call(line string) string {
	c.send(line)
	return c.receive()
}

// initialize performs the handshake and returns the initialize result.
func (c *pipeClient) initialize() *messages.InitializeResult {
	resp := c.call(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"example-client","version":"1.0.0"}}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	var msg struct {
		Result messages.InitializeResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(resp), &msg); err != nil {
		panic(err)
	}
	return &msg.Result
}

// close ends the client's stdin and waits for ServeStdio to return.
func (c *pipeClient) close() error {
	c.in.Close()
	_, _ = io.Copy(io.Discard, c.raw) // whatever the server still writes
	return <-c.done
}

// toolResult decodes the result of a tools/call response line.
func toolResult(line string) *messages.CallToolResult {
	var msg struct {
		Result messages.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &msg); err != nil {
		panic(err)
	}
	return &msg.Result
}

func ExampleNewServer() {
	srv := mcpactors.NewServer(messages.Implementation{Name: "greeter", Version: "1.0.0"}, &mcpactors.Options{
		Instructions: "Call greet to greet someone.",
	})
	defer srv.Close(context.Background())

	err := srv.AddTool(&messages.Tool{
		Name:        "greet",
		Description: "Greets someone by name",
		InputSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}, func(_ context.Context, _ *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		var args struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return nil, err
		}
		return &messages.CallToolResult{Content: messages.ContentList{
			&messages.TextContent{Text: "Hello, " + args.Name + "!"},
		}}, nil
	})
	if err != nil {
		panic(err)
	}

	c := startStdio(srv)
	hello := c.initialize()
	fmt.Println(hello.ServerInfo.Name, hello.ProtocolVersion)
	fmt.Println(hello.Instructions)

	ok := toolResult(c.call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}`))
	fmt.Println(ok.IsError, ok.Content[0].(*messages.TextContent).Text)

	// Arguments that break the input schema never reach the handler; the
	// model reads why.
	bad := toolResult(c.call(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet","arguments":{}}}`))
	fmt.Println(bad.IsError)

	fmt.Println(c.close())
	// Output:
	// greeter 2025-06-18
	// Call greet to greet someone.
	// false Hello, Ada!
	// true
	// <nil>
}

func ExampleAddTypedTool() {
	type AddIn struct {
		A int `json:"a" jsonschema:"description=The first addend"`
		B int `json:"b" jsonschema:"description=The second addend"`
	}
	type AddOut struct {
		Sum int `json:"sum"`
	}

	srv := mcpactors.NewServer(messages.Implementation{Name: "calculator", Version: "1.0.0"}, nil)
	defer srv.Close(context.Background())
	err := mcpactors.AddTypedTool(srv, &messages.Tool{Name: "add", Description: "Adds two integers"},
		func(_ context.Context, _ *mcpactors.Session, in AddIn) (*messages.CallToolResult, AddOut, error) {
			return nil, AddOut{Sum: in.A + in.B}, nil
		})
	if err != nil {
		panic(err)
	}

	c := startStdio(srv)
	c.initialize()

	var list struct {
		Result messages.ListToolsResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(c.call(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)), &list); err != nil {
		panic(err)
	}
	var in struct {
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(list.Result.Tools[0].InputSchema, &in); err != nil {
		panic(err)
	}
	fmt.Println(list.Result.Tools[0].Name, "requires", in.Required)

	res := toolResult(c.call(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}`))
	fmt.Println(string(res.StructuredContent))
	fmt.Println(res.Content[0].(*messages.TextContent).Text)

	fmt.Println(c.close())
	// Output:
	// add requires [a b]
	// {"sum":5}
	// {"sum":5}
	// <nil>
}

func ExampleServer_ServeStdio() {
	srv := mcpactors.NewServer(messages.Implementation{Name: "echo", Version: "1.0.0"}, nil)
	defer srv.Close(context.Background())
	err := srv.AddTool(&messages.Tool{Name: "echo"},
		func(_ context.Context, _ *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: string(req.Arguments)}}}, nil
		})
	if err != nil {
		panic(err)
	}

	// In a subprocess server: srv.ServeStdio(ctx, os.Stdin, os.Stdout).
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := srv.ServeStdio(context.Background(), stdinR, stdoutW)
		stdoutW.Close()
		done <- err
	}()
	stdout := bufio.NewScanner(stdoutR)
	send := func(line string) { fmt.Fprintln(stdinW, line) }

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	stdout.Scan()
	var hello struct {
		ID     int                       `json:"id"`
		Result messages.InitializeResult `json:"result"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &hello); err != nil {
		panic(err)
	}
	fmt.Println(hello.ID, hello.Result.ProtocolVersion, hello.Result.ServerInfo.Name)

	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"say":"hi"}}}`)
	stdout.Scan()
	fmt.Println(stdout.Text())

	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}}`)
	stdout.Scan()
	fmt.Println(stdout.Text())

	stdinW.Close() // EOF: the session ends and ServeStdio returns nil
	for stdout.Scan() {
	}
	fmt.Println(<-done)
	// Output:
	// 1 2025-11-25 echo
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"say\":\"hi\"}"}]}}
	// {"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid params: unknown tool \"nope\""}}
	// <nil>
}
