package transport_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/messages"
	"github.com/mcp-actors/mcp-actors/reftools"
)

// The Streamable HTTP test rig: a server on a real loopback listener
// (httpFixture, here), a client speaking the transport over net/http
// (httpClient, http_client_test.go) and an incremental SSE reader
// (sseReader, http_sse_test.go).

// Media types and the Accept header a conforming client sends.
const (
	mtJSON      = "application/json"
	mtSSE       = "text/event-stream"
	acceptBoth  = mtJSON + ", " + mtSSE
	headerLast  = "Last-Event-ID"
	headerRetry = "Retry-After"
)

// The protocols a fixture speaks (httpSetup.Protocol).
const (
	protoHTTP1 = "HTTP/1.1"     // plain HTTP/1.1
	protoH2    = "HTTPS+HTTP/2" // HTTP/2 over TLS (httptest's certificate)
	protoH2C   = "h2c"          // HTTP/2 without TLS, by prior knowledge
)

// httpSetup configures an httpFixture. The zero value serves the defaults.
type httpSetup struct {
	// HTTP are the transport options. ListenAddr defaults to the fixture's
	// loopback address, Observer to the fixture's observer.
	HTTP transport.HTTPOptions
	// Server are the mcpactors options (session limits).
	Server mcpactors.Options
	// Configure, when set, may change the http.Server NewHTTPServer built
	// before it serves.
	Configure func(*http.Server)
	// Protocol is what the server speaks and the fixture's clients use:
	// protoHTTP1 (the default), protoH2 or protoH2C.
	Protocol string
	// Router, when set, wraps the server's router for the handler.
	Router func(router.Router) router.Router
}

// httpFixture is a server with the reference tools and a few of its own,
// served on a loopback port by HTTPHandler on NewHTTPServer. Everything is
// shut down when the test ends.
type httpFixture struct {
	srv  *mcpactors.Server
	h    *transport.HTTPHandler
	hs   *http.Server
	addr string // host:port of the listener
	url  string
	port string
	obs  *httpObserver
	// dialed counts the connections accepted from the network.
	dialed *atomic.Int64
	// proto is setup.Protocol; tlsClient, for protoH2, trusts the
	// server's certificate (httptest's).
	proto     string
	tlsClient *http.Client
	// shutdown shuts the http.Server down once, bounded by its ctx, and
	// waits for it to stop serving; it reports what Shutdown returned.
	shutdown func(ctx context.Context) error

	// gateStarted receives the request ID when "gate" runs; gate releases
	// it (close or send); gateEnded receives ctx.Err() when "gate" was
	// cancelled instead.
	gateStarted chan messages.ID
	gate        chan struct{}
	gateEnded   chan error
	// askErr receives the error "ask" got from its elicitation (nil on an
	// answer).
	askErr chan error
	// stepsGate releases "steps" after its first progress report;
	// stepsDone receives just before it returns.
	stepsGate chan struct{}
	stepsDone chan struct{}
	// floodDone receives when "flood" has sent its progress reports.
	floodDone chan struct{}
}

// newHTTPFixture starts a server as setup says (nil: defaults).
func newHTTPFixture(t *testing.T, setup *httpSetup) *httpFixture {
	t.Helper()
	if setup == nil {
		setup = &httpSetup{}
	}
	srvOpts := setup.Server
	f := &httpFixture{
		srv:         mcpactors.NewServer(messages.Implementation{Name: "http-test", Version: "1"}, &srvOpts),
		obs:         newHTTPObserver(),
		gateStarted: make(chan messages.ID, 64),
		gate:        make(chan struct{}, 64),
		gateEnded:   make(chan error, 64),
		askErr:      make(chan error, 64),
		stepsGate:   make(chan struct{}, 64),
		stepsDone:   make(chan struct{}, 64),
		floodDone:   make(chan struct{}, 64),
	}
	require.NoError(t, reftools.Register(f.srv))
	f.addTools(t)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f.addr = ln.Addr().String()
	_, f.port, _ = net.SplitHostPort(f.addr)
	f.url = "http://" + f.addr + "/mcp"
	opts := setup.HTTP
	if opts.ListenAddr == "" {
		opts.ListenAddr = f.addr
	}
	if opts.Observer == nil {
		opts.Observer = f.obs
	}
	f.dialed = new(atomic.Int64)
	ln = countingListener{ln, f.dialed}
	rt := access.Router(f.srv)
	if setup.Router != nil {
		rt = setup.Router(rt)
	}
	h := transport.NewHTTPHandler(rt, &opts)
	f.h = h
	f.hs = transport.NewHTTPServer(h, nil)
	f.proto = setup.Protocol
	if f.proto == "" {
		f.proto = protoHTTP1
	}
	f.hs.Protocols = new(http.Protocols)
	f.hs.Protocols.SetHTTP1(true)
	if f.proto == protoH2C {
		f.hs.Protocols.SetUnencryptedHTTP2(true)
	}
	if setup.Configure != nil {
		setup.Configure(f.hs)
	}
	var stopped func() error // waits for the server to stop serving
	if f.proto == protoH2 {
		f.hs.Protocols.SetHTTP2(true)
		ts := httptest.NewUnstartedServer(h)
		ts.Listener, ts.Config, ts.EnableHTTP2 = ln, f.hs, true
		ts.StartTLS()
		f.url = ts.URL + "/mcp"
		f.tlsClient = ts.Client()
		stopped = func() error { ts.Close(); return http.ErrServerClosed }
	} else {
		served := make(chan error, 1)
		go func() { served <- f.hs.Serve(ln) }()
		stopped = func() error { return recv(t, served, "Serve to return") }
	}
	var once sync.Once
	var shutdownErr error
	f.shutdown = func(ctx context.Context) error {
		once.Do(func() {
			if shutdownErr = f.hs.Shutdown(ctx); shutdownErr != nil {
				_ = f.hs.Close()
			}
			assert.ErrorIs(t, stopped(), http.ErrServerClosed)
		})
		return shutdownErr
	}

	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), watchdog)
		defer cancel()
		// Sessions first: that closes their streams, so the handlers
		// serving them return and Shutdown finds the connections idle.
		assert.NoError(t, f.srv.Close(ctx), "closing the server")
		_ = f.shutdown(ctx)
	})
	return f
}

