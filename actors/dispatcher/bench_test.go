package dispatcher_test

import (
	"encoding/json/jsontext"
	"testing"

	"github.com/mcp-actors/mcp-actors/messages"
)

// BenchmarkCallRoundTrip measures one Call through the actor: Begin posted,
// ID allocated, frame encoded, answered at once by the actor, result handed
// back to the caller. Allocations on the actor goroutine count too.
func BenchmarkCallRoundTrip(b *testing.B) {
	a := newTestActor(b, actorConfig{Answer: jsontext.Value(`{"roots":[]}`), Discard: true})
	params := &messages.ListRootsParams{}
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		raw, err := a.client.Call(ctx, messages.MethodListRoots, params)
		if err != nil {
			b.Fatal(err)
		}
		if len(raw) == 0 {
			b.Fatal("empty result")
		}
	}
	b.StopTimer()
	if s := a.state(); s.Stats.Completed != s.Stats.Sent || s.Pending != 0 {
		b.Fatalf("table state after the run: %+v", s)
	}
}
