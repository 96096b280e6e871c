package faults_test

import (
	"bytes"
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The tools of a campaign's requests besides the session tools
// (history_test.go), as its history names them.
const (
	elicitTool       = "test_elicitation"        // legacy: asked on one node's stream, answered through another
	modernEchoTool   = "modern test_echo"        // 2026-07-28, no session
	modernElicitTool = "modern test_elicitation" // 2026-07-28: the first round on one node, the retry on another
)

// answerTry bounds one POST of an elicitation's answer: past it, the
// client tries the next node.
const answerTry = 5 * time.Second

// elicit calls test_elicitation on the session through node i and, when
// an elicitation/create request comes on the call's stream, posts the
// answer (accept, with user's username and email) through node j — then,
// while a node refuses it, through the other nodes but i in turn — and
// reads on to the result. It records the call as one request: answered
// when the result's text names user; failed when an error comes back, or
// no node took the answer within bound (the client abandons the call);
// given up when nothing came back within bound. The session must have
// declared the elicitation capability.
func (s *session) elicit(ctx context.Context, i, j int, user string, bound time.Duration) {
	s.seq++
	reqID := fmt.Sprintf("%s-%d", s.name, s.seq)
	params, _ := json.Marshal(map[string]any{"name": elicitTool, "arguments": map[string]any{"message": "who is " + user + "?"}})
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":%s}`, reqID, params)
	h := s.c.hist
	n := h.begin(s.id, s.c.nodes[i].id, elicitTool)
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
		h.refuse(n, fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(b)))
		return
	}
	wantID, _ := json.Marshal(reqID)
	var lost error // why no node took the answer
	err = eachMessage(resp, func(m rpcMessage) {
		switch {
		case m.Method == "elicitation/create" && len(m.ID) > 0:
			if lost == nil {
				if lost = s.answerElicitation(ctx, i, j, m.ID, user); lost != nil {
					cancel()
				}
			}
		case m.Method != "", !bytes.Equal(m.ID, wantID):
			h.stray(n, m.raw)
		case m.Error != nil:
			h.fail(n, fmt.Errorf("JSON-RPC error %d: %s", m.Error.Code, m.Error.Message), true)
		case m.Result == nil:
			h.fail(n, fmt.Errorf("a response with neither result nor error: %s", m.raw), true)
		case m.Result.IsError || len(m.Result.Content) != 1 || !strings.Contains(m.Result.Content[0].Text, user):
			h.fail(n, fmt.Errorf("a tool error or a result without the answer: %s", m.raw), true)
		default:
			h.answer(n, m.Result.Content[0].Text)
		}
	})
	if lost != nil {
		h.fail(n, fmt.Errorf("no node took the elicitation's answer: %w", lost), false)
	}
	s.ended(n, ctx, err)
}

// answerElicitation posts the answer to the server's request id through
// node j, then through the other nodes but i in turn (one try each pace),
// until one takes it (202) or ctx ends; then it returns why the last try
// failed.
func (s *session) answerElicitation(ctx context.Context, i, j int, id jsontext.Value, user string) error {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"username":%q,"email":%q}}}`,
		id, user, user+"@example.com")
	var to []int // j first, then the others but i
	for k := range s.c.nodes {
		if v := (j + k) % len(s.c.nodes); v != i {
			to = append(to, v)
		}
	}
	tick := time.NewTicker(pace)
	defer tick.Stop()
	var last error
	for k := 0; ; k++ {
		if last = s.postAnswer(ctx, to[k%len(to)], body); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d tries, the last: %w", k+1, last)
		case <-tick.C:
		}
	}
}

// postAnswer posts a response of the client's to node i, bounded by
// answerTry: nil when the node took it (202).
func (s *session) postAnswer(ctx context.Context, i int, body string) error {
	ctx, cancel := context.WithTimeout(ctx, answerTry)
	defer cancel()
	resp, err := s.post(ctx, i, body)
	if err != nil {
		return fmt.Errorf("via %s: %w", s.c.nodes[i].id, err)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("via %s: HTTP %d: %s", s.c.nodes[i].id, resp.StatusCode, bytes.TrimSpace(b))
	}
	return nil
}

// modernRound is one POST of a 2026-07-28 call as its client read it.
type modernRound struct {
	status  int            // the HTTP status; 0 when none came back
	refusal string         // the body of a status other than 200
	msgs    []modernAnswer // every message of a 200's answer, in order
	raw     []string       // each message as it came
	err     error          // why the reading stopped; nil when the answer ended
}

// modernPost sends node i a 2026-07-28 tools/call of tool with JSON-RPC
// ID id; members are the params' members after "name" ("arguments":…,
// and a retry's), without _meta. The client declares elicitation.
func (c *client) modernPost(ctx context.Context, i int, id, tool, members string) modernRound {
	params := fmt.Sprintf(`{"name":%q,%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}`, tool, members)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":%s}`, id, params)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.nodes[i].endpoint(), strings.NewReader(body))
	if err != nil {
		return modernRound{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := c.http.Do(req)
	if err != nil {
		return modernRound{err: err}
	}
	r := modernRound{status: resp.StatusCode}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		r.refusal = string(bytes.TrimSpace(b))
		return r
	}
	r.err = eachMessage(resp, func(m rpcMessage) {
		var a modernAnswer
		if err := json.Unmarshal([]byte(m.raw), &a); err != nil {
			a = modernAnswer{} // read as a stray: it has no ID
		}
		r.msgs = append(r.msgs, a)
		r.raw = append(r.raw, m.raw)
	})
	return r
}

