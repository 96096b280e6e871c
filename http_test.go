package mcpactors_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestHTTPHandlerSafeDefaults checks that a handler built with no options
// refuses foreign Host and Origin headers (DNS rebinding) rather than
// accept everything: without a listen address it treats the server as
// reached on loopback.
func TestHTTPHandlerSafeDefaults(t *testing.T) {
	srv := mcpactors.NewServer(messages.Implementation{Name: "defaults", Version: "1"}, nil)
	t.Cleanup(func() { _ = srv.Close(t.Context()) })
	h, err := srv.HTTPHandler(nil)
	require.NoError(t, err)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	for _, tc := range []struct {
		host, origin string
		want         int
	}{
		{"evil.example", "", http.StatusForbidden},
		{"127.0.0.1:8080", "http://evil.example", http.StatusForbidden},
		{"localhost:8080", "", http.StatusOK},
		{"127.0.0.1:8080", "http://localhost:3000", http.StatusOK},
	} {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Host = tc.host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		assert.Equal(t, tc.want, rec.Code, "Host %q Origin %q: %s", tc.host, tc.origin, rec.Body)
	}
}

// TestHTTPHandlerRefusesBadOptions checks that options that cannot work
// are refused with a reason, not served.
func TestHTTPHandlerRefusesBadOptions(t *testing.T) {
	srv := mcpactors.NewServer(messages.Implementation{Name: "options", Version: "1"}, nil)
	t.Cleanup(func() { _ = srv.Close(t.Context()) })
	for _, o := range []*mcpactors.HTTPOptions{
		{Path: "mcp"},
		{MaxBodyBytes: -1},
		{WriteTimeout: -1},
		{TLSCertFile: "cert.pem"},
	} {
		_, err := srv.HTTPHandler(o)
		assert.True(t, errors.Is(err, mcpactors.ErrInvalidOptions), "%+v: %v", o, err)
	}
}
