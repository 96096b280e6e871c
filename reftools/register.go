package reftools

import (
	"encoding/json/jsontext"
	"errors"
	"fmt"
	"log/slog"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/messages"
)

// ErrNilServer is returned by Register when given no server.
var ErrNilServer = errors.New("reftools: nil server")

// noArgs is the input schema of a tool that takes no arguments.
var noArgs = jsontext.Value(`{"type":"object","properties":{}}`)

// refSet is the reference set registered on one server: the state its
// handlers share.
type refSet struct {
	srv  *mcpactors.Server
	opts options // read only
}

// Register adds every tool, resource, resource template, prompt and
// completion of the reference set to srv. The toggle's state and the
// watched resource's version are srv's (ToggleTool, ResourceVersion), so
// that in a cluster every node serves the same. It fails with the first
// item srv refuses.
func Register(srv *mcpactors.Server, opts ...Option) error {
	if srv == nil {
		return ErrNilServer
	}
	s := &refSet{srv: srv, opts: options{log: slog.Default()}}
	for _, o := range opts {
		o(&s.opts)
	}
	for _, add := range []func() error{
		s.addContentTools,
		s.addClientTools,
		s.addTimingTools,
		s.addDynamicTools,
		s.addSessionTools,
		s.addResources,
		s.addPrompts,
		s.addModernTools,
	} {
		if err := add(); err != nil {
			return fmt.Errorf("reftools: %w", err)
		}
	}
	return nil
}

// tool is one catalog entry for addTools.
type tool struct {
	def     *messages.Tool
	handler mcpactors.ToolHandler
}

// addTools adds the tools in order, stopping at the first error.
func (s *refSet) addTools(tools []tool) error {
	for _, t := range tools {
		if err := s.srv.AddTool(t.def, t.handler); err != nil {
			return err
		}
	}
	return nil
}

// text is a tool result holding one text block.
func text(s string) *messages.CallToolResult {
	return &messages.CallToolResult{Content: messages.ContentList{&messages.TextContent{Text: s}}}
}

// toolError is a tool result reporting a failure to the model.
func toolError(format string, args ...any) *messages.CallToolResult {
	res := text(fmt.Sprintf(format, args...))
	res.IsError = true
	return res
}
