package harness_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/messages"
)

func TestConnect(t *testing.T) {
	h := harness.New(t, newTestServer(t))

	t.Run("defaults", func(t *testing.T) {
		c := h.Connect()
		require.NotNil(t, c.InitializeResult)
		assert.Equal(t, messages.LatestVersion, c.InitializeResult.ProtocolVersion)
		assert.Equal(t, "harness-test", c.InitializeResult.ServerInfo.Name)
		assert.NotEmpty(t, c.ID())
		ref, ok := access.Session(h.Server, c.ID())
		require.True(t, ok)
		assert.Equal(t, c.ID(), ref.ID())
	})

	t.Run("an older version", func(t *testing.T) {
		c := h.Connect(harness.WithProtocolVersion(messages.Version20250618))
		assert.Equal(t, messages.Version20250618, c.InitializeResult.ProtocolVersion)
	})

	t.Run("Open sends nothing", func(t *testing.T) {
		c := h.Open()
		assert.Nil(t, c.InitializeResult)
		assert.Empty(t, c.Received())
		require.NoError(t, c.Initialize(context.Background()))
		assert.NotNil(t, c.InitializeResult)
	})

	t.Run("a nil server gets an empty one", func(t *testing.T) {
		h := harness.New(t, nil)
		c := h.Connect()
		var res messages.ListToolsResult
		require.NoError(t, c.CallResult(context.Background(), messages.MethodListTools, nil, &res))
		assert.Empty(t, res.Tools)
	})
}

func TestCall(t *testing.T) {
	ctx := context.Background()
	c := harness.New(t, newTestServer(t)).Connect()

	t.Run("Call returns the response message", func(t *testing.T) {
		m, err := c.Call(ctx, messages.MethodCallTool, callTool("echo", map[string]string{"text": "hi"}))
		require.NoError(t, err)
		assert.Equal(t, messages.KindResponse, m.Kind())
		got, isErr := toolText(t, m)
		assert.Equal(t, "hi", got)
		assert.False(t, isErr)
	})

	t.Run("Call returns a JSON-RPC error as a message", func(t *testing.T) {
		m, err := c.Call(ctx, "no/such_method", nil)
		require.NoError(t, err, "a JSON-RPC error is not a harness failure")
		require.NotNil(t, m.Error)
		assert.ErrorIs(t, m.Error, messages.ErrMethodNotFound)
	})

	t.Run("CallResult decodes the result", func(t *testing.T) {
		var res messages.CallToolResult
		require.NoError(t, c.CallResult(ctx, messages.MethodCallTool, callTool("echo", map[string]string{"text": "yo"}), &res))
		require.Len(t, res.Content, 1)
		assert.Equal(t, "yo", res.Content[0].(*messages.TextContent).Text)
	})

	t.Run("CallResult with no out", func(t *testing.T) {
		require.NoError(t, c.CallResult(ctx, messages.MethodPing, nil, nil))
	})

	t.Run("CallResult returns a JSON-RPC error as *messages.Error", func(t *testing.T) {
		err := c.CallResult(ctx, messages.MethodCallTool, callTool("no_such_tool", nil), nil)
		require.ErrorIs(t, err, messages.ErrInvalidParams)
		var wire *messages.Error
		require.ErrorAs(t, err, &wire)
		assert.Contains(t, wire.Message, "no_such_tool")
	})

	t.Run("every request gets its own ID and stream", func(t *testing.T) {
		from := len(c.Received())
		_, err := c.Call(ctx, messages.MethodPing, nil)
		require.NoError(t, err)
		_, err = c.Call(ctx, messages.MethodPing, nil)
		require.NoError(t, err)
		got := c.Received()[from:]
		require.Len(t, got, 2)
		assert.NotEqual(t, got[0].Msg.ID, got[1].Msg.ID)
		for i, r := range got {
			assert.Equal(t, r.Msg.ID.Raw(), r.Stream, "a response comes on its request's stream")
			assert.Equal(t, from+i, r.Seq)
			assert.JSONEq(t, `{}`, string(r.Msg.Result))
		}
	})
}

