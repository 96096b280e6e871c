package mcpactors

import (
	"context"
	"fmt"

	"github.com/mcp-actors/mcp-actors/messages"
)

// GetPromptRequest is a prompts/get as a prompt handler sees it. Every
// required argument is present.
type GetPromptRequest struct {
	Name      string
	Arguments map[string]string
	Meta      messages.Meta
}

// PromptHandler renders a prompt.
type PromptHandler func(ctx context.Context, s *Session, req *GetPromptRequest) (*messages.GetPromptResult, error)

type prompt struct {
	def     *messages.Prompt
	handler PromptHandler
}

// AddPrompt adds p, or replaces the prompt with the same name, and tells
// every open session that the prompt list changed.
func (s *Server) AddPrompt(p *messages.Prompt, h PromptHandler) error {
	if p == nil || p.Name == "" || h == nil {
		return fmt.Errorf("%w: a prompt needs a name and a handler", ErrInvalidItem)
	}
	def := *p
	s.mu.Lock()
	s.prompts.Store(s.prompts.Load().with(def.Name, &prompt{def: &def, handler: h}))
	s.mu.Unlock()
	s.broadcast(messages.MethodPromptsListChanged, &messages.ListChangedParams{}, "")
	return nil
}

// RemovePrompts removes the named prompts.
func (s *Server) RemovePrompts(names ...string) {
	s.mu.Lock()
	next, removed := s.prompts.Load().without(names...)
	s.prompts.Store(next)
	s.mu.Unlock()
	if removed {
		s.broadcast(messages.MethodPromptsListChanged, &messages.ListChangedParams{}, "")
	}
}

func (s *Server) listPrompts(req *messages.Message) (any, error) {
	var p messages.ListPromptsParams
	if err := messages.DecodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	page, next, perr := s.prompts.Load().page("prompts", p.Cursor, s.opts.PageSize)
	if perr != nil {
		return nil, perr
	}
	res := &messages.ListPromptsResult{Prompts: make([]*messages.Prompt, len(page)), NextCursor: next}
	for i, pr := range page {
		res.Prompts[i] = pr.def
	}
	return res, nil
}

func (s *Server) getPrompt(ctx context.Context, sess *Session, req *messages.Message) (any, error) {
	var p messages.GetPromptParams
	if err := messages.DecodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	pr, ok := s.prompts.Load().get(p.Name)
	if !ok {
		return nil, messages.Errorf(messages.CodeInvalidParams, "invalid params: unknown prompt %q", p.Name)
	}
	for _, a := range pr.def.Arguments {
		if _, ok := p.Arguments[a.Name]; a.Required && !ok {
			return nil, messages.Errorf(messages.CodeInvalidParams, "invalid params: prompt %q needs argument %q", p.Name, a.Name)
		}
	}
	args := p.Arguments
	if args == nil {
		args = map[string]string{}
	}
	res, err := pr.handler(ctx, sess, &GetPromptRequest{Name: p.Name, Arguments: args, Meta: p.Meta})
	if err != nil {
		return nil, err
	}
	if res == nil || res.Messages == nil {
		res = &messages.GetPromptResult{Messages: []*messages.PromptMessage{}}
	}
	return res, nil
}
