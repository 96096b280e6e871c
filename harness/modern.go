package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Scenarios of protocol 2026-07-28 (the modern era) run over HTTP, as a
// client of that era sends them: each "> " line is one POST to the
// server's endpoint (an httptest server on loopback), with the headers
// such a client mirrors from the body (MCP-Protocol-Version from
// params._meta, Mcp-Method, Mcp-Name for tools/call, prompts/get and
// resources/read). What comes back is, in order, a line {"http":STATUS}
// and the response's messages (one for a JSON body, one per event of an
// event stream). Lines starting with "= " before a "> " line change that
// POST's headers: "= Name: value" sets one, "= Name:" removes it.
//
//	= Mcp-Method: tools/list
//	> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{…}}
//	< {"http":400}
//	< {"jsonrpc":"2.0","id":1,"error":{"code":-32020,…}}
//
// Each POST runs on a goroutine of its own: a "> " line does not wait for
// its answer (a subscriptions/listen stays open), only "<" groups wait.

// RunModernScenarios runs every file matching pattern as a modern
// scenario, each a subtest against a fresh server from newServer; with
// -update it rewrites them.
func RunModernScenarios(t *testing.T, pattern string, newServer func(testing.TB) *mcpactors.Server) {
	t.Helper()
	eachScenario(t, pattern, func(t *testing.T, file string) { RunModernScenario(t, file, newServer(t)) })
}

// RunModernScenario plays one modern scenario file against srv over HTTP;
// with -update it rewrites the file.
func RunModernScenario(t *testing.T, file string, srv *mcpactors.Server) {
	t.Helper()
	c := newModernConn(t, srv)
	if err := runScenario(t, c, file, *update); err != nil {
		t.Fatalf("harness: %v", err)
	}
}

// modernConn is a modern scenario's client: POSTs, and what they answer.
type modernConn struct {
	url     string
	inbox   *inbox
	ctx     context.Context
	timeout time.Duration
	headers map[string]string // for the next POST ("" removes)
	posts   sync.WaitGroup
	errs    chan error
}

func newModernConn(t *testing.T, srv *mcpactors.Server) *modernConn {
	t.Helper()
	h, err := srv.HTTPHandler(nil)
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	hs := httptest.NewServer(h)
	ctx, cancel := context.WithCancel(context.Background())
	c := &modernConn{url: hs.URL + "/mcp", inbox: newInbox(), ctx: ctx, timeout: DefaultTimeout, errs: make(chan error, 64)}
	t.Cleanup(func() {
		cancel() // ends the streams still open (listens)
		c.posts.Wait()
		hs.Close()
		c.inbox.close()
		cctx, stop := context.WithTimeout(context.Background(), DefaultTimeout)
		defer stop()
		_ = srv.Close(cctx)
	})
	return c
}

// setHeaders sets the header changes of the next POST.
func (c *modernConn) setHeaders(h map[string]string) { c.headers = h }

// SendRaw POSTs data with the headers a modern client sends, changed as
// the transcript says, and collects the answer on a goroutine of its own.
func (c *modernConn) SendRaw(data []byte) error {
	m, derr := messages.Decode(data)
	if derr != nil {
		return derr
	}
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, c.url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if v, ok := messages.ModernVersionOf(m.Params); ok {
		req.Header.Set("MCP-Protocol-Version", v)
	}
	if m.Method != "" {
		req.Header.Set("Mcp-Method", m.Method)
	}
	if name, ok := mirroredName(m); ok {
		req.Header.Set("Mcp-Name", name)
	}
	for k, v := range c.headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	c.headers = nil
	stream := m.ID.Raw()
	c.posts.Add(1)
	go func() {
		defer c.posts.Done()
		c.collect(req, stream)
	}()
	return nil
}

// collect makes one POST and adds what it answers to the inbox.
func (c *modernConn) collect(req *http.Request, stream string) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if c.ctx.Err() == nil {
			c.inbox.add(&Received{Raw: fmt.Appendf(nil, `{"error":%q}`, err.Error()), Stream: stream})
		}
		return
	}
	defer resp.Body.Close()
	c.inbox.add(&Received{Raw: []byte(`{"http":` + strconv.Itoa(resp.StatusCode) + `}`), Stream: stream})
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				c.add([]byte(data), stream)
			}
		}
		return
	}
	body, err := io.ReadAll(resp.Body)
	if err == nil && len(bytes.TrimSpace(body)) > 0 {
		c.add(body, stream)
	}
}

func (c *modernConn) add(raw []byte, stream string) {
	m, _ := messages.Decode(raw)
	c.inbox.add(&Received{Msg: m, Raw: bytes.TrimSpace(raw), Stream: stream})
}

// Received returns what arrived so far.
func (c *modernConn) Received() []*Received { return c.inbox.snapshot() }

// Wait waits for a message at or after from that satisfies match.
func (c *modernConn) Wait(ctx context.Context, from int, match func(*Received) bool) (*Received, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	return c.inbox.wait(ctx, from, match)
}

// mirroredName is the Mcp-Name header of m: its params' name or uri, in
// the base64 form when it is not plain ASCII.
func mirroredName(m *messages.Message) (string, bool) {
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	switch m.Method {
	case messages.MethodCallTool, messages.MethodGetPrompt:
	case messages.MethodReadResource:
	default:
		return "", false
	}
	if messages.DecodeParams(m.Params, &p) != nil {
		return "", false
	}
	v := p.Name
	if m.Method == messages.MethodReadResource {
		v = p.URI
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?=", true
		}
	}
	return v, true
}
