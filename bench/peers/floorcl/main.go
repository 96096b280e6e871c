// Command floorcl is the cluster's floor: peers/floor's canned answers on
// nodes joined by embedded NATS servers, each session's messages carried to
// the node that opened it, and nothing else — no actor, no durability, no
// checks. A session ID names its node ("<node>-<n>"). A POST for another
// node's session crosses one route to it and its answer comes back; the
// round trips of test_elicitation, test_sampling and test_roots keep their
// state on that node, which sends the final event to the node holding the
// POST's stream. So a routed call costs the NATS messages any design that
// runs a session's handlers on one node needs (echo: request and reply;
// elicitation: request, event, the answer and its acknowledgement, the
// result) and nothing more. Compare a cluster to it as "× cluster floor":
// what is above it is the runtime's own.
//
// Protocol 2026-07-28 (a POST without Mcp-Session-Id whose
// MCP-Protocol-Version names it): server/discover and test_echo are
// answered where they land; test_elicitation and test_sampling answer
// input_required with a requestState naming the node that keeps the round
// ("<node>.<n>"), and the retry, wherever it lands, is carried to that
// node, which answers the result from the retry's inputResponses (one
// request-reply across a route, what any design that keeps a waiting
// handler on one node pays).
//
//	floorcl -addr 127.0.0.1:18101 -node 0 -cluster-listen 127.0.0.1:26230 \
//	    -routes nats-route://127.0.0.1:26230,nats-route://127.0.0.1:26231,nats-route://127.0.0.1:26232
//
// Its NATS server is set up as mcp-actors serve's is: routes authenticate
// with the secret in $FLOORCL_SECRET (required; run-peers.sh makes one per
// run), and the client port admits only the in-process connection. Both
// cost once per connection, nothing per message.
//
// It answers GET /readyz with 200 once it has routes to every other node
// the -routes name. The script stops it with SIGTERM.
package main

import (
	"bytes"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/mcp-actors/mcp-actors/bench/internal/debugmem"
	"github.com/mcp-actors/mcp-actors/bench/internal/reftools"
)

type message struct {
	ID     jsontext.Value `json:"id"`
	Method string         `json:"method"`
	Params struct {
		ProtocolVersion string   `json:"protocolVersion"`
		Name            string   `json:"name"`
		Arguments       toolArgs `json:"arguments"`
	} `json:"params"`
	Result jsontext.Value `json:"result"`
}

// Kinds of an owner's answer (its first byte).
const (
	answerJSON     = 'J' // a JSON-RPC response: the POST's body
	answerAccepted = 'A' // 202
	answerEvent    = 'S' // the first SSE event; the rest comes to the stream
	answerUnknown  = 'N' // 404: no such session here
)

type node struct {
	id      string
	nc      *nats.Conn
	peers   int
	ns      *server.Server
	n       atomic.Int64
	live    sync.Map // session ID -> struct{}: this node's sessions
	rounds  sync.Map // requestState -> struct{}: 2026-07-28 rounds waiting here
	waiting sync.Map // session ID + request ID -> func(jsontext.Value): round trips
	streams sync.Map // stream key -> chan []byte: POST streams held here
}

func main() {
	addr := flag.String("addr", "127.0.0.1:18199", "HTTP listen address")
	idx := flag.Int("node", 0, "node index")
	listen := flag.String("cluster-listen", "127.0.0.1:26230", "route listen address")
	routes := flag.String("routes", "", "nats-route://HOST:PORT,... of every node")
	flag.Parse()
	secret := os.Getenv("FLOORCL_SECRET")
	if secret == "" {
		log.Fatal("FLOORCL_SECRET is empty: routes authenticate with it")
	}
	nd, err := start(strconv.Itoa(*idx), *listen, *routes, secret)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", nd.serve)
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if nd.ns.NumRoutes() < nd.peers {
			http.Error(w, "routes not up", http.StatusServiceUnavailable)
		}
	})
	mux.Handle("/debug/mem", debugmem.Handler())
	log.Fatal(http.ListenAndServe(*addr, mux))
}

