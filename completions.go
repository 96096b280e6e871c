package mcpactors

import (
	"context"
	"fmt"

	"github.com/mcp-actors/mcp-actors/messages"
)

// maxCompletionValues is the spec's cap on values in one completion result.
const maxCompletionValues = 100

// CompletionHandler suggests values for one argument of a prompt or
// resource template.
type CompletionHandler func(ctx context.Context, s *Session, req *messages.CompleteParams) (*messages.CompleteResult, error)

// AddCompletion makes h answer completion/complete for ref (a "ref/prompt"
// with Name, or a "ref/resource" with the template's URI), replacing any
// handler for it.
func (s *Server) AddCompletion(ref messages.CompleteReference, h CompletionHandler) error {
	key, err := completionKey(&ref)
	if err != nil || h == nil {
		return fmt.Errorf("%w: a completion needs a valid reference and a handler", ErrInvalidItem)
	}
	s.mu.Lock()
	s.completions.Store(s.completions.Load().with(key, h))
	s.mu.Unlock()
	return nil
}

// RemoveCompletion removes the handler for ref.
func (s *Server) RemoveCompletion(ref messages.CompleteReference) {
	key, err := completionKey(&ref)
	if err != nil {
		return
	}
	s.mu.Lock()
	next, _ := s.completions.Load().without(key)
	s.completions.Store(next)
	s.mu.Unlock()
}

func completionKey(ref *messages.CompleteReference) (string, *messages.Error) {
	switch {
	case ref == nil:
	case ref.Type == "ref/prompt" && ref.Name != "":
		return "prompt:" + ref.Name, nil
	case ref.Type == "ref/resource" && ref.URI != "":
		return "resource:" + ref.URI, nil
	}
	return "", messages.Errorf(messages.CodeInvalidParams, `invalid params: "ref" must be a ref/prompt with a name or a ref/resource with a uri`)
}

func (s *Server) complete(ctx context.Context, sess *Session, req *messages.Message) (any, error) {
	var p messages.CompleteParams
	if err := messages.DecodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	key, kerr := completionKey(p.Ref)
	if kerr != nil {
		return nil, kerr
	}
	h, ok := s.completions.Load().get(key)
	if !ok {
		if !s.refExists(p.Ref) {
			return nil, messages.Errorf(messages.CodeInvalidParams, "invalid params: unknown %s %q", p.Ref.Type, p.Ref.Name+p.Ref.URI)
		}
		return &messages.CompleteResult{Completion: messages.CompletionResultValues{Values: []string{}}}, nil
	}
	res, err := h(ctx, sess, &p)
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = &messages.CompleteResult{}
	}
	if res.Completion.Values == nil {
		res.Completion.Values = []string{}
	}
	if len(res.Completion.Values) > maxCompletionValues {
		res.Completion.Values = res.Completion.Values[:maxCompletionValues]
		res.Completion.HasMore = true
	}
	return res, nil
}

// refExists reports whether a completion reference names a catalog item.
func (s *Server) refExists(ref *messages.CompleteReference) bool {
	if ref.Type == "ref/prompt" {
		_, ok := s.prompts.Load().get(ref.Name)
		return ok
	}
	if _, ok := s.resources.Load().get(ref.URI); ok {
		return true
	}
	_, ok := s.templates.Load().get(ref.URI)
	return ok
}
