package cluster

import (
	"context"
	json "encoding/json/v2"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// The storage's replicas. A replicated store runs on a majority of its
// replicas: a node lost for good (a machine gone, a volume that cannot
// be mounted) leaves the others serving, restarting and becoming ready
// (storageWait), and the node that notices that it reaches fewer nodes
// than the stores keep replicas says so (shortOfReplicas). Its replicas
// stay assigned to it until an operator removes it (RemoveNode): then
// JetStream places them on the nodes left, or on the node that replaces
// it, and the stores survive one more loss.

// shortWarnAfter is how long a node reaches fewer nodes than the stores
// keep replicas before it warns: a rolling restart's node comes back
// sooner.
const shortWarnAfter = time.Minute

// shortWatch is what the node has said about reaching fewer nodes than
// the stores keep replicas. On the maintain goroutine only.
type shortWatch struct {
	since  time.Time // when it first reached fewer; zero while it reaches enough
	warned bool
}

// shortOfReplicas looks at the nodes this one reaches and warns, once,
// when they have been fewer than the stores' replicas for shortWarnAfter;
// it says when they are enough again.
func (n *Node) shortOfReplicas(w *shortWatch, now time.Time) {
	if n.ns == nil || len(n.opts.Routes) == 0 || n.opts.Replicas < 2 {
		return
	}
	peers := n.Peers()
	if len(peers)+1 >= n.opts.Replicas {
		if w.warned {
			n.log.Info("every replica's node is reachable again", "nodes", len(peers)+1, "replicas", n.opts.Replicas)
		}
		*w = shortWatch{}
		return
	}
	if w.since.IsZero() {
		w.since = now
	}
	if w.warned || now.Sub(w.since) < shortWarnAfter {
		return
	}
	w.warned = true
	n.log.Warn("the stores keep more replicas than the nodes this one reaches: they run on a majority, and one more loss stops them; "+
		"if a node is lost for good, remove it (mcp-actors admin remove-node ID; docs/operations.md, \"A node lost for good\")",
		"replicas", n.opts.Replicas, "nodes", len(peers)+1, "reached", peers, "for", now.Sub(w.since).Round(time.Second))
}

// ErrNodeReachable is returned by RemoveNode for a node this one reaches:
// a node is removed only once it is gone.
var ErrNodeReachable = errors.New("cluster: the node is reachable")

// ErrNotEmbedded is returned for what only the node's embedded NATS server
// can do.
var ErrNotEmbedded = errors.New("cluster: the node runs no embedded NATS server")

// RemoveNode removes the node id, lost for good, from the storage: its
// embedded server leaves JetStream's metadata group, and JetStream places
// its replicas of every store on the nodes left (or on a node that
// replaces it), copying what the others hold. It is refused for this node
// and for a node this one reaches. The removed node must not start again
// on its data directory: a replacement starts with a new ID and an empty
// one. With an external NATS deployment its own tools do this (`nats
// server raft peer-remove`).
func (n *Node) RemoveNode(ctx context.Context, id string) error {
	switch {
	case n.ns == nil:
		return fmt.Errorf("%w: remove a server from an external NATS deployment with its own tools (nats server raft peer-remove)", ErrNotEmbedded)
	case id == n.opts.NodeID:
		return fmt.Errorf("%w: %s is this node (ask another)", ErrNodeReachable, id)
	case slices.Contains(n.Peers(), id):
		return fmt.Errorf("%w: %s has a route to this node; stop it for good first", ErrNodeReachable, id)
	}
	nc, err := nats.Connect("", nats.InProcessServer(n.ns), nats.UserInfo(systemUser, ""), nats.Name("mcp-actors admin"))
	if err != nil {
		return fmt.Errorf("cluster: connecting to the system account: %w", err)
	}
	defer nc.Close()
	err = n.removePeer(ctx, nc, id, "")
	if errors.Is(err, ErrUnknownNode) {
		// The storage leader may know the lost node by its peer ID only
		// (it was elected after the node was lost): name it by the ID
		// this node or its stores' replicas know it by.
		if peer := n.peerIDOf(ctx, id); peer != "" {
			err = n.removePeer(ctx, nc, id, peer)
		}
	}
	if err != nil {
		return err
	}
	n.log.Warn("removed a node from the storage: its replicas move to the nodes left", "node", id)
	return nil
}

// peerIDOf returns the storage's peer ID of the node named id, as this
// node's view of the metadata group or its stores' replicas tell it; ""
// when neither does.
func (n *Node) peerIDOf(ctx context.Context, id string) string {
	if jsz, err := n.ns.Jsz(&server.JSzOptions{}); err == nil && jsz.Meta != nil {
		for _, r := range jsz.Meta.Replicas {
			if r != nil && r.Name == id && r.Peer != "" {
				return r.Peer
			}
		}
	}
	for _, s := range storeStreams {
		info, err := n.streamInfo(ctx, n.streamOf(s.store))
		if err != nil || info.Cluster == nil {
			continue
		}
		for _, r := range info.Cluster.Replicas {
			if r != nil && r.Name == id && r.Peer != "" {
				return r.Peer
			}
		}
	}
	return ""
}

// removePeer asks the storage leader to remove the node named id (by its
// peer ID when peer is not "") from the metadata group.
func (n *Node) removePeer(ctx context.Context, nc *nats.Conn, id, peer string) error {
	req, _ := json.Marshal(struct {
		Server string `json:"peer"`
		Peer   string `json:"peer_id,omitempty"`
	}{id, peer})
	ctx, cancel := context.WithTimeout(ctx, storageOpTimeout)
	defer cancel()
	msg, err := nc.RequestWithContext(ctx, "$JS.API.SERVER.REMOVE", req)
	if err != nil {
		return fmt.Errorf("cluster: removing %s from the storage (no answer from its leader: %w)", id, err)
	}
	var resp struct {
		Success bool `json:"success"`
		Error   *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return fmt.Errorf("cluster: removing %s from the storage: unreadable answer: %w", id, err)
	}
	if resp.Error != nil {
		if resp.Error.ErrCode == int(server.JSClusterServerNotMemberErr) {
			return fmt.Errorf("%w: %s", ErrUnknownNode, id)
		}
		return fmt.Errorf("cluster: removing %s from the storage: %s (%d)", id, resp.Error.Description, resp.Error.ErrCode)
	}
	if !resp.Success {
		return fmt.Errorf("cluster: removing %s from the storage: refused", id)
	}
	return nil
}

// ErrUnknownNode is returned by RemoveNode for a node the storage does
// not know.
var ErrUnknownNode = errors.New("cluster: the storage has no such node")
