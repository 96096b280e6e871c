package mcpactors

import (
	"bytes"
	"context"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"fmt"
	"reflect"

	"github.com/mcp-actors/mcp-actors/internal/schema"
	"github.com/mcp-actors/mcp-actors/messages"
)

// CallToolRequest is a tools/call as a tool handler sees it. Arguments have
// already passed the tool's input schema.
type CallToolRequest struct {
	Name      string
	Arguments jsontext.Value // `{}` when the client sent none
	Meta      messages.Meta
}

// ToolHandler runs a tool. A returned error that is a *messages.Error becomes
// a JSON-RPC error; any other error becomes a result with isError true and
// the error's text, which the model can read.
type ToolHandler func(ctx context.Context, s *Session, req *CallToolRequest) (*messages.CallToolResult, error)

// tool is a catalog entry: the definition and its compiled schemas.
type tool struct {
	def     *messages.Tool
	handler ToolHandler
	input   *schema.Validator
	output  *schema.Validator // nil without an output schema
	// mirrored are the parameters clients mirror into Mcp-Param headers
	// (x-mcp-header).
	mirrored []mirroredParam
}

// emptyObjectSchema is the input schema of a tool that takes no arguments.
var emptyObjectSchema = jsontext.Value(`{"type":"object","properties":{}}`)

// AddTool adds t, or replaces the tool with the same name, and tells every
// open session that the tool list changed. t.InputSchema is JSON Schema
// (2020-12 unless it says otherwise) kept exactly as given; nil means no
// arguments. It must describe an object.
func (s *Server) AddTool(t *messages.Tool, h ToolHandler) error {
	if t == nil || t.Name == "" || h == nil {
		return fmt.Errorf("%w: a tool needs a name and a handler", ErrInvalidItem)
	}
	def := *t
	def.InputSchema = bytes.Clone(def.InputSchema) // the caller may reuse its bytes
	def.OutputSchema = bytes.Clone(def.OutputSchema)
	if def.InputSchema == nil {
		def.InputSchema = emptyObjectSchema
	}
	if !isObjectSchema(def.InputSchema) {
		return fmt.Errorf("%w: tool %q: the input schema must be a JSON object with \"type\": \"object\"", ErrInvalidItem, t.Name)
	}
	in, err := schema.Compile(def.InputSchema)
	if err != nil {
		return fmt.Errorf("%w: tool %q: input schema: %w", ErrInvalidItem, t.Name, err)
	}
	mirrored, err := mirroredParams(def.InputSchema)
	if err != nil {
		return fmt.Errorf("%w: tool %q: %w", ErrInvalidItem, t.Name, err)
	}
	entry := &tool{def: &def, handler: h, input: in, mirrored: mirrored}
	if def.OutputSchema != nil {
		if !isObjectSchema(def.OutputSchema) {
			return fmt.Errorf("%w: tool %q: the output schema must describe an object", ErrInvalidItem, t.Name)
		}
		if entry.output, err = schema.Compile(def.OutputSchema); err != nil {
			return fmt.Errorf("%w: tool %q: output schema: %w", ErrInvalidItem, t.Name, err)
		}
	}
	s.mu.Lock()
	s.tools.Store(s.tools.Load().with(def.Name, entry))
	s.mu.Unlock()
	s.broadcast(messages.MethodToolsListChanged, &messages.ListChangedParams{}, "")
	return nil
}

// TypedToolHandler is a tool handler over Go types: In is decoded from the
// arguments, Out becomes structuredContent.
type TypedToolHandler[In, Out any] func(ctx context.Context, s *Session, in In) (*messages.CallToolResult, Out, error)

