package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// otlpReceiver is an OTLP/HTTP trace endpoint that keeps what it gets.
type otlpReceiver struct {
	mu     sync.Mutex
	bodies [][]byte
	types  []string
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	if req.URL.Path == "/v1/traces" {
		r.bodies = append(r.bodies, b)
		r.types = append(r.types, req.Header.Get("Content-Type"))
	}
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
}

func (r *otlpReceiver) got() (int, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var all strings.Builder
	for _, b := range r.bodies {
		all.Write(b)
	}
	return len(r.bodies), all.String()
}

// TestServeExportsTraces: with OTEL_EXPORTER_OTLP_ENDPOINT set, serve
// sends its spans over OTLP/HTTP; the spans of an initialize and a
// tools/call arrive, named, with the node and the service.
func TestServeExportsTraces(t *testing.T) {
	recv := &otlpReceiver{}
	otlp := httptest.NewServer(recv)
	defer otlp.Close()
	sp := startServe(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + otlp.URL, "OTEL_BSP_SCHEDULE_DELAY=50"},
		"--reference-tools", "--node-id", "traced")
	assert.Contains(t, sp.stderr.String(), "tracing=true")
	resp := initialize(t, http.DefaultClient, sp.url)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	req, err := http.NewRequest(http.MethodPost, sp.url, strings.NewReader(
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Eventually(t, func() bool {
		_, all := recv.got()
		return strings.Contains(all, "mcp.handle tools/call") && strings.Contains(all, "mcp.request tools/call")
	}, exitTimeout, 20*time.Millisecond, "the spans reach the OTLP endpoint")
	_, all := recv.got()
	assert.Contains(t, all, "mcp-actors", "service.name")
	assert.Contains(t, all, "traced", "the node")
	recv.mu.Lock()
	assert.Equal(t, "application/x-protobuf", recv.types[0])
	recv.mu.Unlock()
}

// TestServeTracingOffByDefault: without OTEL_* variables serve exports
// nothing and says tracing is off.
func TestServeTracingOffByDefault(t *testing.T) {
	sp := startServe(t, nil)
	assert.Contains(t, sp.stderr.String(), "tracing=false")
}

// TestServeRefusesOtherTraceExporters: an exporter or protocol this build
// lacks is a configuration error.
func TestServeRefusesOtherTraceExporters(t *testing.T) {
	for _, env := range []string{"OTEL_TRACES_EXPORTER=zipkin", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"} {
		// The endpoint cannot matter: the start fails first.
		code, _, stderr := runBinEnv(t, []string{env, "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1"}, "serve", "--listen", "127.0.0.1:0")
		assert.Equal(t, exitConfig, code, "%s: %s", env, stderr)
		assert.Contains(t, stderr, strings.SplitN(env, "=", 2)[0])
	}
}
