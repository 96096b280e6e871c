package messages

import (
	"encoding/json"
	"errors"
)

// Values of CreateMessageParams.IncludeContext.
const (
	IncludeContextNone       = "none"
	IncludeContextThisServer = "thisServer"
	IncludeContextAllServers = "allServers"
)

// Values of ToolChoice.Mode (2025-11-25).
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceRequired = "required"
	ToolChoiceNone     = "none"
)

// Standard values of CreateMessageResult.StopReason, which is open-ended.
const (
	StopReasonEndTurn      = "endTurn"
	StopReasonStopSequence = "stopSequence"
	StopReasonMaxTokens    = "maxTokens"
	StopReasonToolUse      = "toolUse"
)

// SamplingMessage is one message of a sampling conversation. On the wire its
// content is a single block or, since 2025-11-25, an array of blocks.
type SamplingMessage struct {
	Role Role `json:"role"`
	// Content is written as a single block when it holds exactly one, as
	// older clients expect, and as an array otherwise.
	Content ContentList `json:"content"`
	Meta    Meta        `json:"_meta,omitempty"`
}

// MarshalJSON writes the message with content as one block or an array.
func (m SamplingMessage) MarshalJSON() ([]byte, error) {
	content, err := marshalSamplingContent(m.Content)
	if err != nil {
		return nil, err
	}
	return marshalJSON(struct {
		Role    Role            `json:"role"`
		Content json.RawMessage `json:"content"`
		Meta    Meta            `json:"_meta,omitempty"`
	}{m.Role, content, m.Meta})
}

// UnmarshalJSON accepts content as one block or an array.
func (m *SamplingMessage) UnmarshalJSON(b []byte) error {
	var w struct {
		Role    Role            `json:"role"`
		Content json.RawMessage `json:"content"`
		Meta    Meta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	content, err := unmarshalSamplingContent(w.Content)
	if err != nil {
		return err
	}
	*m = SamplingMessage{Role: w.Role, Content: content, Meta: w.Meta}
	return nil
}

// marshalSamplingContent writes one block alone and any other number as an
// array.
func marshalSamplingContent(l ContentList) (json.RawMessage, error) {
	if len(l) == 1 {
		return marshalJSON(l[0])
	}
	return marshalJSON(l)
}

// unmarshalSamplingContent reads one block or an array of blocks.
func unmarshalSamplingContent(raw json.RawMessage) (ContentList, error) {
	if t, ok := fastText(raw); ok {
		return ContentList{t}, nil
	}
	switch firstByte(raw) {
	case '[':
		return unmarshalContentList(raw, true)
	case 0:
		return nil, errors.New("decoding sampling content: no content")
	}
	c, err := UnmarshalContent(raw)
	if err != nil {
		return nil, err
	}
	return ContentList{c}, nil
}

// CreateMessageParams are the params of sampling/createMessage.
type CreateMessageParams struct {
	// Messages never marshals as null.
	Messages         []*SamplingMessage `json:"messages"`
	ModelPreferences *ModelPreferences  `json:"modelPreferences,omitempty"`
	SystemPrompt     string             `json:"systemPrompt,omitempty"`
	// IncludeContext is one of the IncludeContext constants.
	IncludeContext string   `json:"includeContext,omitempty"`
	Temperature    *float64 `json:"temperature,omitempty"`
	MaxTokens      int64    `json:"maxTokens"`
	StopSequences  []string `json:"stopSequences,omitempty"`
	// Metadata is a provider-specific object passed through to the model.
	Metadata json.RawMessage `json:"metadata,omitempty"`
	// Tools the model may call (2025-11-25); needs SupportsSamplingTools.
	Tools      []*Tool     `json:"tools,omitempty"`
	ToolChoice *ToolChoice `json:"toolChoice,omitempty"`
	// Task asks for the request to run as a task (2025-11-25).
	Task *TaskMetadata `json:"task,omitempty"`
	Meta Meta          `json:"_meta,omitempty"`
}

// MarshalJSON writes the params with "messages" as [] when there are none.
func (p CreateMessageParams) MarshalJSON() ([]byte, error) {
	type fields CreateMessageParams
	p.Messages = nonNil(p.Messages)
	return marshalJSON(fields(p))
}

// ModelPreferences are the server's advice on which model to pick. The
// priorities run from 0 to 1.
type ModelPreferences struct {
	// Hints are tried in order; each is a substring of a model name.
	Hints                []*ModelHint `json:"hints,omitempty"`
	CostPriority         *float64     `json:"costPriority,omitempty"`
	SpeedPriority        *float64     `json:"speedPriority,omitempty"`
	IntelligencePriority *float64     `json:"intelligencePriority,omitempty"`
}

// ModelHint suggests a model by (part of) its name.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// ToolChoice controls whether the model may, must or must not use tools.
type ToolChoice struct {
	// Mode is one of the ToolChoice constants; empty means auto.
	Mode string `json:"mode,omitempty"`
}

// CreateMessageResult is the client's answer to sampling/createMessage.
type CreateMessageResult struct {
	Role Role `json:"role"`
	// Content is written as a single block when it holds exactly one and as
	// an array otherwise.
	Content ContentList `json:"content"`
	// Model names the model that answered.
	Model string `json:"model"`
	// StopReason is one of the StopReason constants or provider-specific.
	StopReason string `json:"stopReason,omitempty"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// MarshalJSON writes the result with content as one block or an array.
func (r CreateMessageResult) MarshalJSON() ([]byte, error) {
	content, err := marshalSamplingContent(r.Content)
	if err != nil {
		return nil, err
	}
	return marshalJSON(struct {
		Role       Role            `json:"role"`
		Content    json.RawMessage `json:"content"`
		Model      string          `json:"model"`
		StopReason string          `json:"stopReason,omitempty"`
		Meta       Meta            `json:"_meta,omitempty"`
	}{r.Role, content, r.Model, r.StopReason, r.Meta})
}

// UnmarshalJSON accepts content as one block or an array.
func (r *CreateMessageResult) UnmarshalJSON(b []byte) error {
	var out CreateMessageResult
	var rawContent []byte
	if scanMembers(b, func(name string, val []byte) bool {
		var ok bool
		switch name {
		case "role":
			var role string
			role, ok = unquote(val)
			out.Role = Role(role)
		case "model":
			out.Model, ok = unquote(val)
		case "stopReason":
			out.StopReason, ok = unquote(val)
		case "content":
			rawContent, ok = val, true
		default:
			return false // _meta and the rest: encoding/json
		}
		return ok
	}) && rawContent != nil {
		c, err := unmarshalSamplingContent(rawContent)
		if err != nil {
			return err
		}
		out.Content = c
		*r = out
		return nil
	}
	var w struct {
		Role       Role            `json:"role"`
		Content    json.RawMessage `json:"content"`
		Model      string          `json:"model"`
		StopReason string          `json:"stopReason"`
		Meta       Meta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	content, err := unmarshalSamplingContent(w.Content)
	if err != nil {
		return err
	}
	*r = CreateMessageResult{Role: w.Role, Content: content, Model: w.Model, StopReason: w.StopReason, Meta: w.Meta}
	return nil
}
