package reftools_test

import (
	"context"
	json "encoding/json/v2"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
)

// URL elicitation, one API in both eras: the handler calls ElicitURL and
// goes on once the page's callback (here, the test) completes it.

// urlServer serves a tool that elicits a URL, and one that answers
// URLElicitationRequired (-32042) until the step is done.
func urlServer(t *testing.T, o *mcpactors.Options, done *atomic.Bool) (string, *mcpactors.Server) {
	t.Helper()
	return wireServerOf(t, o, func(srv *mcpactors.Server) { addURLTools(t, srv, done) }, false)
}

// addURLTools adds urlServer's tools.
func addURLTools(t testing.TB, srv *mcpactors.Server, done *atomic.Bool) {
	noArgs := []byte(`{"type":"object","properties":{}}`)
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "connect_account", Description: "sends the user to a page", InputSchema: noArgs},
		func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			action, err := sess.ElicitURL(ctx, "Connect your account", func(id string) string { return "https://example.test/connect?id=" + id })
			if err != nil {
				return nil, err
			}
			return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: "connected: " + string(action)}}}, nil
		}))
	require.NoError(t, srv.AddTool(&messages.Tool{Name: "needs_account", Description: "-32042 until connected", InputSchema: noArgs},
		func(context.Context, *mcpactors.Session, *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			if done.Load() {
				return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: "account ready"}}}, nil
			}
			data, _ := json.Marshal(&messages.URLElicitationRequiredData{Elicitations: []*messages.ElicitParams{{
				Mode: messages.ElicitModeURL, Message: "Connect first", URL: "https://example.test/connect?id=fixed", ElicitationID: "fixed"}}})
			return nil, &messages.Error{Code: messages.CodeURLElicitationRequired, Message: "connect your account first", Data: data}
		}))
}

// urlClient connects a Go SDK client declaring URL elicitation; answer
// runs for each URL elicitation (with its ID, from the URL) before the
// client accepts it.
func urlClient(t *testing.T, endpoint, version string, answer func(id string), completed *atomic.Int64) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "url-client", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			u, err := url.Parse(r.Params.URL)
			if err != nil || r.Params.Mode != "url" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			answer(u.Query().Get("id"))
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
		ElicitationCompleteHandler: func(context.Context, *mcp.ElicitationCompleteNotificationRequest) { completed.Add(1) },
	})
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func callFor(t *testing.T, cs *mcp.ClientSession, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name})
	require.NoError(t, err)
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestElicitURLBothEras(t *testing.T) {
	for _, version := range []string{"", messages.Version20251125} {
		t.Run("version "+version, func(t *testing.T) {
			var done atomic.Bool
			endpoint, srv := urlServer(t, nil, &done)
			var asked, completed atomic.Int64
			cs := urlClient(t, endpoint, version, func(id string) {
				asked.Add(1)
				// The page's callback: the step is done.
				require.NoError(t, srv.CompleteElicitation(t.Context(), "", id))
			}, &completed)
			assert.Equal(t, "connected: accept", callFor(t, cs, "connect_account"))
			assert.EqualValues(t, 1, asked.Load(), "asked once")
			if version != "" {
				assert.Eventually(t, func() bool { return completed.Load() == 1 }, 5*time.Second, 5*time.Millisecond,
					"a legacy client is told notifications/elicitation/complete")
			}
		})
	}
}

// TestElicitURLAskedAgain: a modern retry that comes before the step is
// done waits (URLElicitationWait), then the client is asked again.
func TestElicitURLAskedAgain(t *testing.T) {
	var done atomic.Bool
	endpoint, srv := urlServer(t, &mcpactors.Options{URLElicitationWait: 20 * time.Millisecond}, &done)
	var asked, completed atomic.Int64
	cs := urlClient(t, endpoint, "", func(id string) {
		if asked.Add(1) == 2 {
			require.NoError(t, srv.CompleteElicitation(t.Context(), "", id))
		}
	}, &completed)
	assert.Equal(t, "connected: accept", callFor(t, cs, "connect_account"))
	assert.EqualValues(t, 2, asked.Load(), "asked again after the wait, same ID")
}

// TestURLElicitationRequiredModern: a handler's -32042 reaches a modern
// client as input_required with the same URL elicitation; its retry runs
// the handler again.
func TestURLElicitationRequiredModern(t *testing.T) {
	var done atomic.Bool
	endpoint, _ := urlServer(t, nil, &done)
	var asked, completed atomic.Int64
	cs := urlClient(t, endpoint, "", func(id string) {
		asked.Add(1)
		done.Store(true) // the user connected their account on the page
	}, &completed)
	assert.Equal(t, "account ready", callFor(t, cs, "needs_account"))
	assert.EqualValues(t, 1, asked.Load())
}
