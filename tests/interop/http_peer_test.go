package interop_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startHTTP is the starter over Streamable HTTP: a fresh `mcp-actors serve`
// per test, and a client on mcp.StreamableClientTransport.
func startHTTP(t *testing.T, opts *mcp.ClientOptions, roots ...*mcp.Root) *peer {
	t.Helper()
	p, _ := connectHTTP(t, startServer(t), nil, opts, roots...)
	return p
}

// connectHTTP connects an SDK client with opts and roots to srv over
// Streamable HTTP. Its requests go through wrap(the default transport) when
// wrap is set, then through a recorder whose log is returned. Closing the
// session must send DELETE, which the server answers with 204, and leave
// the server serving other sessions but not this one.
func connectHTTP(t *testing.T, srv *httpServer, wrap func(http.RoundTripper) http.RoundTripper, opts *mcp.ClientOptions, roots ...*mcp.Root) (*peer, *httpLog) {
	t.Helper()
	base := http.DefaultTransport.(*http.Transport).Clone()
	var rt http.RoundTripper = base
	if wrap != nil {
		rt = wrap(rt)
	}
	log := &httpLog{}
	p := newPeer(t, opts, roots)
	client := &http.Client{Transport: &recordingRoundTripper{inner: rt, log: log, wire: p.wire}}
	p.logs = append(p.logs, namedLog{"HTTP transcript", log})
	p.end = func(cs *mcp.ClientSession) {
		defer base.CloseIdleConnections()
		if cs == nil {
			return
		}
		id := cs.ID()
		require.NotEmpty(t, id, "the server gave no Mcp-Session-Id")
		assert.NoError(t, cs.Close(), "closing the session")
		deleted, listened := false, false
		for i, x := range log.snapshot() {
			if i == 0 {
				continue // initialize
			}
			// Every later request names the session and the version.
			assert.Equal(t, id, x.sessionID, "Mcp-Session-Id of %s #%d", x.method, i)
			assert.Equal(t, protocolVersion, x.version, "Mcp-Protocol-Version of %s #%d", x.method, i)
			switch {
			case x.method == http.MethodDelete:
				deleted = true
				assert.Equal(t, http.StatusNoContent, x.status, "status of DELETE (%v)", x.err)
			case x.method == http.MethodGet && x.lastEventID == "":
				listened = true
				assert.Equal(t, http.StatusOK, x.status, "status of the standalone GET (%v)", x.err)
				assert.Equal(t, "text/event-stream", x.contentType, "the standalone GET")
			}
		}
		assert.True(t, deleted, "closing the session sent no DELETE")
		assert.True(t, listened, "the SDK opened no standalone GET stream")
		srv.assertServing(t, id)
	}
	p.connect(&mcp.StreamableClientTransport{Endpoint: srv.url, HTTPClient: client})
	return p, log
}

// assertServing checks that the session gone was deleted and that the
// server still serves new sessions: a fresh client connects, pings and
// closes.
func (s *httpServer) assertServing(t *testing.T, gone string) {
	t.Helper()
	// Not t.Context(): this runs in cleanup, after it is cancelled.
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: base}

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	req.Header.Set("Mcp-Session-Id", gone)
	resp, err := client.Do(req)
	require.NoError(t, err, "a ping on the deleted session")
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "a ping on the deleted session")

	c := mcp.NewClient(&mcp.Implementation{Name: "mcp-actors-interop-after", Version: "0.0.1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: client}, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	require.NoError(t, err, "a new session after closing one")
	assert.NoError(t, cs.Ping(ctx, nil), "ping on a new session")
	assert.NoError(t, cs.Close(), "closing the new session")
}