// addTools adds the fixture's own tools:
//
//   - "gate" waits until f.gate releases it ("opened") or its ctx ends;
//   - "ask" elicits a name from the client and answers "name=<name>";
//   - "ask-aside" does the same from a goroutine of its own;
//   - "steps" reports progress 1 of 3, waits for f.stepsGate, reports 2
//     and 3, and answers "stepped";
//   - "flood" reports progress floodCount times with a message of
//     floodSize bytes, then answers "flooded";
//   - "boom" panics with internal detail that must not reach the client.
func (f *httpFixture) addTools(t *testing.T) {
	t.Helper()
	require.NoError(t, f.srv.AddTool(&messages.Tool{Name: "gate"},
		func(ctx context.Context, s *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			f.gateStarted <- s.RequestID()
			select {
			case <-f.gate:
				return text("opened"), nil
			case <-ctx.Done():
				f.gateEnded <- ctx.Err()
				return nil, ctx.Err()
			}
		}))
	require.NoError(t, f.srv.AddTool(&messages.Tool{Name: "ask"},
		func(ctx context.Context, s *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			var answer struct {
				Name string `json:"name"`
			}
			_, err := s.Elicit(ctx, "name?", &answer)
			f.askErr <- err
			if err != nil {
				return nil, err
			}
			return text("name=" + answer.Name), nil
		}))
	require.NoError(t, f.srv.AddTool(&messages.Tool{Name: "ask-aside"},
		func(ctx context.Context, s *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			var answer struct {
				Name string `json:"name"`
			}
			asked := make(chan error, 1)
			go func() {
				_, err := s.Elicit(ctx, "name?", &answer)
				asked <- err
			}()
			if err := <-asked; err != nil {
				return nil, err
			}
			return text("name=" + answer.Name), nil
		}))
	require.NoError(t, f.srv.AddTool(&messages.Tool{Name: "steps"},
		func(ctx context.Context, s *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			if err := s.Progress(ctx, 1, 3, "one"); err != nil {
				return nil, err
			}
			select {
			case <-f.stepsGate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			for _, p := range []float64{2, 3} {
				if err := s.Progress(ctx, p, 3, ""); err != nil {
					return nil, err
				}
			}
			f.stepsDone <- struct{}{}
			return text("stepped"), nil
		}))
	require.NoError(t, f.srv.AddTool(&messages.Tool{Name: "flood"},
		func(ctx context.Context, s *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			big := strings.Repeat("x", floodSize)
			for i := range floodCount {
				if err := s.Progress(ctx, float64(i+1), floodCount, big); err != nil {
					break // the stream is gone: the rest would go nowhere
				}
			}
			f.floodDone <- struct{}{}
			return text("flooded"), nil
		}))
	require.NoError(t, f.srv.AddTool(&messages.Tool{Name: "boom"},
		func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			panic("boom: internal detail at /srv/secret/handler.go:42")
		}))
}

// ref returns the session actor behind id.
func (f *httpFixture) ref(t *testing.T, id string) *session.Ref {
	t.Helper()
	ref, ok := access.Session(f.srv, id)
	require.True(t, ok, "session %s is not live", id)
	return ref
}

// httpObserver counts finished HTTP requests per method, so that a test can
// wait until the server has finished serving one (and so has told the
// session whatever the handler tells it on the way out).
type httpObserver struct {
	mu       sync.Mutex
	finished map[string]int
	changed  chan struct{} // closed and replaced on every change
}

func newHTTPObserver() *httpObserver {
	return &httpObserver{finished: map[string]int{}, changed: make(chan struct{})}
}

func (o *httpObserver) HTTPRequest(method string, _ int, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.finished[method]++
	close(o.changed)
	o.changed = make(chan struct{})
}

func (o *httpObserver) StreamEvent(bool) {}

// count returns how many requests with method have finished.
func (o *httpObserver) count(method string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.finished[method]
}

// waitCount waits until n requests with method have finished.
func (o *httpObserver) waitCount(t *testing.T, method string, n int) {
	t.Helper()
	deadline := time.NewTimer(watchdog)
	defer deadline.Stop()
	for {
		o.mu.Lock()
		got, changed := o.finished[method], o.changed
		o.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			require.FailNowf(t, "request not finished", "%d %s requests finished, want %d", got, method, n)
		}
	}
}

// bearerAuth accepts "Authorization: Bearer <token>" for the tokens it
// maps to principals, through transport.BearerTokens.
type bearerAuth map[string]string

// errAuthInternal is what a failing authenticator says internally; none of
// it may reach the client.
var errAuthInternal = errors.New("token store at /srv/auth/store.go:17 timed out: panic recovered")

func (a bearerAuth) Authenticate(ctx context.Context, h transport.RequestHeaders) (string, error) {
	p, err := transport.BearerTokens(func(_ context.Context, tok string) (string, error) {
		p, ok := a[tok]
		if !ok {
			return "", fmt.Errorf("unknown token %q: %w", tok, errAuthInternal)
		}
		return p, nil
	}).Authenticate(ctx, h)
	if err != nil && !errors.Is(err, errAuthInternal) {
		err = fmt.Errorf("%w: %w", err, errAuthInternal)
	}
	return p, err
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}
