package harness

import (
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
	"github.com/mcp-actors/mcp-actors/internal/sse"
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
// In a cluster's scenarios (Cluster.RunModernScenarios) each POST goes to
// the node the last "! node N" line named (the first until then).

// RunModernScenarios runs every file matching pattern as a modern
// scenario, each a subtest against a fresh server from newServer; with
// -update it rewrites them.
func RunModernScenarios(t *testing.T, pattern string, newServer func(testing.TB) *mcpactors.Server) {
	t.Helper()
	RunModernScenariosWith(t, pattern, newServer, nil)
}

// RunModernScenariosWith is RunModernScenarios with the test's actions.
func RunModernScenariosWith(t *testing.T, pattern string, newServer func(testing.TB) *mcpactors.Server, acts Actions) {
	t.Helper()
	eachScenario(t, pattern, func(t *testing.T, file string) { runModern(t, file, []*mcpactors.Server{newServer(t)}, acts) })
}

// RunModernScenario plays one modern scenario file against srv over HTTP;
// with -update it rewrites the file.
func RunModernScenario(t *testing.T, file string, srv *mcpactors.Server) {
	t.Helper()
	runModern(t, file, []*mcpactors.Server{srv}, nil)
}

// RunModernScenarios plays every modern scenario file matching pattern
// against the cluster over HTTP, each node behind an HTTP server of its
// own; "! node N" lines choose where the POSTs go. With -update it
// rewrites them.
func (c *Cluster) RunModernScenarios(t *testing.T, pattern string, acts Actions) {
	t.Helper()
	eachScenario(t, pattern, func(t *testing.T, file string) { runModern(t, file, c.Servers, acts) })
}

// runModern plays file against servers (one, or a cluster's nodes).
func runModern(t *testing.T, file string, servers []*mcpactors.Server, acts Actions) {
	t.Helper()
	c := newModernConn(t, servers)
	if err := runScenario(t, c, file, *update, &actor{servers: servers, acts: acts}); err != nil {
		t.Fatalf("harness: %v", err)
	}
}

// modernConn is a modern scenario's client: POSTs, and what they answer.
type modernConn struct {
	urls    []string // each server's endpoint
	node    int      // where the next POST goes
	inbox   *inbox
	ctx     context.Context
	timeout time.Duration
	headers map[string]string // for the next POST ("" removes)
	posts   sync.WaitGroup
	errs    chan error
}

func newModernConn(t *testing.T, servers []*mcpactors.Server) *modernConn {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &modernConn{inbox: newInbox(), ctx: ctx, timeout: DefaultTimeout, errs: make(chan error, 64)}
	var hss []*httptest.Server
	t.Cleanup(func() {
		cancel() // ends the streams still open (listens)
		c.posts.Wait()
		for _, hs := range hss {
			hs.Close()
		}
		c.inbox.close()
		if len(servers) == 1 { // a cluster's servers are the cluster's to close
			cctx, stop := context.WithTimeout(context.Background(), DefaultTimeout)
			defer stop()
			_ = servers[0].Close(cctx)
		}
	})
	for _, srv := range servers {
		h, err := srv.HTTPHandler(nil)
		if err != nil {
			t.Fatalf("harness: %v", err)
		}
		hs := httptest.NewServer(h)
		hss = append(hss, hs)
		c.urls = append(c.urls, hs.URL+"/mcp")
	}
	return c
}

// setNode sends the next POSTs to server i.
func (c *modernConn) setNode(i int) { c.node = i }

// setHeaders sets the header changes of the next POST.
func (c *modernConn) setHeaders(h map[string]string) { c.headers = h }

// SendRaw POSTs data with the headers a modern client sends, changed as
// the transcript says, and collects the answer on a goroutine of its own.
func (c *modernConn) SendRaw(data []byte) error {
	m, derr := messages.Decode(data)
	if derr != nil {
		return derr
	}
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, c.urls[c.node], bytes.NewReader(data))
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
		_ = sse.Each(resp.Body, func(ev sse.Event) { // a broken stream ends what it adds
			if ev.HasData {
				c.add(ev.Data, stream)
			}
		})
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