func TestSendRequestAndNotifications(t *testing.T) {
	ctx := context.Background()
	c := harness.New(t, newTestServer(t)).Connect()

	id := messages.StringID("report-1")
	from := len(c.Received())
	require.NoError(t, c.SendRequest(id, messages.MethodCallTool, map[string]any{
		"name":  "report",
		"_meta": map[string]any{"progressToken": "tok"},
	}))

	logMsg, err := c.WaitNotification(ctx, messages.MethodLogMessage, from)
	require.NoError(t, err)
	assert.Equal(t, id.Raw(), logMsg.Stream, "a call's notifications come on its stream")
	assert.JSONEq(t, `{"level":"info","logger":"test","data":"working"}`, string(logMsg.Msg.Params))

	progress, err := c.WaitNotification(ctx, messages.MethodProgress, logMsg.Seq+1)
	require.NoError(t, err)
	assert.JSONEq(t, `{"progressToken":"tok","progress":1,"total":2,"message":"half"}`, string(progress.Msg.Params))

	res, err := c.WaitResponse(ctx, id, progress.Seq+1)
	require.NoError(t, err)
	got, _ := toolText(t, res.Msg)
	assert.Equal(t, "reported", got)

	assert.Len(t, c.Notifications(messages.MethodLogMessage), 1)
	assert.Len(t, c.Notifications(messages.MethodProgress), 1)
	assert.Len(t, c.Notifications(""), 2)
	assert.Empty(t, c.Notifications(messages.MethodToolsListChanged))

	t.Run("a broadcast comes on the standalone stream", func(t *testing.T) {
		from := len(c.Received())
		m, err := c.Call(ctx, messages.MethodCallTool, callTool("add_tool", nil))
		require.NoError(t, err)
		got, _ := toolText(t, m)
		assert.Equal(t, "added", got)
		n, err := c.WaitNotification(ctx, messages.MethodToolsListChanged, from)
		require.NoError(t, err)
		assert.Equal(t, "", n.Stream)
	})

	t.Run("Wait with a custom match", func(t *testing.T) {
		r, err := c.Wait(ctx, 0, func(r *harness.Received) bool { return r.Msg != nil && r.Msg.ID == id })
		require.NoError(t, err)
		assert.Equal(t, res.Seq, r.Seq)
	})
}

func TestCancel(t *testing.T) {
	ctx := context.Background()
	c := harness.New(t, newTestServer(t)).Connect()

	id := messages.IntID(100)
	require.NoError(t, c.SendRequest(id, messages.MethodCallTool, callTool("block", nil)))
	c.Cancel(id, "enough")
	from := len(c.Received())
	_, err := c.Call(ctx, messages.MethodPing, nil)
	require.NoError(t, err)
	// A short call after the ping: by its answer the cancelled handler has
	// returned, and nothing was sent for it.
	_, err = c.Call(ctx, messages.MethodCallTool, callTool("echo", map[string]string{"text": "after"}))
	require.NoError(t, err)
	for _, r := range c.Received()[from:] {
		assert.NotEqual(t, id, r.Msg.ID, "a cancelled request gets no response: %s", r.Raw)
	}
}

func TestNotify(t *testing.T) {
	ctx := context.Background()
	c := harness.New(t, newTestServer(t)).Connect()
	// An unknown notification is ignored; the session goes on.
	c.Notify("notifications/no_such_thing", map[string]any{"x": 1})
	c.Notify(messages.MethodInitialized, nil) // a second initialized is harmless
	_, err := c.Call(ctx, messages.MethodPing, nil)
	require.NoError(t, err)
	assert.Empty(t, c.Notifications(""))
}

