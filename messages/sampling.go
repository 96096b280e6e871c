package messages

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
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

// MarshalJSONTo writes the message with content as one block or an array
// (a choice by length, which v2 cannot make).
func (m SamplingMessage) MarshalJSONTo(enc *jsontext.Encoder) error {
	type fields SamplingMessage
	return marshalSampled(enc, (*fields)(&m), m.Content)
}

// UnmarshalJSONFrom accepts content as one block or an array.
func (m *SamplingMessage) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	type fields SamplingMessage
	var f fields
	content, err := unmarshalSampled(dec, &f)
	if err != nil {
		return err
	}
	*m = SamplingMessage(f)
	m.Content = content
	return nil
}

// sampled is a sampling message or result on the wire: its fields (a
// struct type without JSON methods), with the content member in Content's
// shape (its own Content member is shadowed).
type sampled[F, C any] struct {
	Fields  *F `json:",embed"`
	Content C  `json:"content"`
}

// marshalSampled writes fields with content as one block or an array.
func marshalSampled[F any](enc *jsontext.Encoder, fields *F, content ContentList) error {
	return json.MarshalEncode(enc, &sampled[F, any]{fields, samplingContent(content)})
}

// unmarshalSampled reads into fields and returns the content, one block or
// an array.
func unmarshalSampled[F any](dec *jsontext.Decoder, fields *F) (ContentList, error) {
	w := sampled[F, jsontext.Value]{Fields: fields}
	if err := json.UnmarshalDecode(dec, &w); err != nil {
		return nil, err
	}
	return unmarshalSamplingContent(w.Content)
}

// samplingContent is what a sampling message's content marshals as: one
// block alone, any other number as an array.
func samplingContent(l ContentList) any {
	if len(l) == 1 {
		return l[0]
	}
	return l
}

// unmarshalSamplingContent reads one block or an array of blocks.
func unmarshalSamplingContent(raw jsontext.Value) (ContentList, error) {
	switch raw.Kind() {
	case '[':
		return unmarshalContentList(raw, true)
	case 0, 'n':
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
	ModelPreferences *ModelPreferences  `json:"modelPreferences,omitzero"`
	SystemPrompt     string             `json:"systemPrompt,omitempty"`
	// IncludeContext is one of the IncludeContext constants.
	IncludeContext string   `json:"includeContext,omitempty"`
	Temperature    *float64 `json:"temperature,omitzero"`
	MaxTokens      int64    `json:"maxTokens"`
	StopSequences  []string `json:"stopSequences,omitempty"`
	// Metadata is a provider-specific object passed through to the model.
	Metadata jsontext.Value `json:"metadata,omitempty"`
	// Tools the model may call (2025-11-25); needs SupportsSamplingTools.
	Tools      []*Tool     `json:"tools,omitempty"`
	ToolChoice *ToolChoice `json:"toolChoice,omitzero"`
	// Task asks for the request to run as a task (2025-11-25).
	Task *TaskMetadata `json:"task,omitzero"`
	Meta Meta          `json:"_meta,omitempty"`
}

// ModelPreferences are the server's advice on which model to pick. The
// priorities run from 0 to 1.
type ModelPreferences struct {
	// Hints are tried in order; each is a substring of a model name.
	Hints                []*ModelHint `json:"hints,omitempty"`
	CostPriority         *float64     `json:"costPriority,omitzero"`
	SpeedPriority        *float64     `json:"speedPriority,omitzero"`
	IntelligencePriority *float64     `json:"intelligencePriority,omitzero"`
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

// MarshalJSONTo writes the result with content as one block or an array.
func (r CreateMessageResult) MarshalJSONTo(enc *jsontext.Encoder) error {
	type fields CreateMessageResult
	return marshalSampled(enc, (*fields)(&r), r.Content)
}

// UnmarshalJSONFrom accepts content as one block or an array.
func (r *CreateMessageResult) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	type fields CreateMessageResult
	var f fields
	content, err := unmarshalSampled(dec, &f)
	if err != nil {
		return err
	}
	*r = CreateMessageResult(f)
	r.Content = content
	return nil
}
