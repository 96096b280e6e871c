package session_test

import (
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
)

type profile struct {
	Name  string `json:"name" jsonschema:"title=Name,description=Your name,minLength=1"`
	Role  string `json:"role" jsonschema:"enum=dev,enum=ops,default=dev"`
	Age   *int   `json:"age,omitempty" jsonschema:"minimum=0"`
	Happy bool   `json:"happy"`
}

func TestElicit(t *testing.T) {
	ctx := context.Background()
	type outcome struct {
		action messages.ElicitAction
		value  profile
		raw    map[string]any
		err    error
	}
	results := make(chan outcome, 1)
	srv := newServer(t, func(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		var args struct {
			Strict bool `json:"strict"`
		}
		_ = json.Unmarshal(req.Arguments, &args)
		o := outcome{value: profile{Name: "untouched"}}
		opts := []session.ElicitOption{mcpactors.WithRawCapture(&o.raw)}
		if args.Strict {
			opts = append(opts, mcpactors.WithStrictKeys())
		}
		o.action, o.err = s.Elicit(ctx, "Who are you?", &o.value, opts...)
		results <- o
		return text("asked"), nil
	})
	h := harness.New(t, srv)

	answer := func(action messages.ElicitAction, content string) harness.Option {
		return harness.WithElicitation(func(p *messages.ElicitParams) (*messages.ElicitResult, error) {
			r := &messages.ElicitResult{Action: action}
			if content != "" {
				r.Content = jsontext.Value(content)
			}
			return r, nil
		})
	}

	t.Run("the form schema comes from the struct", func(t *testing.T) {
		c := h.Connect(answer(messages.ElicitDecline, ``))
		callRun(t, c, nil)
		<-results
		req, err := c.WaitRequest(ctx, messages.MethodElicit, 0)
		require.NoError(t, err)
		var p messages.ElicitParams
		require.NoError(t, json.Unmarshal(req.Msg.Params, &p))
		assert.Equal(t, "form", p.Mode)
		assert.Equal(t, "Who are you?", p.Message)
		assert.JSONEq(t, `{
			"type":"object",
			"properties":{
				"name":{"type":"string","title":"Name","description":"Your name","minLength":1},
				"role":{"type":"string","enum":["dev","ops"],"default":"dev"},
				"age":{"type":"integer","minimum":0},
				"happy":{"type":"boolean"}
			},
			"required":["name","role","happy"]
		}`, string(p.RequestedSchema))
	})

	t.Run("older sessions get no mode field", func(t *testing.T) {
		c := h.Connect(answer(messages.ElicitCancel, ``), harness.WithProtocolVersion(messages.Version20250618))
		callRun(t, c, nil)
		o := <-results
		require.NoError(t, o.err)
		assert.Equal(t, messages.ElicitCancel, o.action)
		req, err := c.WaitRequest(ctx, messages.MethodElicit, 0)
		require.NoError(t, err)
		assert.NotContains(t, string(req.Msg.Params), `"mode"`)
	})

	for _, tc := range []struct {
		name    string
		action  messages.ElicitAction
		content string
		strict  bool
		want    profile
		wantErr bool
	}{
		{name: "accept decodes", action: messages.ElicitAccept, content: `{"name":"Ada","role":"ops","happy":true,"extra":1}`, want: profile{Name: "Ada", Role: "ops", Happy: true}},
		{name: "decline leaves the target", action: messages.ElicitDecline, want: profile{Name: "untouched"}},
		{name: "cancel leaves the target", action: messages.ElicitCancel, want: profile{Name: "untouched"}},
		{name: "enum violation is an error", action: messages.ElicitAccept, content: `{"name":"Ada","role":"boss","happy":true}`, want: profile{Name: "untouched"}, wantErr: true},
		{name: "missing required is an error", action: messages.ElicitAccept, content: `{"role":"dev","happy":true}`, want: profile{Name: "untouched"}, wantErr: true},
		{name: "type mismatch is an error", action: messages.ElicitAccept, content: `{"name":"Ada","role":"dev","happy":"yes"}`, want: profile{Name: "untouched"}, wantErr: true},
		{name: "strict rejects unknown keys", action: messages.ElicitAccept, content: `{"name":"Ada","role":"dev","happy":true,"extra":1}`, strict: true, want: profile{Name: "untouched"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := h.Connect(answer(tc.action, tc.content))
			callRun(t, c, map[string]bool{"strict": tc.strict})
			o := <-results
			assert.Equal(t, tc.action, o.action)
			assert.Equal(t, tc.want, o.value)
			if tc.wantErr {
				require.Error(t, o.err)
				return
			}
			require.NoError(t, o.err)
			if tc.action == messages.ElicitAccept {
				assert.Equal(t, "Ada", o.raw["name"], "the raw answer is captured")
			}
		})
	}

	t.Run("a target that is not a pointer to a flat struct", func(t *testing.T) {
		c := h.Connect(answer(messages.ElicitAccept, `{}`))
		for _, target := range []any{profile{}, (*profile)(nil), new(int), &struct{ Inner profile }{}} {
			srvErr := func() error {
				s := make(chan error, 1)
				require.NoError(t, srv.AddTool(&messages.Tool{Name: "bad"}, func(ctx context.Context, sess *mcpactors.Session, _ *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
					_, err := sess.Elicit(ctx, "x", target)
					s <- err
					return text("x"), nil
				}))
				require.NoError(t, c.CallResult(ctx, messages.MethodCallTool, map[string]any{"name": "bad"}, nil))
				return <-s
			}()
			require.ErrorIs(t, srvErr, session.ErrInvalidElicitTarget)
		}
		assert.NotContains(t, methods(c), messages.MethodElicit)
	})
}

