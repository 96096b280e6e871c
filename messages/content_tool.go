package messages

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
)

// ToolUseContent is a sampling content block in which the model asks to
// call a tool (2025-11-25).
type ToolUseContent struct {
	// ID identifies this call; the matching ToolResultContent echoes it.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Input is the arguments object; nil marshals as {}.
	Input jsontext.Value `json:"input"`
	Meta  Meta           `json:"_meta,omitempty"`
}

// ToolResultContent is a sampling content block that carries the result of
// a tool call back to the model (2025-11-25).
type ToolResultContent struct {
	// ToolUseID is the ID of the ToolUseContent this answers.
	ToolUseID string `json:"toolUseId"`
	// Content holds the result's blocks; tool_use and tool_result blocks
	// cannot nest here. A nil list marshals as [].
	Content           ContentList    `json:"content"`
	StructuredContent jsontext.Value `json:"structuredContent,omitempty"`
	IsError           bool           `json:"isError,omitzero"`
	Meta              Meta           `json:"_meta,omitempty"`
}

func (*ToolUseContent) isContent()    {}
func (*ToolResultContent) isContent() {}

// MarshalJSONTo writes the block with "type":"tool_use".
func (c ToolUseContent) MarshalJSONTo(enc *jsontext.Encoder) error {
	type fields ToolUseContent
	if c.Input == nil {
		c.Input = jsontext.Value("{}")
	}
	return marshalTyped(enc, ContentTypeToolUse, (*fields)(&c))
}

// MarshalJSONTo writes the block with "type":"tool_result".
func (c ToolResultContent) MarshalJSONTo(enc *jsontext.Encoder) error {
	type fields ToolResultContent
	return marshalTyped(enc, ContentTypeToolResult, (*fields)(&c))
}

// UnmarshalJSONFrom decodes the block, refusing nested tool_use and
// tool_result blocks so that nesting stays one level deep (the schema's
// bound, which v2 cannot express).
func (c *ToolResultContent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	type fields ToolResultContent
	var w struct {
		fields
		Content jsontext.Value `json:"content"`
	}
	if err := json.UnmarshalDecode(dec, &w); err != nil {
		return err
	}
	*c = ToolResultContent(w.fields)
	if w.Content == nil || w.Content.Kind() == 'n' {
		c.Content = nil
		return nil
	}
	list, err := unmarshalContentList(w.Content, false)
	if err != nil {
		return err
	}
	c.Content = list
	return nil
}
