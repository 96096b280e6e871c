package messages

import "encoding/json"

// ToolUseContent is a sampling content block in which the model asks to
// call a tool (2025-11-25).
type ToolUseContent struct {
	// ID identifies this call; the matching ToolResultContent echoes it.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Input is the arguments object; nil marshals as {}.
	Input json.RawMessage `json:"input"`
	Meta  Meta            `json:"_meta,omitempty"`
}

// ToolResultContent is a sampling content block that carries the result of
// a tool call back to the model (2025-11-25).
type ToolResultContent struct {
	// ToolUseID is the ID of the ToolUseContent this answers.
	ToolUseID string `json:"toolUseId"`
	// Content holds the result's blocks; tool_use and tool_result blocks
	// cannot nest here. A nil list marshals as [].
	Content           ContentList     `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	Meta              Meta            `json:"_meta,omitempty"`
}

func (*ToolUseContent) isContent()    {}
func (*ToolResultContent) isContent() {}

// MarshalJSON writes the block with "type":"tool_use".
func (c ToolUseContent) MarshalJSON() ([]byte, error) {
	type fields ToolUseContent
	if c.Input == nil {
		c.Input = json.RawMessage("{}")
	}
	return marshalTyped(ContentTypeToolUse, fields(c))
}

// MarshalJSON writes the block with "type":"tool_result".
func (c ToolResultContent) MarshalJSON() ([]byte, error) {
	type fields ToolResultContent
	return marshalTyped(ContentTypeToolResult, fields(c))
}

// UnmarshalJSON decodes the block, refusing nested tool_use and tool_result
// blocks so that nesting stays one level deep.
func (c *ToolResultContent) UnmarshalJSON(b []byte) error {
	type fields ToolResultContent
	var w struct {
		fields
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = ToolResultContent(w.fields)
	if w.Content == nil {
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
