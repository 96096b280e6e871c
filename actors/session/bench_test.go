package session_test

import (
	"context"
	"encoding/json/jsontext"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/internal/access"
	"github.com/mcp-actors/mcp-actors/messages"
)

// benchServer has an echo tool and a tool that samples once.
func benchServer(b *testing.B) *mcpactors.Server {
	srv := mcpactors.NewServer(messages.Implementation{Name: "bench", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	require.NoError(b, mcpactors.AddTypedTool(srv, &messages.Tool{Name: "echo", Description: "echo"},
		func(ctx context.Context, s *mcpactors.Session, in in) (*messages.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		}))
	require.NoError(b, srv.AddTool(&messages.Tool{Name: "sample", Description: "samples"},
		func(ctx context.Context, s *mcpactors.Session, req *mcpactors.CallToolRequest) (*messages.CallToolResult, error) {
			res, err := s.CreateMessage(ctx, &messages.CreateMessageParams{MaxTokens: 1})
			if err != nil {
				return nil, err
			}
			return &messages.CallToolResult{Content: res.Content}, nil
		}))
	return srv
}

// BenchmarkRequestRoundTrip is one tools/call through a session actor and
// back, at the message level (no transport).
func BenchmarkRequestRoundTrip(b *testing.B) {
	c := harness.New(b, benchServer(b)).Connect()
	ctx := context.Background()
	params := jsontext.Value(`{"name":"echo","arguments":{"text":"hello"}}`)
	b.ReportAllocs()
	for b.Loop() {
		m, err := c.Call(ctx, messages.MethodCallTool, params)
		if err != nil || m.Error != nil {
			b.Fatal(err, m.Error)
		}
	}
}

// BenchmarkServerToClientRoundTrip is one tools/call whose handler makes
// one sampling/createMessage call that the client answers.
func BenchmarkServerToClientRoundTrip(b *testing.B) {
	result := &messages.CreateMessageResult{Role: messages.RoleAssistant, Model: "m", Content: messages.ContentList{&messages.TextContent{Text: "x"}}}
	c := harness.New(b, benchServer(b)).Connect(harness.WithSampling(func(*messages.CreateMessageParams) (*messages.CreateMessageResult, error) {
		return result, nil
	}))
	ctx := context.Background()
	params := jsontext.Value(`{"name":"sample"}`)
	b.ReportAllocs()
	for b.Loop() {
		m, err := c.Call(ctx, messages.MethodCallTool, params)
		if err != nil || m.Error != nil {
			b.Fatal(err, m.Error)
		}
	}
}

// nopSink drops frames, standing in for a transport that is not there.
type nopSink struct{ frames chan struct{} }

func (s nopSink) Receive(messages.StreamEvent) bool {
	select {
	case s.frames <- struct{}{}:
	default:
	}
	return true
}

func (nopSink) Gone() bool { return false }

// BenchmarkIdleSession spawns sessions, opens them (initialize and
// initialized, as a client would) and reports the heap each idle session
// actor keeps, transport excluded.
func BenchmarkIdleSession(b *testing.B) {
	srv := mcpactors.NewServer(messages.Implementation{Name: "bench", Version: "1"}, nil)
	defer func() { _ = srv.Close(context.Background()) }()
	initialize := &messages.Message{ID: messages.IntID(1), Method: messages.MethodInitialize,
		Params: jsontext.Value(`{"protocolVersion":"2025-11-25","capabilities":{"sampling":{},"roots":{"listChanged":true}},"clientInfo":{"name":"bench","version":"1"}}`)}
	initialized := &messages.Message{Method: messages.MethodInitialized}
	answered := nopSink{frames: make(chan struct{}, 1)}
	rt := access.Router(srv)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		id, err := rt.Open(context.Background(), router.OpenOptions{})
		if err != nil {
			b.Fatal(err)
		}
		sid := rt.Streams().Register(id, answered)
		_ = rt.Deliver(context.Background(), id, &messages.HandleRequest{Msg: initialize, Stream: sid})
		_ = rt.Deliver(context.Background(), id, &messages.HandleNotification{Msg: initialized})
		<-answered.frames
		rt.Streams().Unregister(sid)
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(b.N), "heap-bytes/session")
	b.ReportMetric(float64(runtime.NumGoroutine()), "goroutines")
}
