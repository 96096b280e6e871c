package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRoundRobin checks that -urls sends consecutive requests of any method
// to the nodes in turn, each at the node's own path.
func TestRoundRobin(t *testing.T) {
	var nodes []string
	for _, name := range []string{"a", "b", "c"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, name+" "+r.Method+" "+r.URL.Path)
		}))
		t.Cleanup(srv.Close)
		nodes = append(nodes, srv.URL+"/mcp-"+name)
	}
	hc := newHTTPClient(nodes, 4)
	var got []string
	for _, method := range []string{"POST", "GET", "DELETE", "POST"} {
		req, err := http.NewRequest(method, nodes[0], strings.NewReader(""))
		if err != nil {
			t.Fatal(err)
		}
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		got = append(got, string(b))
	}
	want := []string{"a POST /mcp-a", "b GET /mcp-b", "c DELETE /mcp-c", "a POST /mcp-a"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}
