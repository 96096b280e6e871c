package reftools_test

import (
	"bufio"
	"context"
	"fmt"
	"io"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
	"github.com/mcp-actors/mcp-actors/reftools"
)

// Embedding: a server with the reference set, serving one client over a
// pair of pipes as it would over a subprocess's stdin and stdout.
func Example() {
	srv := mcpactors.NewServer(messages.Implementation{Name: "example", Version: "1.0.0"}, nil)
	defer srv.Close(context.Background())
	if err := reftools.Register(srv); err != nil {
		fmt.Println(err)
		return
	}

	clientOut, serverIn := io.Pipe()
	serverOut, clientIn := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- srv.ServeStdio(context.Background(), clientOut, clientIn)
		clientIn.Close()
	}()

	responses := bufio.NewScanner(serverOut)
	send := func(line string) { fmt.Fprintln(serverIn, line) }

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example-client","version":"1.0.0"}}}`)
	responses.Scan() // the initialize result
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_echo","arguments":{"text":"hello"}}}`)
	responses.Scan()
	fmt.Println(responses.Text())
	go io.Copy(io.Discard, serverOut) // whatever else the server may send

	serverIn.Close() // EOF ends the session
	fmt.Println("served:", <-served)
	// Output:
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hello"}]}}
	// served: <nil>
}