func TestCreateMessage(t *testing.T) {
	results := make(chan *messages.CreateMessageResult, 1)
	srv := newServer(t, func(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
		res, err := s.CreateMessage(ctx, &messages.CreateMessageParams{
			Messages:   []*messages.SamplingMessage{{Role: messages.RoleUser, Content: messages.ContentList{&messages.TextContent{Text: "hi"}}}},
			MaxTokens:  100,
			Tools:      []*messages.Tool{{Name: "lookup", InputSchema: jsontext.Value(`{"type":"object"}`)}},
			ToolChoice: &messages.ToolChoice{Mode: "auto"},
		})
		if err != nil {
			return nil, err
		}
		results <- res
		return text("sampled"), nil
	})
	var seen *messages.CreateMessageParams
	c := harness.New(t, srv).Connect(harness.WithSampling(func(p *messages.CreateMessageParams) (*messages.CreateMessageResult, error) {
		seen = p
		return &messages.CreateMessageResult{Role: messages.RoleAssistant, Model: "m", Content: messages.ContentList{&messages.TextContent{Text: "hello"}}}, nil
	}))
	assert.Equal(t, "sampled", callRun(t, c, nil))
	res := <-results
	assert.Equal(t, "m", res.Model)
	assert.Equal(t, "hello", res.Content[0].(*messages.TextContent).Text)
	require.NotNil(t, seen)
	require.Len(t, seen.Tools, 1)
	assert.Equal(t, "lookup", seen.Tools[0].Name)
	assert.Equal(t, "auto", seen.ToolChoice.Mode)
}

func TestSessionData(t *testing.T) {
	ctx := context.Background()
	type op struct {
		Op, Key, Value string
	}
	srv := mcpactors.NewServer(messages.Implementation{Name: "data", Version: "1"}, &mcpactors.Options{
		Limits: mcpactors.Limits{MaxDataKeys: 2, MaxDataBytes: 64, MaxKeyBytes: 8},
	})
	require.NoError(t, mcpactors.AddTypedTool(srv, &messages.Tool{Name: "data"},
		func(ctx context.Context, s *mcpactors.Session, in op) (*messages.CallToolResult, any, error) {
			switch in.Op {
			case "put":
				return nil, nil, s.PutData(ctx, in.Key, []byte(in.Value))
			case "get":
				v, ok, err := s.GetData(ctx, in.Key)
				if err != nil {
					return nil, nil, err
				}
				if !ok {
					return text("<missing>"), nil, nil
				}
				return text(string(v)), nil, nil
			case "delete":
				return nil, nil, s.DeleteData(ctx, in.Key)
			}
			return nil, nil, nil
		}))
	h := harness.New(t, srv)
	a, b := h.Connect(), h.Connect()
	do := func(c *harness.Client, o op) *messages.CallToolResult {
		var res messages.CallToolResult
		require.NoError(t, c.CallResult(ctx, messages.MethodCallTool, map[string]any{"name": "data", "arguments": o}, &res))
		return &res
	}
	textOf := func(r *messages.CallToolResult) string { return r.Content[0].(*messages.TextContent).Text }

	assert.False(t, do(a, op{"put", "k", "v1"}).IsError)
	assert.Equal(t, "v1", textOf(do(a, op{"get", "k", ""})))
	assert.Equal(t, "<missing>", textOf(do(b, op{"get", "k", ""})), "data is per session")
	assert.False(t, do(a, op{"put", "k", "v2"}).IsError, "overwrite")
	assert.False(t, do(a, op{"put", "k2", "x"}).IsError)
	r := do(a, op{"put", "k3", "x"})
	assert.True(t, r.IsError, "a third key exceeds MaxDataKeys")
	assert.Contains(t, textOf(r), "limit")
	assert.True(t, do(a, op{"put", "waytoolongkey", "x"}).IsError)
	assert.True(t, do(b, op{"put", "big", string(make([]byte, 100))}).IsError)
	assert.False(t, do(a, op{"delete", "k", ""}).IsError)
	assert.False(t, do(a, op{"delete", "k", ""}).IsError, "deleting a missing key is fine")
	assert.Equal(t, "<missing>", textOf(do(a, op{"get", "k", ""})))
}