// AddTypedTool adds a tool whose input schema (unless t has one) is derived
// from In and whose output schema (unless t has one, or Out is an
// interface) from Out. The handler's Out value is sent as structuredContent
// and, when the result has no content, also as JSON text.
func AddTypedTool[In, Out any](s *Server, t *messages.Tool, h TypedToolHandler[In, Out]) error {
	if t == nil || h == nil {
		return fmt.Errorf("%w: a tool needs a definition and a handler", ErrInvalidItem)
	}
	def := *t
	var err error
	if def.InputSchema == nil {
		if def.InputSchema, err = schema.For(reflect.TypeFor[In]()); err != nil {
			return fmt.Errorf("%w: tool %q: input type: %w", ErrInvalidItem, t.Name, err)
		}
	}
	outType := reflect.TypeFor[Out]()
	structured := outType.Kind() != reflect.Interface
	if def.OutputSchema == nil && structured {
		if def.OutputSchema, err = schema.ForOutput(outType); err != nil {
			return fmt.Errorf("%w: tool %q: output type: %w", ErrInvalidItem, t.Name, err)
		}
	}
	return s.AddTool(&def, func(ctx context.Context, sess *Session, req *CallToolRequest) (*messages.CallToolResult, error) {
		var in In
		if err := json.Unmarshal(req.Arguments, &in); err != nil {
			return toolError("invalid arguments: " + messages.DecodeErrorText(err)), nil
		}
		res, out, err := h(ctx, sess, in)
		if err != nil {
			return res, err
		}
		if res == nil {
			res = &messages.CallToolResult{}
		}
		if structured && res.StructuredContent == nil {
			raw, err := messages.Marshal(out)
			if err != nil {
				return nil, fmt.Errorf("encoding the tool's output: %w", err)
			}
			res.StructuredContent = raw
			if len(res.Content) == 0 {
				res.Content = messages.ContentList{&messages.TextContent{Text: string(raw)}}
			}
		}
		return res, nil
	})
}

// RemoveTools removes the named tools; if any existed, every open session
// is told the tool list changed.
func (s *Server) RemoveTools(names ...string) {
	s.mu.Lock()
	next, removed := s.tools.Load().without(names...)
	s.tools.Store(next)
	s.mu.Unlock()
	if removed {
		s.broadcast(messages.MethodToolsListChanged, &messages.ListChangedParams{}, "")
	}
}

// HasTool reports whether the tool name is in the catalog: added, and
// enabled (SetToolEnabled), so listed and callable.
func (s *Server) HasTool(name string) bool {
	_, ok := s.tools.Load().get(name)
	return ok
}

func (s *Server) listTools(req *messages.Message) (any, error) {
	var p messages.ListToolsParams
	if err := messages.DecodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	page, next, perr := s.tools.Load().page("tools", p.Cursor, s.opts.PageSize)
	if perr != nil {
		return nil, perr
	}
	res := &messages.ListToolsResult{Tools: make([]*messages.Tool, len(page)), NextCursor: next}
	for i, t := range page {
		res.Tools[i] = t.def
	}
	return res, nil
}

func (s *Server) callTool(ctx context.Context, sess *Session, req *messages.Message) (any, error) {
	p := &messages.CallToolParams{}
	if rm := sess.StartedBy(); rm != nil {
		// Read on arrival already (name, arguments and _meta).
		p.Name, p.Arguments, p.Meta = rm.Name, rm.Arguments, rm.Meta
	} else if perr := messages.DecodeParams(req.Params, p); perr != nil {
		return nil, perr
	}
	if p.Name == "" {
		return nil, messages.Errorf(messages.CodeInvalidParams, `invalid params: "name" is required`)
	}
	t, ok := s.tools.Load().get(p.Name)
	if !ok {
		return nil, messages.Errorf(messages.CodeInvalidParams, "invalid params: unknown tool %q", p.Name)
	}
	// Arguments that are not an object fail the input schema below and
	// become an isError result, as any other input validation error
	// (SEP-1303), so that the model can correct itself.
	args := bytes.TrimSpace(p.Arguments)
	if len(args) == 0 || string(args) == "null" {
		args = jsontext.Value(`{}`)
	}
	if err := t.input.Validate(args); err != nil {
		return toolError("invalid arguments: " + err.Error()), nil
	}
	res, err := t.handler(ctx, sess, &CallToolRequest{Name: p.Name, Arguments: args, Meta: p.Meta})
	if err != nil {
		var wire *messages.Error
		if errors.As(err, &wire) {
			return nil, wire
		}
		return toolError(err.Error()), nil
	}
	if res == nil {
		res = &messages.CallToolResult{}
	}
	if t.output != nil && !res.IsError {
		if res.StructuredContent == nil {
			return toolError("the tool returned no structured content for its output schema"), nil
		}
		if err := t.output.Validate(res.StructuredContent); err != nil {
			return toolError("the tool's output does not match its output schema: " + err.Error()), nil
		}
	}
	return res, nil
}

// toolError is a tool result reporting a failure to the model.
func toolError(text string) *messages.CallToolResult {
	return &messages.CallToolResult{IsError: true, Content: messages.ContentList{&messages.TextContent{Text: text}}}
}

// isObjectSchema reports whether raw is a JSON object schema of type object.
func isObjectSchema(raw jsontext.Value) bool {
	var s struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return false
	}
	return s.Type == "object"
}
