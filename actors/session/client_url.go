package session

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"time"

	"github.com/mcp-actors/mcp-actors/messages"
)

// URL-mode elicitation: the user is sent to a page of the server's own
// (an OAuth flow, a payment, a secret typed out of the client's sight);
// the page's handler tells the server when the step is done
// (URLElicitations.Complete, from any node's HTTP callback in a cluster), and
// the handler that asked goes on.
//
//	legacy:  elicitation/create{mode:url, url, elicitationId} ─accept─▶ wait ─complete─▶ notifications/elicitation/complete, go on
//	modern:  input request{mode:url, url} ─retry(accept)─▶ wait (bounded) ─complete─▶ go on
//	                                                           └─not yet─▶ ask again (next round)

// ElicitURL asks the user, through the client, to open the page url(id)
// for an out-of-band step, and returns once the step is done: when the
// server's code calls URLElicitations.Complete with id and the principal of
// this request (the page's callback knows id from the URL it was given).
// It returns early with the user's decline or cancel, or ctx's end. The
// client must have declared elicitation.url. In the modern era a retry
// that comes before the step is done waits for it up to URLWait, then the
// client is asked again (same URL, same id).
func (s *Session) ElicitURL(ctx context.Context, message string, url func(id string) string) (messages.ElicitAction, error) {
	if !s.ClientCapabilities().SupportsURLElicitation() {
		return messages.ElicitCancel, s.missing("elicitation.url")
	}
	comp := s.urlElicitations()
	if comp == nil {
		return messages.ElicitCancel, fmt.Errorf("session: URL elicitation needs Config.URLElicitations")
	}
	id := s.elicitationID()
	p := &messages.ElicitParams{Mode: messages.ElicitModeURL, Message: message, URL: url(id)}
	if s.mod == nil {
		p.ElicitationID = id // 2026-07-28 has no elicitationId: requestState correlates
	}
	principal := s.principal()
	w := comp.watch(ctx, id, principal, s.mod != nil)
	defer comp.unwatch(w)
	for {
		var res messages.ElicitResult
		if err := s.callInto(ctx, messages.MethodElicit, p, &res); err != nil {
			return messages.ElicitCancel, err
		}
		if res.Action != messages.ElicitAccept {
			return res.Action, nil
		}
		done, err := s.waitStep(ctx, w, comp.modernWait)
		if err != nil {
			return messages.ElicitCancel, err
		}
		if done {
			if s.mod == nil {
				s.notifyComplete(id)
			}
			return messages.ElicitAccept, nil
		}
		// Modern, not done yet: ask again in the next round.
	}
}

// waitStep waits for the out-of-band step w: until ctx ends in a session,
// at most bound in a modern request (whose client then is asked again).
func (s *Session) waitStep(ctx context.Context, w *urlWait, bound time.Duration) (done bool, err error) {
	var timeout <-chan time.Time
	if s.mod != nil {
		t := time.NewTimer(bound)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-w.done:
		return true, nil
	case <-timeout:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// urlElicitations returns the server's URL elicitation registry.
func (s *Session) urlElicitations() *URLElicitations {
	if s.mod != nil {
		return s.mod.m.cfg.URLElicitations
	}
	return s.ref.urlElicitations
}

// principal returns who the request is from.
func (s *Session) principal() string {
	if s.mod != nil {
		return s.mod.req.Principal
	}
	return s.ref.principal
}

// elicitationID returns the ID of a new URL elicitation: random in a
// session; in a modern request the same for the same call on every run of
// its handler (from the request's seed, carried in requestState), so that
// a run again asks for the same URL.
func (s *Session) elicitationID() string {
	if s.mod == nil {
		var b [16]byte
		_, _ = rand.Read(b[:])
		return base64.RawURLEncoding.EncodeToString(b[:])
	}
	n := s.mod.urlCalls.Add(1)
	sum := sha256.Sum256([]byte(s.mod.seedOf() + "/" + strconv.FormatInt(n, 10)))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// notifyComplete tells a legacy session's client that elicitation id is
// done (notifications/elicitation/complete, 2025-11-25 on).
func (s *Session) notifyComplete(id string) {
	if s.ProtocolVersion() < messages.Version20251125 {
		return
	}
	frame, err := messages.EncodeNotification(messages.MethodElicitationComplete, &messages.ElicitationCompleteParams{ElicitationID: id})
	if err == nil {
		s.ref.post(&sendFrame{data: frame})
	}
}