// TestSessionDataStateBound: with Limits.MaxStateBytes (what a cluster
// sets from the NATS max payload), PutData refuses a value that would
// make the session's durable State larger, and says what is too large and
// the bound; a smaller value, or one that replaces a larger one, goes in.
func TestSessionDataStateBound(t *testing.T) {
	ctx := context.Background()
	const bound = 4096
	srv := mcpactors.NewServer(messages.Implementation{Name: "data", Version: "1"}, &mcpactors.Options{
		Limits: mcpactors.Limits{MaxStateBytes: bound},
	})
	errs := make(chan error, 1)
	require.NoError(t, mcpactors.AddTypedTool(srv, &messages.Tool{Name: "put"},
		func(ctx context.Context, s *mcpactors.Session, in struct {
			Key  string `json:"key"`
			Size int    `json:"size"`
		}) (*messages.CallToolResult, any, error) {
			err := s.PutData(ctx, in.Key, make([]byte, in.Size))
			errs <- err
			return nil, nil, err
		}))
	c := harness.New(t, srv).Connect()
	put := func(key string, size int) error {
		t.Helper()
		var res messages.CallToolResult
		require.NoError(t, c.CallResult(ctx, messages.MethodCallTool, map[string]any{"name": "put", "arguments": map[string]any{"key": key, "size": size}}, &res))
		select {
		case err := <-errs:
			return err
		default:
			require.FailNow(t, "the tool did not run", "%+v", res)
			return nil
		}
	}
	require.NoError(t, put("a", 2000), "2000 bytes are 2668 in base64")
	err := put("b", 1000)
	require.ErrorIs(t, err, session.ErrDataLimit)
	assert.ErrorContains(t, err, `with 1000 bytes under "b"`)
	assert.ErrorContains(t, err, "it must fit in 4096 bytes")
	require.NoError(t, put("b", 500))
	require.NoError(t, put("a", 1000), "a smaller value in place of a larger one")
	require.NoError(t, put("c", 1000))
	require.ErrorIs(t, put("a", 2000), session.ErrDataLimit, "a larger one in its place, no more")
}

// TestSessionSubscriptionsStateBound: resource subscriptions are part of
// the durable State too; one that would make it larger than
// Limits.MaxStateBytes is refused with an error that says so, and the
// session goes on.
func TestSessionSubscriptionsStateBound(t *testing.T) {
	ctx := context.Background()
	const bound = 1024
	srv := mcpactors.NewServer(messages.Implementation{Name: "subs", Version: "1"}, &mcpactors.Options{
		Limits: mcpactors.Limits{MaxStateBytes: bound},
	})
	c := harness.New(t, srv).Connect()
	subscribe := func(i int) *messages.Message {
		t.Helper()
		m, err := c.Call(ctx, messages.MethodSubscribe, map[string]any{"uri": fmt.Sprintf("test://%0100d", i)})
		require.NoError(t, err)
		return m
	}
	refused := -1
	for i := range 20 {
		if m := subscribe(i); m.Error != nil {
			assert.Contains(t, m.Error.Message, "must fit in 1024")
			refused = i
			break
		}
	}
	require.Positive(t, refused, "a subscription past the bound is refused, after some that fit")
	m, err := c.Call(ctx, messages.MethodPing, nil)
	require.NoError(t, err)
	assert.Nil(t, m.Error, "the session goes on")
}
