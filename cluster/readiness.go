package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ErrNotReady is returned, wrapped with the reason, while the node cannot
// serve yet (JetStream not up, no lease).
var ErrNotReady = errors.New("cluster: node not ready")

// Ready reports whether the node can serve: its NATS connection is up, the
// cluster's buckets exist, it acts for its sessions (its lease deadline
// has not passed), and, with routes, it reaches another node. A renewal
// that failed does not make it unready while its deadline holds: a
// storage election (4 to 9 s) fails every node's renewals at once, and
// the nodes serve on meanwhile. The error says, as a state, what the node
// is doing meanwhile ("waiting for 2 more nodes", "electing the storage
// leader").
func (n *Node) Ready() error {
	if !n.nc.IsConnected() {
		return fmt.Errorf("%w: connecting to NATS (%s)", ErrNotReady, strings.ToLower(n.nc.Status().String()))
	}
	if !n.bucketsUp() {
		return fmt.Errorf("%w: %s", ErrNotReady, n.startState())
	}
	if n.cutOff() {
		return fmt.Errorf("%w: no route to another node", ErrNotReady)
	}
	if n.settled.Load() && n.acting() {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.lastErr != nil:
		return fmt.Errorf("%w: %w", ErrNotReady, n.lastErr)
	case n.ready:
		return fmt.Errorf("%w: %w", ErrNotReady, errLeaseLapsed)
	}
	return fmt.Errorf("%w: taking the node's lease", ErrNotReady)
}

// Started reports whether the node has been ready once since it started:
// what a startup probe asks. It stays true when the node is not ready
// again later (a lapse, a cut): that is the readiness probe's to say.
func (n *Node) Started() bool { return n.settled.Load() }

// startState says what a node whose buckets do not exist yet waits for:
// other nodes, a storage leader, or the buckets' creation (with its last
// error when that is not a wait for an answer).
func (n *Node) startState() string {
	if w := n.storageWait(); w != "" {
		return w
	}
	n.mu.Lock()
	err := n.lastErr
	n.mu.Unlock()
	var wait storeWaitError
	if errors.As(err, &wait) {
		return string(wait)
	}
	if errors.Is(err, errCreatorFirst) {
		if w := n.newStoreWait(); w != "" {
			return w // the creator waits for it too
		}
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, errCreatorFirst) {
		return "creating the cluster's buckets (last try: " + err.Error() + ")"
	}
	return "creating the cluster's buckets"
}

// storageWait says what the embedded server's JetStream still needs
// before the node can use the cluster's stores ("" when nothing, or when
// the node cannot tell: with URLs): routes to a majority of the storage's
// replicas (the others may be lost for good: a replicated store runs on a
// majority), and a storage leader that hears from them. A request sent
// before then gets no answer and waits out its bound. Creating a store
// that does not exist yet needs every replica (newStoreWait).
func (n *Node) storageWait() string {
	if n.ns == nil || len(n.opts.Routes) == 0 {
		return ""
	}
	if n.opts.routesOnlySelf() {
		return "waiting for other nodes: --routes names only this node (list every node's route URL)"
	}
	need := n.opts.Replicas/2 + 1 // a majority of the replicas, this node among them
	return n.storageNeeds(need, fmt.Sprintf("the storage keeps %d replicas and runs on %d", n.opts.Replicas, need))
}

// newStoreWait says what the embedded server's JetStream still needs
// before it can create a store ("" when nothing, or when the node cannot
// tell): routes to every replica's node, and a storage leader that hears
// from them all. A new cluster waits for it once.
func (n *Node) newStoreWait() string {
	if w := n.storageWait(); w != "" || n.ns == nil || len(n.opts.Routes) == 0 {
		return w
	}
	r := n.opts.Replicas
	return n.storageNeeds(r, fmt.Sprintf("a new store needs all %d replicas", r))
}

// storageNeeds says what the embedded server's JetStream still needs
// before need nodes, this one among them, are routed to and heard from by
// a storage leader ("" when nothing); why says what need is, for the wait
// for more nodes.
func (n *Node) storageNeeds(need int, why string) string {
	here := len(n.Peers()) + 1
	if more := need - here; more > 0 {
		return fmt.Sprintf("waiting for %d more %s to join (%s)", more, plural(more, "node"), why)
	}
	jsz, err := n.ns.Jsz(&server.JSzOptions{})
	if err != nil || jsz.Meta == nil {
		return "electing the storage leader"
	}
	if jsz.Meta.Leader == "" && here < jsz.Meta.Size {
		// A new cluster's storage elects its first leader once it has
		// heard from every node; after, from a majority.
		return fmt.Sprintf("electing the storage leader: %d of its %d nodes here (a new cluster waits for all)", here, jsz.Meta.Size)
	}
	if jsz.Meta.Leader == "" || jsz.Meta.Size < need {
		return "electing the storage leader"
	}
	if n.ns.JetStreamIsLeader() {
		if more := need - 1 - currentPeers(jsz.Meta); more > 0 {
			return fmt.Sprintf("the storage leader is waiting to hear from %d more %s", more, plural(more, "node"))
		}
	}
	return ""
}

// currentPeers counts the metadata group's other members that are online
// and caught up with its leader.
func currentPeers(meta *server.MetaClusterInfo) int {
	current := 0
	for _, p := range meta.Replicas {
		if p.Current && !p.Offline {
			current++
		}
	}
	return current
}

// creates reports whether this node creates the buckets that do not
// exist yet. Nodes that create the same bucket at once make each other's
// requests go unanswered until their bound, so in a new cluster of
// embedded servers the node whose server leads the storage creates them,
// and the others open them once they exist; after creatorGrace without
// them, any node creates them too. With URLs, every node does.
func (n *Node) creates(waitingSince time.Time) bool {
	return n.ns == nil || len(n.opts.Routes) == 0 || n.ns.JetStreamIsLeader() || time.Since(waitingSince) > creatorGrace
}

// creatorGrace is how long a node leaves the creation of missing buckets
// to the storage leader's node.
const creatorGrace = 3 * time.Second

// errCreatorFirst reports a bucket left for the storage leader's node to
// create (creates).
var errCreatorFirst = errors.New("waiting for the storage leader's node to create it")

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
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
	case n.dir.full():
		return errDirectoryFull
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
	return n.quorumWith(len(n.Peers()))
}

// quorumWith is reachesQuorum for a node routed to peers other servers.
func (n *Node) quorumWith(peers int) bool {
	if n.ns == nil || len(n.opts.Routes) == 0 {
		return true
	}
	return peers+1 > n.opts.Replicas/2
}
