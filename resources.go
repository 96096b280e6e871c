package mcpactors

import (
	"context"
	"errors"
	"fmt"

	"github.com/yosida95/uritemplate/v3"

	"github.com/mcp-actors/mcp-actors/messages"
)

// ReadResourceRequest is a resources/read as a resource handler sees it.
type ReadResourceRequest struct {
	URI string
	// Vars holds the values a template matched in URI (nil for a plain
	// resource).
	Vars map[string]string
	Meta messages.Meta
}

// ResourceHandler reads a resource. Return an error wrapping
// messages.ErrResourceNotFound for a URI it does not know.
type ResourceHandler func(ctx context.Context, s *Session, req *ReadResourceRequest) (*messages.ReadResourceResult, error)

type resource struct {
	def     *messages.Resource
	handler ResourceHandler
}

type resourceTemplate struct {
	def     *messages.ResourceTemplate
	tmpl    *uritemplate.Template
	handler ResourceHandler
}

// AddResource adds r, or replaces the resource with the same URI, and tells
// every open session that the resource list changed.
func (s *Server) AddResource(r *messages.Resource, h ResourceHandler) error {
	if r == nil || r.URI == "" || r.Name == "" || h == nil {
		return fmt.Errorf("%w: a resource needs a URI, a name and a handler", ErrInvalidItem)
	}
	def := *r
	s.mu.Lock()
	s.resources.Store(s.resources.Load().with(def.URI, &resource{def: &def, handler: h}))
	s.mu.Unlock()
	s.broadcast(messages.MethodResourcesListChanged, &messages.ListChangedParams{}, "")
	return nil
}

// AddResourceTemplate adds t (an RFC 6570 URI template), or replaces the one
// with the same template, and tells every open session that the resource
// list changed.
func (s *Server) AddResourceTemplate(t *messages.ResourceTemplate, h ResourceHandler) error {
	if t == nil || t.URITemplate == "" || t.Name == "" || h == nil {
		return fmt.Errorf("%w: a resource template needs a URI template, a name and a handler", ErrInvalidItem)
	}
	tmpl, err := uritemplate.New(t.URITemplate)
	if err != nil {
		return fmt.Errorf("%w: resource template %q: %w", ErrInvalidItem, t.URITemplate, err)
	}
	def := *t
	s.mu.Lock()
	s.templates.Store(s.templates.Load().with(def.URITemplate, &resourceTemplate{def: &def, tmpl: tmpl, handler: h}))
	s.mu.Unlock()
	s.broadcast(messages.MethodResourcesListChanged, &messages.ListChangedParams{}, "")
	return nil
}

// RemoveResources removes the resources with the given URIs.
func (s *Server) RemoveResources(uris ...string) {
	s.mu.Lock()
	next, removed := s.resources.Load().without(uris...)
	s.resources.Store(next)
	s.mu.Unlock()
	if removed {
		s.broadcast(messages.MethodResourcesListChanged, &messages.ListChangedParams{}, "")
	}
}

// RemoveResourceTemplates removes the templates with the given URI
// templates.
func (s *Server) RemoveResourceTemplates(templates ...string) {
	s.mu.Lock()
	next, removed := s.templates.Load().without(templates...)
	s.templates.Store(next)
	s.mu.Unlock()
	if removed {
		s.broadcast(messages.MethodResourcesListChanged, &messages.ListChangedParams{}, "")
	}
}

func (s *Server) listResources(req *messages.Message) (any, error) {
	var p messages.ListResourcesParams
	if err := messages.DecodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	page, next, perr := s.resources.Load().page("resources", p.Cursor, s.opts.PageSize)
	if perr != nil {
		return nil, perr
	}
	res := &messages.ListResourcesResult{Resources: make([]*messages.Resource, len(page)), NextCursor: next}
	for i, r := range page {
		res.Resources[i] = r.def
	}
	return res, nil
}

func (s *Server) listResourceTemplates(req *messages.Message) (any, error) {
	var p messages.ListResourceTemplatesParams
	if err := messages.DecodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	page, next, perr := s.templates.Load().page("templates", p.Cursor, s.opts.PageSize)
	if perr != nil {
		return nil, perr
	}
	res := &messages.ListResourceTemplatesResult{ResourceTemplates: make([]*messages.ResourceTemplate, len(page)), NextCursor: next}
	for i, t := range page {
		res.ResourceTemplates[i] = t.def
	}
	return res, nil
}

func (s *Server) readResource(ctx context.Context, sess *Session, req *messages.Message) (any, error) {
	var p messages.ReadResourceParams
	if err := messages.DecodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if p.URI == "" {
		return nil, messages.Errorf(messages.CodeInvalidParams, `invalid params: "uri" is required`)
	}
	rr := &ReadResourceRequest{URI: p.URI, Meta: p.Meta}
	var h ResourceHandler
	if r, ok := s.resources.Load().get(p.URI); ok {
		h = r.handler
	} else {
		h, rr.Vars = s.matchTemplate(p.URI)
	}
	if h == nil {
		return nil, resourceNotFound(p.URI)
	}
	res, err := h(ctx, sess, rr)
	if err != nil {
		if errors.Is(err, messages.ErrResourceNotFound) {
			return nil, resourceNotFound(p.URI)
		}
		return nil, err
	}
	if res == nil || res.Contents == nil {
		res = &messages.ReadResourceResult{Contents: []*messages.ResourceContents{}}
	}
	return res, nil
}

// matchTemplate finds the first template, in template order, matching uri.
func (s *Server) matchTemplate(uri string) (ResourceHandler, map[string]string) {
	ix := s.templates.Load()
	for _, k := range ix.keys {
		t := ix.items[k]
		vals := t.tmpl.Match(uri)
		if vals == nil {
			continue
		}
		vars := make(map[string]string, len(t.tmpl.Varnames()))
		for _, name := range t.tmpl.Varnames() {
			vars[name] = vals.Get(name).String()
		}
		return t.handler, vars
	}
	return nil, nil
}

func resourceNotFound(uri string) *messages.Error {
	return messages.Errorf(messages.CodeResourceNotFound, "resource not found: %s", uri).
		WithData(map[string]string{"uri": uri})
}