// start runs the embedded NATS server with routes and subscribes to this
// node's subjects.
func start(id, listen, routes, secret string) (*node, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, err
	}
	so := &server.Options{ServerName: "floorcl-" + id, NoSigs: true, Host: "127.0.0.1", Port: server.RANDOM_PORT,
		Cluster:                    server.ClusterOpts{Name: "floorcl", Host: host, Port: p, Username: "floorcl", Password: secret},
		CustomClientAuthentication: inProcessOnly{}}
	nd := &node{id: id}
	for _, r := range strings.Split(routes, ",") {
		if r == "" {
			continue
		}
		u, err := url.Parse(r)
		if err != nil {
			return nil, err
		}
		u.User = url.UserPassword("floorcl", secret)
		so.Routes = append(so.Routes, u)
		if u.Host != listen {
			nd.peers++
		}
	}
	if nd.ns, err = server.NewServer(so); err != nil {
		return nil, err
	}
	nd.ns.Start()
	if !nd.ns.ReadyForConnections(10 * time.Second) {
		return nil, fmt.Errorf("NATS server did not start")
	}
	if nd.nc, err = nats.Connect("", nats.InProcessServer(nd.ns)); err != nil {
		return nil, err
	}
	if _, err := nd.nc.Subscribe("floorcl."+id+".call", nd.onCall); err != nil {
		return nil, err
	}
	if _, err := nd.nc.Subscribe("floorcl."+id+".stream", nd.onStream); err != nil {
		return nil, err
	}
	if _, err := nd.nc.Subscribe("floorcl."+id+".modern", func(m *nats.Msg) { _ = m.Respond(nd.modernAnswer(m.Data)) }); err != nil {
		return nil, err
	}
	return nd, nd.nc.Flush()
}

// inProcessOnly admits a client only through an in-process pipe, as
// mcp-actors' embedded server does.
type inProcessOnly struct{}

func (inProcessOnly) Check(c server.ClientAuthentication) bool {
	addr := c.RemoteAddress()
	return c.Kind() == server.CLIENT && addr != nil && addr.Network() == "pipe"
}

// owner is the node of session sid.
func owner(sid string) string {
	o, _, _ := strings.Cut(sid, "-")
	return o
}

func (nd *node) serve(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	switch r.Method {
	case http.MethodGet:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	case http.MethodDelete:
		if a := nd.call(sid, "", nil); a[0] == answerUnknown {
			w.WriteHeader(http.StatusNotFound)
		}
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if sid == "" && r.Header.Get("Mcp-Protocol-Version") >= "2026-07-28" {
		nd.modern(w, body)
		return
	}
	var m message
	if bytes.Contains(body, []byte(`"initialize"`)) && json.Unmarshal(body, &m) == nil && m.Method == "initialize" {
		sid := nd.id + "-" + strconv.FormatInt(nd.n.Add(1), 10)
		nd.live.Store(sid, struct{}{})
		w.Header().Set("Mcp-Session-Id", sid)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(response(m.ID, map[string]any{
			"protocolVersion": m.Params.ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "floorcl", "version": "0"},
		}))
		return
	}
	key := nd.id + "." + strconv.FormatInt(nd.n.Add(1), 10)
	a := nd.call(sid, key, body)
	switch a[0] {
	case answerJSON:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(a[1:])
	case answerAccepted:
		w.WriteHeader(http.StatusAccepted)
	case answerUnknown:
		http.Error(w, "session not found", http.StatusNotFound)
	case answerEvent:
		ch := make(chan []byte, 1)
		nd.streams.Store(key, ch)
		defer nd.streams.Delete(key)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(a[1:])
		w.(http.Flusher).Flush()
		select {
		case ev := <-ch:
			_, _ = w.Write(ev)
		case <-r.Context().Done():
		}
	}
}

