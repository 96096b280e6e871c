package session

import (
	"fmt"
	"strings"

	"github.com/mcp-actors/mcp-actors/messages"
)

// A Session serving a modern request (2026-07-28) has no session actor:
// it reads the request's _meta (after a retry, the retry's) and sends
// through the request's call (modernCall), which parks in a continuation
// once the handler asks the client for input.

// Modern reports whether the Session serves a request of the modern era
// (2026-07-28 on), which has no session.
func (s *Session) Modern() bool { return s.mod != nil }

// StartedBy returns, for a Session serving a modern request, what that
// request said as the runtime read it on arrival (its protocol _meta,
// the name or URI and arguments, and _meta whole): the request that
// started this run of the handler, also after a retry (which the
// Session's other methods read). Nil in a session.
func (s *Session) StartedBy() *messages.RequestMeta {
	if s.mod == nil {
		return nil
	}
	return s.mod.req.Meta
}

// missing is the error for a client feature the client did not declare:
// it wraps ErrCapability with the capability's name, and for a modern
// request also the MissingRequiredClientCapability error (-32021) a
// handler that returns it passes on to the client.
func (s *Session) missing(capability string) error {
	if s.mod == nil {
		return fmt.Errorf("%w: %s", ErrCapability, capability)
	}
	return fmt.Errorf("%w: %s: %w", ErrCapability, capability, messages.MissingCapabilityError(requiredCapability(capability), capability))
}

// requiredCapability is the ClientCapabilities object that declares one
// capability, named as missing names it ("sampling.tools").
func requiredCapability(name string) *messages.ClientCapabilities {
	c := &messages.ClientCapabilities{}
	top, sub, _ := strings.Cut(name, ".")
	switch top {
	case "roots":
		c.Roots = &messages.RootsCapabilities{}
	case "sampling":
		c.Sampling = &messages.SamplingCapabilities{}
		switch sub {
		case "tools":
			c.Sampling.Tools = &messages.Empty{}
		case "context":
			c.Sampling.Context = &messages.Empty{}
		}
	case "elicitation":
		c.Elicitation = &messages.ElicitationCapabilities{}
		switch sub {
		case "form":
			c.Elicitation.Form = &messages.Empty{}
		case "url":
			c.Elicitation.URL = &messages.Empty{}
		}
	}
	return c
}
