package cluster

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// StopRenewing makes n's lease renewals fail from now on, as for a node
// cut off from its storage: its key expires a TTL after its last renewal,
// and it stops acting at its deadline before that.
func StopRenewing(n *Node) {
	n.mu.Lock()
	n.nodes = refusingLeases{n.nodes}
	n.mu.Unlock()
}

// KeepSessionsAtLapse makes n give nothing up when its lease lapses (its
// router's give-up is not called; its handlers' context still ends), so
// that a test sees what each fence does on its own with the sessions
// still there. Call it after the node joined its server.
func KeepSessionsAtLapse(n *Node) { n.onLapsed(func() {}) }

// GateEventReads makes each of n's reads of the event log wait until gate
// is closed; entered gets a value (when it has room) as a read begins to
// wait.
func GateEventReads(n *Node, entered chan<- struct{}, gate <-chan struct{}) {
	n.mu.Lock()
	n.events = gatedStream{Stream: n.events, entered: entered, gate: gate}
	n.mu.Unlock()
}

type gatedStream struct {
	jetstream.Stream
	entered chan<- struct{}
	gate    <-chan struct{}
}

func (g gatedStream) GetMsg(ctx context.Context, seq uint64, opts ...jetstream.GetMsgOpt) (*jetstream.RawStreamMsg, error) {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Stream.GetMsg(ctx, seq, opts...)
}
