package session

import (
	"context"
	json "encoding/json/v2"
	"fmt"
	"maps"
	"reflect"

	"github.com/mcp-actors/mcp-actors/internal/schema"
	"github.com/mcp-actors/mcp-actors/messages"
)

// ElicitOption configures Elicit.
type ElicitOption func(*elicitOptions)

type elicitOptions struct {
	strict bool
	raw    *map[string]any
}

// WithStrictKeys makes Elicit reject an answer with properties the form
// does not define. By default unknown properties are ignored.
func WithStrictKeys() ElicitOption { return func(o *elicitOptions) { o.strict = true } }

// WithRawCapture copies the answer's content, as decoded JSON, into dst.
func WithRawCapture(dst *map[string]any) ElicitOption {
	return func(o *elicitOptions) { o.raw = dst }
}

// Elicit asks the user, through the client, to fill a form (form-mode
// elicitation). target is a non-nil pointer to a flat struct: its JSON
// Schema comes from the fields' json and jsonschema tags (see
// internal/schema). On accept the answer is validated against that schema
// and decoded into target; target is left untouched on decline, cancel or a
// bad answer. It returns the user's action.
func (s *Session) Elicit(ctx context.Context, message string, target any, opts ...ElicitOption) (messages.ElicitAction, error) {
	var o elicitOptions
	for _, opt := range opts {
		opt(&o)
	}
	t := reflect.TypeOf(target)
	if t == nil || t.Kind() != reflect.Pointer || reflect.ValueOf(target).IsNil() {
		return messages.ElicitCancel, ErrInvalidElicitTarget
	}
	form, err := schema.FormFor(t)
	if err != nil {
		return messages.ElicitCancel, fmt.Errorf("%w: %w", ErrInvalidElicitTarget, err)
	}
	res, err := s.ElicitForm(ctx, &messages.ElicitParams{Message: message, RequestedSchema: form.Schema()})
	if err != nil {
		return messages.ElicitCancel, err
	}
	switch res.Action {
	case messages.ElicitAccept:
	case messages.ElicitDecline, messages.ElicitCancel:
		return res.Action, nil
	default:
		return messages.ElicitCancel, fmt.Errorf("session: the client answered elicitation with unknown action %q", res.Action)
	}
	if err := form.Decode(res.Content, target, o.strict); err != nil {
		return res.Action, fmt.Errorf("session: the elicitation answer does not fit the form: %w", err)
	}
	if o.raw != nil {
		var m map[string]any
		if err := json.Unmarshal(res.Content, &m); err == nil {
			*o.raw = maps.Clone(m)
		}
	}
	return res.Action, nil
}

// ElicitForm sends elicitation/create with params as given (form mode unless
// params.Mode is "url") and returns the client's answer unvalidated. The
// client must have declared the matching elicitation capability.
func (s *Session) ElicitForm(ctx context.Context, params *messages.ElicitParams) (*messages.ElicitResult, error) {
	caps := s.ClientCapabilities()
	p := *params
	if p.Mode == "url" {
		if !caps.SupportsURLElicitation() {
			return nil, s.missing("elicitation.url")
		}
	} else {
		if !caps.SupportsFormElicitation() {
			return nil, s.missing("elicitation.form")
		}
		// "mode" exists from 2025-11-25 on; older clients get the old shape.
		p.Mode = ""
		if s.ProtocolVersion() >= messages.Version20251125 {
			p.Mode = "form"
		}
	}
	var res messages.ElicitResult
	if err := s.callInto(ctx, messages.MethodElicit, &p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
