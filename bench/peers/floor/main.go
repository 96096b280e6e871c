// Command floor is the benchmark's floor: a bare net/http handler that answers
// the load client's Streamable HTTP session with canned bytes, no MCP library.
// It serves initialize, notifications (202), the GET stream, DELETE,
// tools/call test_echo, test_slow (progress on the POST's SSE stream) and one
// server-to-client round trip for test_elicitation, test_sampling and
// test_roots (request on the POST's SSE stream, the client's answer POSTed
// back). It keeps no session state beyond the waiting
// round trips and checks nothing a real server must check; any MCP server on
// net/http costs at least this much per call. Compare to it as "× floor".
//
// It is the shared reference benchmark's peers/floor with only the import
// paths changed: keep the two the same, so that figures against it compare
// with the shared ones. The script stops it with SIGTERM.
//
//	floor -addr 127.0.0.1:18101
//	SERVERS="mcpgo floor ours" ./run-peers.sh; bin/summarize -base floor results/<ts>/raw.txt
package main

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"flag"
	"log"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcp-actors/mcp-actors/bench/internal/debugmem"
	"github.com/mcp-actors/mcp-actors/bench/internal/reftools"
)

type message struct {
	ID     jsontext.Value `json:"id"`
	Method string         `json:"method"`
	Params struct {
		ProtocolVersion string `json:"protocolVersion"`
		Name            string `json:"name"`
		Arguments       struct {
			Text    string   `json:"text"`
			Message string   `json:"message"`
			Prompt  string   `json:"prompt"`
			Seconds *float64 `json:"seconds"`
			Steps   int      `json:"steps"`
		} `json:"arguments"`
		Meta struct {
			ProgressToken jsontext.Value `json:"progressToken"`
		} `json:"_meta"`
	} `json:"params"`
	Result jsontext.Value `json:"result"`
}

var (
	sessions atomic.Int64
	calls    atomic.Int64
	waiting  sync.Map // session ID + request ID -> chan jsontext.Value
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18199", "listen address")
	flag.Parse()
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", serve)
	mux.Handle("/debug/mem", debugmem.Handler())
	log.Fatal(http.ListenAndServe(*addr, mux))
}

func serve(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	case http.MethodDelete:
		return
	}
	var m message
	if err := json.UnmarshalRead(r.Body, &m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	switch {
	case m.Method == "initialize":
		w.Header().Set("Mcp-Session-Id", strconv.FormatInt(sessions.Add(1), 10))
		reply(w, m.ID, map[string]any{
			"protocolVersion": m.Params.ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "floor", "version": "0"},
		})
	case m.Method == "" && m.Result != nil: // the client's answer to a round trip
		if ch, ok := waiting.LoadAndDelete(sid + string(m.ID)); ok {
			ch.(chan jsontext.Value) <- m.Result
		}
		w.WriteHeader(http.StatusAccepted)
	case m.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	case m.Method == "tools/call" && m.Params.Name == reftools.Echo:
		reply(w, m.ID, textResult(m.Params.Arguments.Text))
	case m.Method == "tools/call" && m.Params.Name == reftools.Elicitation:
		roundTrip(w, r, sid, m.ID, "elicitation/create", map[string]any{
			"message": m.Params.Arguments.Message, "requestedSchema": reftools.ElicitationSchema(),
		}, func(raw jsontext.Value) any {
			var res struct {
				Action  string         `json:"action"`
				Content map[string]any `json:"content"`
			}
			_ = json.Unmarshal(raw, &res)
			return textResult(reftools.ElicitationText(res.Action, res.Content))
		})
	case m.Method == "tools/call" && m.Params.Name == reftools.Sampling:
		roundTrip(w, r, sid, m.ID, "sampling/createMessage", map[string]any{
			"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": m.Params.Arguments.Prompt}}},
			"maxTokens": 100,
		}, func(raw jsontext.Value) any {
			var res struct {
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			_ = json.Unmarshal(raw, &res)
			return textResult(reftools.SamplingText(res.Content.Text))
		})
	case m.Method == "tools/call" && m.Params.Name == reftools.Roots:
		roundTrip(w, r, sid, m.ID, "roots/list", map[string]any{}, func(raw jsontext.Value) any {
			var res struct {
				Roots []any `json:"roots"`
			}
			_ = json.Unmarshal(raw, &res)
			if res.Roots == nil {
				res.Roots = []any{}
			}
			structured := map[string]any{"roots": res.Roots}
			b, _ := json.Marshal(structured)
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": string(b)}}, "structuredContent": structured}
		})
	case m.Method == "tools/call" && m.Params.Name == reftools.Slow:
		slow(w, r, m)
	case m.Method == "tools/list":
		reply(w, m.ID, map[string]any{"tools": []any{}})
	default:
		w.Header().Set("Content-Type", "application/json")
		_ = json.MarshalWrite(w, map[string]any{"jsonrpc": "2.0", "id": m.ID,
			"error": map[string]any{"code": -32601, "message": "method not found"}})
	}
}

func textResult(text string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
}

func reply(w http.ResponseWriter, id jsontext.Value, result any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.MarshalWrite(w, map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// roundTrip sends one server-to-client request on the POST's SSE stream, waits
// for the client's answer (POSTed separately) and ends the stream with the result.
func roundTrip(w http.ResponseWriter, r *http.Request, sid string, callID jsontext.Value, method string, params any, result func(jsontext.Value) any) {
	id := `"f` + strconv.FormatInt(calls.Add(1), 10) + `"`
	answer := make(chan jsontext.Value, 1)
	waiting.Store(sid+id, answer)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	event(w, map[string]any{"jsonrpc": "2.0", "id": jsontext.Value(id), "method": method, "params": params})
	w.(http.Flusher).Flush()
	select {
	case raw := <-answer:
		event(w, map[string]any{"jsonrpc": "2.0", "id": callID, "result": result(raw)})
	case <-r.Context().Done():
		waiting.Delete(sid + id)
	}
}

func event(w http.ResponseWriter, msg any) {
	b, _ := json.Marshal(msg)
	_, _ = w.Write(append(append([]byte("data: "), b...), '\n', '\n'))
}

// slow runs test_slow: progress on the POST's SSE stream when the call has a
// progressToken, then "done".
func slow(w http.ResponseWriter, r *http.Request, m message) {
	seconds := reftools.SlowDefaultSeconds
	if a := m.Params.Arguments.Seconds; a != nil {
		seconds = *a
	}
	tok := m.Params.Meta.ProgressToken
	if tok == nil {
		if err := reftools.RunSlow(r.Context(), seconds, m.Params.Arguments.Steps, nil); err == nil {
			reply(w, m.ID, textResult("done"))
		}
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher := w.(http.Flusher)
	err := reftools.RunSlow(r.Context(), seconds, m.Params.Arguments.Steps, func(i, n int) error {
		event(w, map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
			"params": map[string]any{"progressToken": tok, "progress": i, "total": n}})
		flusher.Flush()
		return nil
	})
	if err == nil {
		event(w, map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": textResult("done")})
	}
}
