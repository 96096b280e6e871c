package httpbench_test

import (
	"bytes"
	"context"
	json "encoding/json/v2"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/internal/sse"
	"github.com/mcp-actors/mcp-actors/messages"
	"github.com/mcp-actors/mcp-actors/reftools"
)

// node is a reference-tools server on a loopback port.
type node struct {
	url    string
	client *http.Client
}

// startNode serves the reference tools with the server's HTTP handler
// on net/http.
func startNode(b *testing.B) *node {
	b.Helper()
	srv := mcpactors.NewServer(messages.Implementation{Name: "bench", Version: "1"}, nil)
	if err := reftools.Register(srv); err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	h, err := srv.HTTPHandler(&mcpactors.HTTPOptions{ListenAddr: ln.Addr().String()})
	if err != nil {
		b.Fatal(err)
	}
	hs := mcpactors.NewHTTPServer(h, nil)
	go func() { _ = hs.Serve(ln) }()
	stop := func() { _ = hs.Close() }
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	b.Cleanup(func() {
		tr.CloseIdleConnections()
		_ = srv.Close(context.Background())
		stop()
	})
	return &node{url: "http://" + ln.Addr().String() + "/mcp", client: &http.Client{Transport: tr}}
}

// post sends one message and returns the status, the session header and
// the body, read to the end.
func (n *node) post(sid string, body []byte) (int, string, []byte, error) {
	req, _ := http.NewRequest(http.MethodPost, n.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", messages.LatestVersion)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := n.client.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), data, err
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"bench","version":"1"}}}`

// connect opens a session: initialize and notifications/initialized.
func (n *node) connect() (string, error) {
	status, sid, body, err := n.post("", []byte(initialize))
	if err != nil || status != http.StatusOK || sid == "" {
		return "", fmt.Errorf("initialize: %d %s %v", status, body, err)
	}
	if status, _, body, err = n.post(sid, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil || status != http.StatusAccepted {
		return "", fmt.Errorf("initialized: %d %s %v", status, body, err)
	}
	return sid, nil
}

// remove deletes a session.
func (n *node) remove(sid string) error {
	req, _ := http.NewRequest(http.MethodDelete, n.url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := n.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("delete: %d", resp.StatusCode)
	}
	return nil
}

// sseEvents reads the events of an SSE stream until the response to
// id arrives, calling onRequest for each server request on the way.
func sseEvents(r io.Reader, onRequest func(*messages.Message) error) (*messages.Message, error) {
	rd := sse.NewReader(r)
	for {
		ev, err := rd.Next()
		if err != nil {
			return nil, err
		}
		if len(ev.Data) == 0 {
			continue
		}
		m, derr := messages.Decode(ev.Data)
		if derr != nil {
			return nil, derr
		}
		switch m.Kind() {
		case messages.KindRequest:
			if err := onRequest(m); err != nil {
				return nil, err
			}
		case messages.KindResponse, messages.KindError:
			return m, nil
		}
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
