package faults_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-actors/mcp-actors/internal/sse"
)

// protocolVersion is the version the clients ask for and send.
const protocolVersion = "2025-11-25"

// client sends raw Streamable HTTP requests to the nodes of a cluster —
// each request to the node the caller names — and records every tool call
// in a history. Raw, so that nothing between the server and the check
// hides a second answer, a stranger's frame, or a retry.
type client struct {
	hist  *history
	http  *http.Client
	nodes []*node
	// caps is the capabilities object (JSON) its sessions declare at
	// initialize; "" declares none, {}. Set it before opening any.
	caps string
}

// newClient returns a client of c's nodes recording into hist; its idle
// connections close at the end of t.
func newClient(t *testing.T, c *cluster, hist *history) *client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 16
	t.Cleanup(tr.CloseIdleConnections)
	return &client{hist: hist, http: &http.Client{Transport: tr}, nodes: c.nodes}
}

// session is one MCP session, driven by one goroutine at a time.
type session struct {
	c    *client
	name string // the client's name for it: request IDs start with it
	id   string // Mcp-Session-Id: "<node>.<random>"
	seq  int    // the last request number
}

// open initializes a session through node i (which then owns it) and
// sends notifications/initialized there, each step bounded by bound.
func (c *client) open(ctx context.Context, name string, i int, bound time.Duration) (*session, error) {
	s, status, _, err := c.initialize(ctx, name, i, bound)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("initialize via %s: HTTP %d", c.nodes[i].id, status)
	}
	return s, err
}

// initialize tries to open a session through node i, each step bounded
// by bound: the session when it opened, else the HTTP status of the
// initialize request and its Retry-After header (an error only when no
// status came back, or a 200 was not a session).
func (c *client) initialize(ctx context.Context, name string, i int, bound time.Duration) (*session, int, string, error) {
	s := &session{c: c, name: name}
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":%q,"version":"1"}}}`,
		name+"-init", protocolVersion, cmp.Or(c.caps, "{}"), name)
	ctx1, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	resp, err := s.post(ctx1, i, init)
	if err != nil {
		return nil, 0, "", fmt.Errorf("initialize via %s: %w", c.nodes[i].id, err)
	}
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, resp.StatusCode, resp.Header.Get("Retry-After"), nil
	}
	s.id = resp.Header.Get("Mcp-Session-Id")
	msgs, err := readMessages(resp)
	if err != nil {
		return nil, resp.StatusCode, "", fmt.Errorf("initialize via %s: %w", c.nodes[i].id, err)
	}
	if s.id == "" || len(msgs) != 1 || msgs[0].Result == nil {
		return nil, resp.StatusCode, "", fmt.Errorf("initialize via %s: session %q, %d messages", c.nodes[i].id, s.id, len(msgs))
	}
	ctx2, cancel2 := context.WithTimeout(ctx, bound)
	defer cancel2()
	resp, err = s.post(ctx2, i, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return nil, 0, "", fmt.Errorf("initialized via %s: %w", c.nodes[i].id, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return nil, resp.StatusCode, resp.Header.Get("Retry-After"), fmt.Errorf("initialized via %s: HTTP %d", c.nodes[i].id, resp.StatusCode)
	}
	return s, http.StatusOK, "", nil
}

// post sends one JSON-RPC message of the session to node i.
func (s *session) post(ctx context.Context, i int, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.c.nodes[i].endpoint(), strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
	return s.c.http.Do(req)
}

// rpcMessage is what the client reads of a JSON-RPC message from the
// server.
type rpcMessage struct {
	ID     jsontext.Value `json:"id"`
	Method string         `json:"method"`
	Params struct {
		ProgressToken any `json:"progressToken"`
	} `json:"params"`
	Result *toolResult `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw string
}

// toolResult is what the client reads of a tools/call result.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

// call calls tool, without arguments, on the session through node i and
// records it (see callWith).
func (s *session) call(ctx context.Context, i int, tool string, bound time.Duration) {
	s.callWith(ctx, i, tool, nil, bound)
}

// callWith calls tool with args on the session through node i and
// records it: a result's single text is its value; an error, an isError
// result or a broken connection fail it; an HTTP status other than 200
// refuses it (it never reached a handler); nothing within bound gives it
// up. The request's progressToken is its ID. The whole response is read
// — every frame of an SSE stream — and a frame that is neither its
// response nor its own progress is a stray.
func (s *session) callWith(ctx context.Context, i int, tool string, args map[string]any, bound time.Duration) {
	s.seq++
	reqID := fmt.Sprintf("%s-%d", s.name, s.seq)
	if args == nil {
		args = map[string]any{}
	}
	params, _ := json.Marshal(map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{"progressToken": reqID}})
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":%s}`, reqID, params)
	n := s.c.hist.begin(s.id, s.c.nodes[i].id, tool)
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	resp, err := s.post(ctx, i, body)
	if err != nil {
		s.ended(n, ctx, err)
		return
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		s.c.hist.refuse(n, fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(b)))
		return
	}
	wantID, _ := json.Marshal(reqID)
	err = eachMessage(resp, func(m rpcMessage) {
		switch {
		case m.Method == "notifications/progress" && m.Params.ProgressToken == reqID:
			s.c.hist.progressed(n)
		case m.Method != "":
			s.c.hist.stray(n, m.raw)
		case !bytes.Equal(m.ID, wantID):
			s.c.hist.stray(n, m.raw)
		case m.Error != nil:
			s.c.hist.fail(n, fmt.Errorf("JSON-RPC error %d: %s", m.Error.Code, m.Error.Message), true)
		case m.Result == nil:
			s.c.hist.fail(n, fmt.Errorf("a response with neither result nor error: %s", m.raw), true)
		case m.Result.IsError || len(m.Result.Content) != 1:
			s.c.hist.fail(n, fmt.Errorf("a tool error or an unexpected result: %s", m.raw), true)
		default:
			s.c.hist.answer(n, m.Result.Content[0].Text)
		}
	})
	s.ended(n, ctx, err)
}

// ended ends request n, if nothing else has, after its response was read
// (err: why the reading stopped): unanswered when ctx ran out, failed
// otherwise.
func (s *session) ended(n int, ctx context.Context, err error) {
	switch {
	case ctx.Err() != nil:
		s.c.hist.giveUp(n, ctx.Err())
	case err != nil:
		s.c.hist.fail(n, err, false)
	default:
		s.c.hist.fail(n, errors.New("the response ended without an answer"), false)
	}
}

// readMessages reads every JSON-RPC message of a response (JSON or SSE).
func readMessages(resp *http.Response) ([]rpcMessage, error) {
	var out []rpcMessage
	err := eachMessage(resp, func(m rpcMessage) { out = append(out, m) })
	return out, err
}

// eachMessage calls fn with every JSON-RPC message of a response — a JSON
// body, or the data of each SSE event — until the body ends, and closes
// it.
func eachMessage(resp *http.Response, fn func(rpcMessage)) error {
	defer resp.Body.Close()
	decode := func(data []byte) error {
		var m rpcMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("a message that cannot be read: %w: %.200s", err, data)
		}
		m.raw = string(data)
		fn(m)
		return nil
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct != "text/event-stream" {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		return decode(b)
	}
	rd := sse.NewReader(resp.Body)
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(ev.Data) > 0 {
			if err := decode(ev.Data); err != nil {
				return err
			}
		}
	}
}