// take records the messages of round r of request n that answer id —
// the rest are strays — with judge deciding each result: the value it
// answered, or why it failed. A result judge passes on (nil, nil) is
// returned instead, unrecorded (a first round's input_required).
func (c *client) take(n int, id string, r modernRound, judge func(modernAnswer) (*string, error)) *modernAnswer {
	want, _ := json.Marshal(id)
	var passed *modernAnswer
	for k, a := range r.msgs {
		switch {
		case !bytes.Equal(a.ID, want):
			c.hist.stray(n, r.raw[k])
		case a.Error != nil:
			c.hist.fail(n, fmt.Errorf("JSON-RPC error %d: %s", a.Error.Code, a.Error.Message), true)
		case a.Result == nil:
			c.hist.fail(n, fmt.Errorf("a response with neither result nor error: %s", r.raw[k]), true)
		default:
			value, err := judge(a)
			switch {
			case err != nil:
				c.hist.fail(n, fmt.Errorf("%w: %s", err, r.raw[k]), true)
			case value != nil:
				c.hist.answer(n, *value)
			case passed == nil:
				passed = &r.msgs[k]
			default:
				c.hist.fail(n, fmt.Errorf("a second intermediate answer: %s", r.raw[k]), true)
			}
		}
	}
	return passed
}

// endModern ends request n, if nothing else has, after round r: given up
// when ctx ran out, refused when the first round got a status other than
// 200, failed otherwise.
func (c *client) endModern(n int, ctx context.Context, r modernRound, first bool) {
	switch {
	case ctx.Err() != nil:
		c.hist.giveUp(n, ctx.Err())
	case r.err != nil:
		c.hist.fail(n, r.err, false)
	case r.status != http.StatusOK && first:
		c.hist.refuse(n, fmt.Errorf("HTTP %d: %s", r.status, r.refusal))
	case r.status != http.StatusOK:
		c.hist.fail(n, fmt.Errorf("the retry: HTTP %d: %s", r.status, r.refusal), false)
	default:
		c.hist.fail(n, errors.New("the response ended without an answer"), false)
	}
}

// resultText is the text of a result's single content block, or "".
func resultText(a modernAnswer) string {
	if a.Result == nil || len(a.Result.Content) != 1 {
		return ""
	}
	return a.Result.Content[0].Text
}

// modernEcho calls test_echo (2026-07-28, no session) on node i with
// text, and records it: answered when the result is the text.
func (c *client) modernEcho(ctx context.Context, i int, id, text string, bound time.Duration) {
	n := c.hist.begin("", c.nodes[i].id, modernEchoTool)
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	args, _ := json.Marshal(map[string]any{"text": text})
	r := c.modernPost(ctx, i, id, "test_echo", `"arguments":`+string(args))
	c.take(n, id, r, func(a modernAnswer) (*string, error) {
		if got := resultText(a); got != text {
			return nil, fmt.Errorf("not the text sent (%q)", text)
		}
		return &text, nil
	})
	c.endModern(n, ctx, r, true)
}

// modernElicit calls test_elicitation (2026-07-28, no session) on node
// i; when it is answered input_required, it sends the retry — the
// requestState and the answers (accept, with user's username) — to node
// j. It records both rounds as one request: answered when the retry's
// result names user; failed when a round ends otherwise (a first round
// that does not ask, a retry that asks again).
func (c *client) modernElicit(ctx context.Context, i, j int, id, user string, bound time.Duration) {
	n := c.hist.begin("", c.nodes[i].id+"→"+c.nodes[j].id, modernElicitTool)
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	args, _ := json.Marshal(map[string]any{"message": "who is " + user + "?"})
	members := `"arguments":` + string(args)
	r := c.modernPost(ctx, i, id, "test_elicitation", members)
	asked := c.take(n, id, r, func(a modernAnswer) (*string, error) {
		if a.Result.ResultType != "input_required" || a.Result.RequestState == "" || len(a.Result.InputRequests) == 0 {
			return nil, errors.New("the first round did not ask")
		}
		return nil, nil
	})
	if asked == nil {
		c.endModern(n, ctx, r, true)
		return
	}
	answers := map[string]any{}
	for key := range asked.Result.InputRequests {
		answers[key] = map[string]any{"action": "accept", "content": map[string]any{"username": user, "email": user + "@example.com"}}
	}
	state, _ := json.Marshal(asked.Result.RequestState)
	responses, _ := json.Marshal(answers)
	retryID := id + "r"
	r = c.modernPost(ctx, j, retryID, "test_elicitation", members+`,"requestState":`+string(state)+`,"inputResponses":`+string(responses))
	c.take(n, retryID, r, func(a modernAnswer) (*string, error) {
		text := resultText(a)
		if a.Result.ResultType == "input_required" {
			return nil, errors.New("the retry was asked again")
		}
		if !strings.Contains(text, user) {
			return nil, errors.New("a result without the answer")
		}
		return &text, nil
	})
	c.endModern(n, ctx, r, false)
}
