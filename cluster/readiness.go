package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrNotReady is returned, wrapped with the reason, while the node cannot
// serve yet (JetStream not up, no lease).
var ErrNotReady = errors.New("cluster: node not ready")

// Ready reports whether the node can serve: its NATS connection is up, the
// cluster's buckets exist, its lease is current, and, with routes, it has
// joined the others. The error says what is missing.
func (n *Node) Ready() error {
	if !n.nc.IsConnected() {
		return fmt.Errorf("%w: NATS connection %s", ErrNotReady, strings.ToLower(n.nc.Status().String()))
	}
	if n.cutOff() {
		return fmt.Errorf("%w: no route to another node yet", ErrNotReady)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.ready && n.acting():
		return nil
	case n.lastErr != nil:
		return fmt.Errorf("%w: %w", ErrNotReady, n.lastErr)
	case n.ready:
		return fmt.Errorf("%w: %w", ErrNotReady, errLeaseLapsed)
	}
	return fmt.Errorf("%w: JetStream buckets not created yet", ErrNotReady)
}

// WaitReady waits until Ready reports nil or ctx ends.
func (n *Node) WaitReady(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		err := n.Ready()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%w)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

func (n *Node) setErr(err error) {
	n.mu.Lock()
	n.ready, n.lastErr = false, err
	n.mu.Unlock()
}

// canOpen says why the node cannot make a new session durable now (nil
// when it can): it does not act for its sessions (its lease may have
// lapsed), or its last lease renewal failed (storage has no quorum, or
// the node is cut off from the others).
func (n *Node) canOpen() error {
	switch {
	case !n.bucketsUp():
		return fmt.Errorf("%w: JetStream buckets not created yet", ErrNotReady)
	case !n.acting():
		return errLeaseLapsed
	case !n.lease.healthy.Load():
		n.mu.Lock()
		err := n.lastErr
		n.mu.Unlock()
		if err == nil {
			err = errors.New("the last lease renewal failed")
		}
		return fmt.Errorf("storage cannot be written (%w)", err)
	case n.cutOff():
		return errors.New("no route to another node")
	}
	return nil
}

// cutOff reports whether the node's embedded server should have routes to
// others but has none. Its lease may still be current (it is not fenced
// yet), but it reaches no other node: it opens and takes over no session.
func (n *Node) cutOff() bool {
	return n.ns != nil && len(n.opts.Routes) > 0 && n.ns.NumRoutes() == 0
}

// reachesQuorum reports whether this node has routes to enough others for
// its storage to have a majority of its replicas: then a storage operation
// that fails is a leader being elected (after a node loss) and passes
// within seconds; without a majority it does not pass until the cluster
// heals. It counts servers, not route connections (NATS pools several per
// server). With an external NATS deployment the node cannot tell: it says
// yes, and the wait stays bounded by its caller.
func (n *Node) reachesQuorum() bool {
	if n.ns == nil || len(n.opts.Routes) == 0 {
		return true
	}
	return len(n.Peers())+1 > n.opts.Replicas/2
}
