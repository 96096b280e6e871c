package reftools_test

import (
	"context"
	"encoding/json/jsontext"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
	"github.com/mcp-actors/mcp-actors/reftools"
)

func TestMain(m *testing.M) {
	// Goroutines that run before any test (a library's, started when it
	// is loaded, such as panjf2000/ants's default pool) are not leaks.
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}

// newHarness starts a server with the reference set registered.
func newHarness(t *testing.T) *harness.Harness {
	t.Helper()
	srv := mcpactors.NewServer(messages.Implementation{Name: "reftools-test", Version: "0.0.0"}, nil)
	require.NoError(t, reftools.Register(srv))
	return harness.New(t, srv)
}

// toolCall is the raw wire shape of a tools/call result, for checks that
// need the exact JSON (base64, mimeType, structuredContent).
type toolCall struct {
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Data     string `json:"data"`
		MIMEType string `json:"mimeType"`
		Resource *struct {
			URI      string `json:"uri"`
			MIMEType string `json:"mimeType"`
			Text     string `json:"text"`
			Blob     string `json:"blob"`
		} `json:"resource"`
	} `json:"content"`
	StructuredContent jsontext.Value `json:"structuredContent"`
	IsError           bool           `json:"isError"`
}

// call calls a tool and returns its result, failing on a JSON-RPC error.
func call(t *testing.T, c *harness.Client, name string, args any) *toolCall {
	t.Helper()
	var res toolCall
	require.NoError(t, c.CallResult(context.Background(), messages.MethodCallTool, callParams(name, args, nil), &res))
	return &res
}

// callText calls a tool that answers with one text block and returns it.
func callText(t *testing.T, c *harness.Client, name string, args any) string {
	t.Helper()
	res := call(t, c, name, args)
	require.False(t, res.IsError, "tool %s failed: %+v", name, res.Content)
	require.Len(t, res.Content, 1)
	require.Equal(t, "text", res.Content[0].Type)
	return res.Content[0].Text
}

// callParams builds tools/call params; token, when not nil, becomes the
// progressToken (a raw JSON string or number).
func callParams(name string, args any, token jsontext.Value) map[string]any {
	p := map[string]any{"name": name}
	if args != nil {
		p["arguments"] = args
	}
	if token != nil {
		p["_meta"] = map[string]any{"progressToken": token}
	}
	return p
}

// responseTo waits for the response to the client request id.
func responseTo(t *testing.T, c *harness.Client, id messages.ID) *harness.Received {
	t.Helper()
	r, err := c.WaitResponse(context.Background(), id, 0)
	require.NoError(t, err)
	return r
}

// sentOn returns the notifications of method that arrived on the stream of
// request id, in order.
func sentOn(c *harness.Client, id messages.ID, method string) []*harness.Received {
	var out []*harness.Received
	for _, r := range c.Received() {
		if r.Stream == id.Raw() && r.Msg != nil && r.Msg.Kind() == messages.KindNotification && r.Msg.Method == method {
			out = append(out, r)
		}
	}
	return out
}

func TestRegisterNil(t *testing.T) {
	require.ErrorIs(t, reftools.Register(nil), reftools.ErrNilServer)
}
