// Command parkmem measures what parked continuations and open listens of
// protocol 2026-07-28 hold on a running `mcp-actors serve --reference-tools
// --debug` (its /debug/mem): N test_elicitation calls left unanswered, then
// N subscriptions/listen held open, the figures printed before and after
// each.
//
//	go run ./parkmem http://127.0.0.1:8080 2000
package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
)

func post(url, method, name, body string) (*http.Response, error) {
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	return http.DefaultClient.Do(req)
}

func mem(base string) string {
	resp, err := http.Get(base + "/debug/mem")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`

func main() {
	base := os.Args[1]
	n, _ := strconv.Atoi(os.Args[2])
	url := base + "/mcp"
	fmt.Println("before:", mem(base))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 20)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			resp, err := post(url, "tools/call", "test_elicitation", `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"m"},`+meta+`}}`)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	fmt.Println("parked:", mem(base))
	var bodies []io.Closer
	for i := range n {
		resp, err := post(url, "subscriptions/listen", "", `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+meta+`}}`)
		if err != nil {
			fmt.Println(err)
			break
		}
		bufio.NewReader(resp.Body).ReadString('\n')
		bodies = append(bodies, resp.Body)
	}
	fmt.Println("listens:", mem(base))
	for _, b := range bodies {
		b.Close()
	}
}