// call has session sid's node handle body (a DELETE when nil), for a POST
// whose stream, if it needs one, is key here; it returns the node's answer.
func (nd *node) call(sid, key string, body []byte) []byte {
	o := owner(sid)
	if o == nd.id {
		return nd.handle(sid, nd.id, key, body)
	}
	data := make([]byte, 0, len(sid)+len(key)+len(body)+3)
	data = append(append(append(append(data, sid...), ' '), key...), '\n')
	if body != nil {
		data = append(append(data, 'B'), body...)
	}
	reply, err := nd.nc.Request("floorcl."+o+".call", data, 5*time.Second)
	if err != nil || len(reply.Data) == 0 {
		return []byte{answerUnknown}
	}
	return reply.Data
}

// onCall handles a message for one of this node's sessions.
func (nd *node) onCall(m *nats.Msg) {
	head, rest, _ := bytes.Cut(m.Data, []byte{'\n'})
	sid, key, _ := strings.Cut(string(head), " ")
	var body []byte
	if len(rest) > 0 {
		body = rest[1:]
	}
	holder, _, _ := strings.Cut(key, ".")
	_ = m.Respond(nd.handle(sid, holder, key, body))
}

// onStream receives the final event of a POST stream held here.
func (nd *node) onStream(m *nats.Msg) {
	key, ev, _ := bytes.Cut(m.Data, []byte{'\n'})
	nd.deliver(string(key), ev)
}

// deliver hands ev to the POST stream key held here.
func (nd *node) deliver(key string, ev []byte) {
	if ch, ok := nd.streams.Load(key); ok {
		ch.(chan []byte) <- ev
	}
}

