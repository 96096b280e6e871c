package mcpactors

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/internal/sealed"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Requests of protocol 2026-07-28 (the modern era) name no session: the
// server runs them where they land (session.Modern), beside the sessions
// of the legacy era, with the same handlers. A handler that asks the
// client for input (Elicit, CreateMessage, ListRoots) is kept in a
// continuation and the client gets input_required with a sealed
// requestState; SetRequestStateKeys gives the key that seals it.

// RequestStateKeySize is the length of a request state key (AES-256).
const RequestStateKeySize = sealed.KeySize

// ErrNoStateKey is returned by JoinCluster for a node with peers, no
// request state key (SetRequestStateKeys) and no route secret to derive
// one from (the cluster's routes authenticate by TLS alone, or it runs on
// external NATS): a retry may land on any node, and each must open what
// the others sealed.
var ErrNoStateKey = errors.New("mcpactors: a cluster node needs a request state key shared by every node (SetRequestStateKeys)")

// SetRequestStateKeys sets the keys that seal and open the requestState
// of modern requests: current seals and opens; previous, when not nil,
// only opens (during a rotation, what the old key sealed). Each is
// RequestStateKeySize bytes. Without keys a server uses a key of its own
// process, which only a lone node can; a cluster node derives one from
// the cluster's route secret (cluster.Node.StateKey), which every node
// shares. Call it before serving, and before JoinCluster.
func (s *Server) SetRequestStateKeys(current, previous []byte) error {
	sl, err := sealed.New(current, previous)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	s.modernOpt.Sealer = sl
	s.modern = session.NewModern(s.system.Root, s.cfg, s.modernOpt)
	s.stateKeys = true
	return nil
}

// InputKey returns a context under which a handler's call for the
// client's input (Elicit, CreateMessage, ListRoots), serving a request of
// protocol 2026-07-28, is named key in the input_required result's
// inputRequests; a retry's inputResponses under key answer it, with or
// without requestState. By default the runtime names each call. Legacy
// sessions ignore it.
func InputKey(ctx context.Context, key string) context.Context { return session.InputKey(ctx, key) }

// CompleteElicitation records that the out-of-band step of URL
// elicitation id (Session.ElicitURL), asked of principal, is done: the
// handler waiting for it goes on, on whichever node it runs. Call it from
// the page's own callback (on any node of a cluster), with the principal
// the callback authenticated ("" when the server authenticates no one):
// a completion by another principal completes nothing. In a cluster it is
// told to every node and written to the cluster's storage for as long as
// a requestState lives, so that a 2026-07-28 handler run again on a node
// that was down at the time does not ask the user again.
func (s *Server) CompleteElicitation(ctx context.Context, principal, id string) error {
	if id == "" {
		return fmt.Errorf("%w: an elicitation ID is needed", ErrInvalidOptions)
	}
	if s.cluster != nil {
		if err := s.cfg.URLElicitations.Record(ctx, id, principal); err != nil {
			// Every node up hears of it still; one restarted later asks again.
			s.log.Warn("a URL elicitation's completion could not be written to the cluster's storage", "err", err)
		}
		return s.cluster.PublishCompletion(ctx, id, principal) // every node, this one too
	}
	s.cfg.URLElicitations.Complete(id, principal)
	return nil
}

// checkModern checks a modern request before it is served: a tools/call's
// Mcp-Param headers against the parameters its tool mirrors
// (x-mcp-header).
func (s *Server) checkModern(req *messages.ModernRequest) *messages.Error {
	// Over stdio (no headers at all) nothing is mirrored.
	if req.Msg.Method != messages.MethodCallTool || req.ParamHeaders == nil || len(req.Meta.Arguments) == 0 {
		return nil
	}
	t, ok := s.tools.Load().get(req.Meta.Name)
	if !ok || len(t.mirrored) == 0 {
		return nil
	}
	return checkMirrored(t.mirrored, req.Meta.Arguments, req.ParamHeaders)
}

// Parked returns the number of handlers of protocol 2026-07-28 requests
// this node keeps waiting for their client's input.
func (s *Server) Parked() int { return s.modern.Parked() }

// Listens returns the number of subscriptions/listen streams open on this
// node.
func (s *Server) Listens() int { return s.listens.len() }
