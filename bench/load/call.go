package main

import (
	"context"
	json "encoding/json/v2"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callOnce makes call i of session sess (negative i for warm-up calls) and
// checks its result. For ask, sample and roots it also checks that the call
// caused exactly one server request of its kind on the session.
func (l *loader) callOnce(ctx context.Context, cs *mcp.ClientSession, sess, i int) error {
	p := l.callParams(sess, i)
	sc := l.host.counters(cs)
	var asked *atomic.Int64 // the counter the call must raise by one
	switch l.cfg.tool {
	case "ask":
		asked = &sc.elicit
	case "sample":
		asked = &sc.sample
	case "roots":
		if !multiRoundTrip(cs) { // roots/list then bypasses the middleware
			asked = &sc.roots
		}
	}
	var before int64
	if asked != nil {
		before = asked.Load()
	}

	cctx, cancel := context.WithTimeout(ctx, l.cfg.callTimeout)
	defer cancel()
	res, err := cs.CallTool(cctx, p)
	if err != nil {
		return err
	}
	txt, err := resultText(res)
	if err != nil {
		return err
	}
	if asked != nil {
		if n := asked.Load() - before; n != 1 {
			return fmt.Errorf("%d %s requests during the call, want 1", n, askedMethod[l.cfg.tool])
		}
	}
	return l.checkResult(p, txt, res.StructuredContent)
}

// askedMethod is the server request each tool must cause once per call.
var askedMethod = map[string]string{
	"ask":    "elicitation/create",
	"sample": "sampling/createMessage",
	"roots":  "roots/list",
}

// callParams are the tools/call params of call i of session sess.
func (l *loader) callParams(sess, i int) *mcp.CallToolParams {
	p := &mcp.CallToolParams{Name: l.cfg.toolName()}
	switch l.cfg.tool {
	case "echo":
		p.Arguments = map[string]any{"text": fmt.Sprintf("hello %d/%d", sess, i)}
	case "ask":
		p.Arguments = map[string]any{"message": "Please provide your details"}
	case "sample":
		p.Arguments = map[string]any{"prompt": "say something"}
	case "roots":
		p.Arguments = map[string]any{}
	case "slow":
		args := map[string]any{"seconds": l.cfg.seconds}
		if l.cfg.steps > 0 {
			args["steps"] = l.cfg.steps
		}
		p.Arguments = args
		if l.cfg.progress {
			p.SetProgressToken(progressToken(sess, i))
		}
	}
	return p
}

// resultText joins the text content of res; a tool error or a result
// without content is an error.
func resultText(res *mcp.CallToolResult) (string, error) {
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	txt := sb.String()
	if res.IsError {
		return "", fmt.Errorf("tool error: %s", txt)
	}
	if len(res.Content) == 0 {
		return "", errors.New("no content")
	}
	return txt, nil
}

// checkResult checks a tool's result text (and structured content) against
// what the host answered:
//
//	test_echo         the exact text sent
//	test_elicitation  "User response: " with accept, "yes" and benchEmail
//	test_sampling     "LLM response: " + sampledText
//	test_roots        both root URIs, in the text and in structuredContent
//	test_slow         "done"
func (l *loader) checkResult(p *mcp.CallToolParams, txt string, structured any) error {
	switch l.cfg.tool {
	case "echo":
		if want := p.Arguments.(map[string]any)["text"].(string); txt != want {
			return fmt.Errorf("got %q, want %q", txt, want)
		}
	case "ask":
		if !strings.HasPrefix(txt, "User response: ") || !strings.Contains(txt, "accept") ||
			!strings.Contains(txt, "yes") || !strings.Contains(txt, benchEmail) {
			return fmt.Errorf("got %q, want \"User response: action=accept, content=...\" with username \"yes\" and email %q", txt, benchEmail)
		}
	case "sample":
		if want := "LLM response: " + sampledText; txt != want {
			return fmt.Errorf("got %q, want %q", txt, want)
		}
	case "roots":
		return checkRoots(txt, structured)
	case "slow":
		if txt != "done" {
			return fmt.Errorf("got %q, want %q", txt, "done")
		}
	}
	return nil
}

// checkRoots checks test_roots' result: both roots in the text, and
// structuredContent {"roots":[rootA, rootB]} in order.
func checkRoots(txt string, structured any) error {
	if !strings.Contains(txt, rootA) || !strings.Contains(txt, rootB) {
		return fmt.Errorf("text %q does not list both roots", txt)
	}
	b, _ := json.Marshal(structured)
	var sco struct {
		Roots []struct {
			URI string `json:"uri"`
		} `json:"roots"`
	}
	if err := json.Unmarshal(b, &sco); err != nil || len(sco.Roots) != 2 || sco.Roots[0].URI != rootA || sco.Roots[1].URI != rootB {
		return fmt.Errorf("structuredContent %s, want {\"roots\":[%s, %s]}", b, rootA, rootB)
	}
	return nil
}