func TestRespondByHand(t *testing.T) {
	ctx := context.Background()
	h := harness.New(t, newTestServer(t))
	c := h.Connect(harness.WithCapabilities(messages.ClientCapabilities{
		Sampling:    &messages.SamplingCapabilities{},
		Elicitation: &messages.ElicitationCapabilities{Form: &messages.Empty{}},
	}))

	t.Run("Respond", func(t *testing.T) {
		id := messages.IntID(50)
		from := len(c.Received())
		require.NoError(t, c.SendRequest(id, messages.MethodCallTool, callTool("ask_llm", map[string]string{"prompt": "2+2?"})))
		req, err := c.WaitRequest(ctx, messages.MethodCreateMessage, from)
		require.NoError(t, err)
		assert.Equal(t, id.Raw(), req.Stream, "a server request comes on the stream of the call that made it")
		var p messages.CreateMessageParams
		require.NoError(t, json.Unmarshal(req.Msg.Params, &p))
		assert.Equal(t, 10, int(p.MaxTokens))
		require.NoError(t, c.Respond(req.Msg.ID, &messages.CreateMessageResult{
			Role: messages.RoleAssistant, Model: "m", Content: messages.ContentList{&messages.TextContent{Text: "4"}},
		}))
		res, err := c.WaitResponse(ctx, id, req.Seq+1)
		require.NoError(t, err)
		got, isErr := toolText(t, res.Msg)
		assert.Equal(t, "m: 4", got)
		assert.False(t, isErr)
	})

	t.Run("RespondError", func(t *testing.T) {
		id := messages.IntID(51)
		from := len(c.Received())
		require.NoError(t, c.SendRequest(id, messages.MethodCallTool, callTool("ask_user", nil)))
		req, err := c.WaitRequest(ctx, messages.MethodElicit, from)
		require.NoError(t, err)
		c.RespondError(req.Msg.ID, messages.Errorf(messages.CodeInvalidParams, "no thanks"))
		res, err := c.WaitResponse(ctx, id, req.Seq+1)
		require.NoError(t, err)
		got, isErr := toolText(t, res.Msg)
		assert.True(t, isErr, "the tool's failure is a result: %s", got)
		assert.Contains(t, got, "no thanks")
	})

	t.Run("a scripted answer set later with Handle", func(t *testing.T) {
		c.Handle(messages.MethodElicit, func(_ context.Context, req *messages.Message) (any, error) {
			return &messages.ElicitResult{Action: messages.ElicitDecline}, nil
		})
		m, err := c.Call(ctx, messages.MethodCallTool, callTool("ask_user", nil))
		require.NoError(t, err)
		got, _ := toolText(t, m)
		assert.Equal(t, "action=decline content=", got)

		c.Handle(messages.MethodElicit, nil) // back to answering by hand
		id := messages.IntID(52)
		from := len(c.Received())
		require.NoError(t, c.SendRequest(id, messages.MethodCallTool, callTool("ask_user", nil)))
		req, err := c.WaitRequest(ctx, messages.MethodElicit, from)
		require.NoError(t, err)
		require.NoError(t, c.Respond(req.Msg.ID, &messages.ElicitResult{Action: messages.ElicitCancel}))
		res, err := c.WaitResponse(ctx, id, req.Seq+1)
		require.NoError(t, err)
		got, _ = toolText(t, res.Msg)
		assert.Equal(t, "action=cancel content=", got)
	})
}

