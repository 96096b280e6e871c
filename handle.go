package mcpactors

import (
	"context"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// handle routes a client request to the catalog. Session actors call it,
// on a goroutine of its own, for every request they do not answer
// themselves.
func (s *Server) handle(ctx context.Context, ss *session.Session, req *messages.Message) (any, error) {
	sess := (*Session)(ss)
	switch req.Method {
	case messages.MethodListTools:
		return s.listTools(req)
	case messages.MethodCallTool:
		return s.callTool(ctx, sess, req)
	case messages.MethodListResources:
		return s.listResources(req)
	case messages.MethodListResourceTemplates:
		return s.listResourceTemplates(req)
	case messages.MethodReadResource:
		return s.readResource(ctx, sess, req)
	case messages.MethodListPrompts:
		return s.listPrompts(req)
	case messages.MethodGetPrompt:
		return s.getPrompt(ctx, sess, req)
	case messages.MethodComplete:
		return s.complete(ctx, sess, req)
	}
	return nil, messages.Errorf(messages.CodeMethodNotFound, "method not found: %q", req.Method)
}