// handle is what the session's node does with a message: peers/floor's
// answers. A round trip's result goes to stream key on node holder.
func (nd *node) handle(sid, holder, key string, body []byte) []byte {
	if _, ok := nd.live.Load(sid); !ok {
		return []byte{answerUnknown}
	}
	if body == nil { // DELETE
		nd.live.Delete(sid)
		return []byte{answerAccepted}
	}
	var m message
	if err := json.Unmarshal(body, &m); err != nil {
		return append([]byte{answerJSON}, errorResponse(nil, -32700, err.Error())...)
	}
	switch {
	case m.Method == "" && m.Result != nil:
		if fn, ok := nd.waiting.LoadAndDelete(sid + string(m.ID)); ok {
			fn.(func(jsontext.Value))(m.Result)
		}
		return []byte{answerAccepted}
	case m.ID == nil:
		return []byte{answerAccepted}
	case m.Method == "tools/call" && m.Params.Name == reftools.Echo:
		return append([]byte{answerJSON}, response(m.ID, textResult(m.Params.Arguments.Text))...)
	case m.Method == "tools/call" && m.Params.Name == reftools.Elicitation:
		return nd.roundTrip(sid, holder, key, m.ID, "elicitation/create", map[string]any{
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
		return nd.roundTrip(sid, holder, key, m.ID, "sampling/createMessage", map[string]any{
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
	case m.Method == "tools/list":
		return append([]byte{answerJSON}, response(m.ID, map[string]any{"tools": []any{}})...)
	}
	return append([]byte{answerJSON}, errorResponse(m.ID, -32601, "method not found")...)
}

// roundTrip registers the wait for the client's answer and returns the
// request's event; the answer's result goes to stream key on holder.
func (nd *node) roundTrip(sid, holder, key string, callID jsontext.Value, method string, params any, result func(jsontext.Value) any) []byte {
	id := `"f` + strconv.FormatInt(nd.n.Add(1), 10) + `"`
	nd.waiting.Store(sid+id, func(raw jsontext.Value) {
		ev := event(response(callID, result(raw)))
		if holder == nd.id {
			nd.deliver(key, ev)
			return
		}
		_ = nd.nc.Publish("floorcl."+holder+".stream", append([]byte(key+"\n"), ev...))
	})
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": jsontext.Value(id), "method": method, "params": params})
	return append([]byte{answerEvent}, event(req)...)
}

func textResult(text string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
}

func response(id jsontext.Value, result any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	return append(b, '\n')
}

func errorResponse(id jsontext.Value, code int, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	return append(b, '\n')
}

func event(b []byte) []byte {
	return append(append([]byte("data: "), bytes.TrimRight(b, "\n")...), '\n', '\n')
}

// toolArgs are the arguments of the tools floorcl answers, in either era.
type toolArgs struct {
	Text    string `json:"text"`
	Message string `json:"message"`
	Prompt  string `json:"prompt"`
}

// modernMessage is what floorcl reads of a 2026-07-28 request.
type modernMessage struct {
	ID     jsontext.Value `json:"id"`
	Method string         `json:"method"`
	Params struct {
		Name           string                    `json:"name"`
		Arguments      toolArgs                  `json:"arguments"`
		RequestState   string                    `json:"requestState"`
		InputResponses map[string]jsontext.Value `json:"inputResponses"`
	} `json:"params"`
}

// modern answers a 2026-07-28 POST: here, or — a retry of a round another
// node keeps — on that node.
func (nd *node) modern(w http.ResponseWriter, body []byte) {
	var m modernMessage
	if err := json.Unmarshal(body, &m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	answer := []byte(nil)
	if o, _, ok := strings.Cut(m.Params.RequestState, "."); ok && o != nd.id {
		reply, err := nd.nc.Request("floorcl."+o+".modern", body, 5*time.Second)
		if err != nil {
			http.Error(w, "the round's node did not answer", http.StatusServiceUnavailable)
			return
		}
		answer = reply.Data
	} else {
		answer = nd.modernAnswer(body)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(answer)
}

// modernAnswer is this node's canned answer to a 2026-07-28 request.
func (nd *node) modernAnswer(body []byte) []byte {
	var m modernMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return errorResponse(nil, -32700, err.Error())
	}
	complete := func(content any) []byte {
		return response(m.ID, map[string]any{"resultType": "complete", "content": content})
	}
	text := func(t string) []any { return []any{map[string]any{"type": "text", "text": t}} }
	ask := func(method string, params any, result func(jsontext.Value) []byte) []byte {
		if st := m.Params.RequestState; st != "" {
			if _, ok := nd.rounds.LoadAndDelete(st); ok {
				if raw, ok := m.Params.InputResponses["q"]; ok {
					return result(raw)
				}
			}
			return errorResponse(m.ID, -32602, "unknown round")
		}
		st := nd.id + "." + strconv.FormatInt(nd.n.Add(1), 10)
		nd.rounds.Store(st, struct{}{})
		return response(m.ID, map[string]any{"resultType": "input_required", "requestState": st,
			"inputRequests": map[string]any{"q": map[string]any{"method": method, "params": params}}})
	}
	switch {
	case m.Method == "server/discover":
		return response(m.ID, map[string]any{"resultType": "complete", "supportedVersions": []string{"2026-07-28"},
			"capabilities": map[string]any{"tools": map[string]any{}}, "ttlMs": 0, "cacheScope": "public",
			"_meta": map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "floorcl", "version": "0"}}})
	case m.Method == "tools/call" && m.Params.Name == reftools.Echo:
		return complete(text(m.Params.Arguments.Text))
	case m.Method == "tools/call" && m.Params.Name == reftools.Elicitation:
		return ask("elicitation/create", map[string]any{"mode": "form", "message": m.Params.Arguments.Message, "requestedSchema": reftools.ElicitationSchema()},
			func(raw jsontext.Value) []byte {
				var res struct {
					Action  string         `json:"action"`
					Content map[string]any `json:"content"`
				}
				_ = json.Unmarshal(raw, &res)
				return complete(text(reftools.ElicitationText(res.Action, res.Content)))
			})
	case m.Method == "tools/call" && m.Params.Name == reftools.Sampling:
		return ask("sampling/createMessage", map[string]any{"maxTokens": 100,
			"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": m.Params.Arguments.Prompt}}}},
			func(raw jsontext.Value) []byte {
				var res struct {
					Content struct {
						Text string `json:"text"`
					} `json:"content"`
				}
				_ = json.Unmarshal(raw, &res)
				return complete(text(reftools.SamplingText(res.Content.Text)))
			})
	case m.Method == "tools/list":
		return response(m.ID, map[string]any{"resultType": "complete", "tools": []any{}, "ttlMs": 0, "cacheScope": "public"})
	}
	return errorResponse(m.ID, -32601, "method not found")
}