func TestScriptedAnswers(t *testing.T) {
	ctx := context.Background()
	h := harness.New(t, newTestServer(t))

	t.Run("WithSampling", func(t *testing.T) {
		var asked []string
		c := h.Connect(harness.WithSampling(func(p *messages.CreateMessageParams) (*messages.CreateMessageResult, error) {
			asked = append(asked, p.Messages[0].Content[0].(*messages.TextContent).Text)
			return &messages.CreateMessageResult{
				Role: messages.RoleAssistant, Model: "scripted", Content: messages.ContentList{&messages.TextContent{Text: "ok"}},
			}, nil
		}))
		require.NotNil(t, c.InitializeResult)
		m, err := c.Call(ctx, messages.MethodCallTool, callTool("ask_llm", map[string]string{"prompt": "hello?"}))
		require.NoError(t, err)
		got, _ := toolText(t, m)
		assert.Equal(t, "scripted: ok", got)
		assert.Equal(t, []string{"hello?"}, asked, "the handler ran once, before the result")
	})

	t.Run("WithSampling failing", func(t *testing.T) {
		c := h.Connect(harness.WithSampling(func(*messages.CreateMessageParams) (*messages.CreateMessageResult, error) {
			return nil, errors.New("model unavailable")
		}))
		m, err := c.Call(ctx, messages.MethodCallTool, callTool("ask_llm", map[string]string{"prompt": "x"}))
		require.NoError(t, err)
		got, isErr := toolText(t, m)
		assert.True(t, isErr)
		assert.Contains(t, got, "model unavailable", "a plain error goes back as -32603 with its text")
	})

	t.Run("WithElicitation", func(t *testing.T) {
		c := h.Connect(harness.WithElicitation(func(p *messages.ElicitParams) (*messages.ElicitResult, error) {
			assert.Equal(t, "Name?", p.Message)
			return &messages.ElicitResult{Action: messages.ElicitAccept, Content: jsontext.Value(`{"name":"Ada"}`)}, nil
		}))
		m, err := c.Call(ctx, messages.MethodCallTool, callTool("ask_user", nil))
		require.NoError(t, err)
		got, _ := toolText(t, m)
		assert.Equal(t, `action=accept content={"name":"Ada"}`, got)
	})

	t.Run("WithElicitation returning a wire error", func(t *testing.T) {
		c := h.Connect(harness.WithElicitation(func(*messages.ElicitParams) (*messages.ElicitResult, error) {
			return nil, messages.Errorf(-32042, "custom")
		}))
		from := len(c.Received())
		m, err := c.Call(ctx, messages.MethodCallTool, callTool("ask_user", nil))
		require.NoError(t, err)
		got, isErr := toolText(t, m)
		assert.True(t, isErr)
		assert.Contains(t, got, "custom")
		req, err := c.WaitRequest(ctx, messages.MethodElicit, from)
		require.NoError(t, err)
		assert.NotEmpty(t, req.Msg.ID.Raw())
	})

	t.Run("WithRoots", func(t *testing.T) {
		roots := []*messages.Root{{URI: "file:///a", Name: "a"}}
		c := h.Connect(harness.WithRoots(func() []*messages.Root { return roots }))
		m, err := c.Call(ctx, messages.MethodCallTool, callTool("list_roots", nil))
		require.NoError(t, err)
		got, _ := toolText(t, m)
		assert.JSONEq(t, `[{"uri":"file:///a","name":"a"}]`, got)

		roots = nil // answered as an empty list, not null
		m, err = c.Call(ctx, messages.MethodCallTool, callTool("list_roots", nil))
		require.NoError(t, err)
		got, _ = toolText(t, m)
		assert.JSONEq(t, `[]`, got)
	})

	t.Run("WithHandler", func(t *testing.T) {
		c := h.Connect(
			harness.WithCapabilities(messages.ClientCapabilities{Roots: &messages.RootsCapabilities{}}),
			harness.WithHandler(messages.MethodListRoots, func(context.Context, *messages.Message) (any, error) {
				return jsontext.Value(`{"roots":[{"uri":"file:///raw"}]}`), nil
			}),
		)
		m, err := c.Call(ctx, messages.MethodCallTool, callTool("list_roots", nil))
		require.NoError(t, err)
		got, _ := toolText(t, m)
		assert.JSONEq(t, `[{"uri":"file:///raw"}]`, got)
	})

	t.Run("WithCapabilities after an answer option replaces its capability", func(t *testing.T) {
		c := h.Connect(
			harness.WithRoots(func() []*messages.Root { return nil }),
			harness.WithCapabilities(messages.ClientCapabilities{}),
		)
		m, err := c.Call(ctx, messages.MethodCallTool, callTool("list_roots", nil))
		require.NoError(t, err)
		_, isErr := toolText(t, m)
		assert.True(t, isErr, "the server must not ask a client that declared no roots")
		for _, r := range c.Received() {
			assert.NotEqual(t, messages.MethodListRoots, r.Msg.Method)
		}
	})
}

func TestWaitTimeout(t *testing.T) {
	c := harness.New(t, newTestServer(t)).Connect(harness.WithTimeout(20 * time.Millisecond))
	_, err := c.WaitNotification(context.Background(), messages.MethodProgress, 0)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	t.Run("a deadline of the caller's own wins", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.WaitNotification(ctx, messages.MethodProgress, 0)
		require.ErrorIs(t, err, context.Canceled)
	})

	t.Run("waiting from past what arrived", func(t *testing.T) {
		n := len(c.Received())
		_, err := c.Call(context.Background(), messages.MethodPing, nil)
		require.NoError(t, err)
		// The ping's answer is at n; waiting from n+1 must not return it.
		_, err = c.Wait(context.Background(), n+1, func(*harness.Received) bool { return true })
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

func TestClose(t *testing.T) {
	ctx := context.Background()
	h := harness.New(t, newTestServer(t))
	c := h.Connect(harness.WithSampling(func(*messages.CreateMessageParams) (*messages.CreateMessageResult, error) {
		return &messages.CreateMessageResult{Role: messages.RoleAssistant, Model: "m", Content: messages.ContentList{&messages.TextContent{Text: "x"}}}, nil
	}))
	id := c.ID()
	require.NoError(t, c.SendRequest(messages.IntID(9), messages.MethodCallTool, callTool("block", nil)))
	n := len(c.Received())

	c.Close()
	c.Close() // idempotent
	_, ok := access.Session(h.Server, id)
	assert.False(t, ok, "the session has ended")

	_, err := c.Wait(ctx, n, func(*harness.Received) bool { return true })
	require.ErrorIs(t, err, harness.ErrClosed)
	_, err = c.Call(ctx, messages.MethodPing, nil)
	require.ErrorIs(t, err, harness.ErrClosed)
	assert.Len(t, c.Received(), n, "what arrived before Close stays readable")
}
