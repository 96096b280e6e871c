package main

import (
	"bytes"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/internal/sse"
)

// holdRun is test_hold's answer.
type holdRun struct {
	Node      string `json:"node"`
	Start     int64  `json:"start"`
	End       int64  `json:"end"`
	Cancelled bool   `json:"cancelled"`
}

// holdResult decodes a tools/call result of test_hold.
func holdResult(t *testing.T, result jsontext.Value) holdRun {
	t.Helper()
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(result, &res))
	require.False(t, res.IsError, "%s", result)
	require.Len(t, res.Content, 1)
	var run holdRun
	require.NoError(t, json.Unmarshal([]byte(res.Content[0].Text), &run), "%s", result)
	return run
}

// TestServeHoldNamesTheNode: serve's test_hold reports its --node-id and
// logs the run on the node's log, naming the session by its log ID.
func TestServeHoldNamesTheNode(t *testing.T) {
	sp := startServe(t, nil, "--reference-tools", "--node-id", "held")
	resp := initialize(t, http.DefaultClient, sp.url)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	req, err := http.NewRequest(http.MethodPost, sp.url, strings.NewReader(
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_hold","arguments":{"seconds":0}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var msg struct {
		Result jsontext.Value `json:"result"`
	}
	require.NoError(t, json.Unmarshal(responseBody(t, resp), &msg))
	run := holdResult(t, msg.Result)
	assert.Equal(t, "held", run.Node)
	assert.False(t, run.Cancelled)
	assert.GreaterOrEqual(t, run.End, run.Start)

	line := fmt.Sprintf(`msg="test_hold run" node=held session=%s run.node=held run.start=%d run.end=%d run.cancelled=false`,
		session.LogID(sid), run.Start, run.End)
	require.Eventually(t, func() bool { return strings.Contains(sp.stderr.String(), line) },
		exitTimeout, 20*time.Millisecond, "the run on the node's log (the stderr of a real process): %s\n%s", line, sp.stderr)
	assert.NotContains(t, sp.stderr.String(), sid, "the session ID is not logged at info")
}

// responseBody is the JSON-RPC message of a response: its body, or the
// data of its one SSE event.
func responseBody(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct != "text/event-stream" {
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return b
	}
	rd := sse.NewReader(resp.Body)
	for {
		ev, err := rd.Next()
		require.NoError(t, err, "no message on the stream")
		if data := bytes.TrimSpace(ev.Data); len(data) > 0 {
			return data
		}
	}
}

// TestStdioHoldHasNoNode: stdio has no cluster node: test_hold reports
// none, and logs its run all the same.
func TestStdioHoldHasNoNode(t *testing.T) {
	p := start(t, nil, "stdio", "--reference-tools")
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_hold","arguments":{"seconds":0}}}`)
	run := holdResult(t, p.next()["result"])
	assert.Empty(t, run.Node)
	assert.False(t, run.Cancelled)
	line := fmt.Sprintf(`run.node="" run.start=%d run.end=%d run.cancelled=false`, run.Start, run.End)
	require.Eventually(t, func() bool { return strings.Contains(p.stderr.String(), line) },
		exitTimeout, 20*time.Millisecond, "the run on stderr: %s\n%s", line, p.stderr)
	require.NoError(t, p.stdin.Close())
	assert.Equal(t, 0, p.wait(), "stderr:\n%s", p.stderr)
}
