package session

import (
	"context"

	"github.com/mcp-actors/mcp-actors/messages"
)

// CreateMessage asks the client to sample a message from its model
// (sampling/createMessage). Tools and ToolChoice need the client's
// sampling.tools capability, and an IncludeContext other than "none" its
// sampling.context; without them nothing is sent and the error names the
// capability.
func (s *Session) CreateMessage(ctx context.Context, p *messages.CreateMessageParams) (*messages.CreateMessageResult, error) {
	caps := s.ClientCapabilities()
	switch {
	case !caps.SupportsSampling():
		return nil, s.missing("sampling")
	case (len(p.Tools) > 0 || p.ToolChoice != nil) && !caps.SupportsSamplingTools():
		return nil, s.missing("sampling.tools")
	case p.IncludeContext != "" && p.IncludeContext != "none" && caps.Sampling.Context == nil:
		return nil, s.missing("sampling.context")
	}
	var res messages.CreateMessageResult
	if err := s.callInto(ctx, messages.MethodCreateMessage, p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
