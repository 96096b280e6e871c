// Command floor is not an MCP server: it is the least a server on
// fasthttp must do to satisfy the load client in the echo, ask and connect
// scenarios, with none of MCP's rules (no validation, no sessions, no
// capabilities, no resumability, no limits). Its server CPU per call is
// the floor any fasthttp-based server meets on this machine; see
// "Where the CPU goes" in ../README.md.
//
//	go build -o bin/floor ./floor
//	SERVERS="mcpgo floor ours" CMD_floor='bin/floor -listen {addr}' SCENARIOS="echo_s50 ask_s50 connect" ./run-peers.sh
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/valyala/fasthttp"

	"github.com/mcp-actors/mcp-actors/bench/internal/floorwire"
)

type server struct {
	ids     atomic.Int64
	waiting sync.Map // elicitation request ID (raw JSON) → chan json.RawMessage
}

func main() {
	addr := flag.String("listen", "127.0.0.1:18710", "loopback address to listen on")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		panic(err)
	}
	s := &server{}
	srv := &fasthttp.Server{Handler: s.handle}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-stop
		_ = ln.Close()
	}()
	_ = srv.Serve(ln)
}

func (s *server) handle(ctx *fasthttp.RequestCtx) {
	switch string(ctx.Method()) {
	case "GET": // the standalone stream: a head, then silence until the client leaves
		ctx.HijackSetNoResponse(true)
		ctx.Hijack(func(c net.Conn) {
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n"))
			_, _ = c.Read(make([]byte, 1))
		})
		return
	case "DELETE":
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return
	}
	var m floorwire.Message
	_ = json.Unmarshal(ctx.PostBody(), &m)
	switch {
	case m.Result != nil: // a client's answer
		if ch, ok := s.waiting.LoadAndDelete(string(m.ID)); ok {
			ch.(chan json.RawMessage) <- m.Result
		}
		ctx.SetStatusCode(fasthttp.StatusAccepted)
		return
	case m.ID == nil: // a notification
		ctx.SetStatusCode(fasthttp.StatusAccepted)
		return
	case m.Method == "tools/call" && m.Params.Name == "test_elicitation":
		s.elicit(ctx, string(m.ID), m.Params.Arguments.Message)
		return
	}
	ctx.SetContentType("application/json")
	id := string(m.ID)
	switch m.Method {
	case "initialize":
		ctx.Response.Header.Set("Mcp-Session-Id", strconv.FormatInt(s.ids.Add(1), 10))
		ctx.WriteString(`{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"floor","version":"1"}}}`)
	case "tools/call":
		t, _ := json.Marshal(m.Params.Arguments.Text)
		ctx.WriteString(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":` + string(t) + `}]}}`)
	default:
		ctx.WriteString(`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`)
	}
}

// elicit answers test_elicitation: an SSE stream with elicitation/create,
// then, once the client's answer has come in on another request, the
// result.
func (s *server) elicit(ctx *fasthttp.RequestCtx, id, msg string) {
	eid := `"e` + strconv.FormatInt(s.ids.Add(1), 10) + `"`
	answer := make(chan json.RawMessage, 1)
	s.waiting.Store(eid, answer)
	q, _ := json.Marshal(msg)
	ctx.SetContentType("text/event-stream")
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		_, _ = w.WriteString(`event: message` + "\ndata: " + `{"jsonrpc":"2.0","id":` + eid +
			`,"method":"elicitation/create","params":{"mode":"form","message":` + string(q) + `,"requestedSchema":` + floorwire.ElicitSchema + "}}\n\n")
		if w.Flush() != nil {
			s.waiting.Delete(eid)
			return
		}
		var r struct {
			Action  string          `json:"action"`
			Content json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(<-answer, &r)
		t, _ := json.Marshal("User response: action=" + r.Action + ", content=" + string(r.Content))
		_, _ = w.WriteString("event: message\ndata: " + `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":` + string(t) + "}]}}\n\n")
	})
}
