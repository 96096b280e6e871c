package messages

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
)

// Tool describes a tool a server offers.
type Tool struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the arguments object; it is required
	// on the wire, and nil marshals as {"type":"object"}.
	InputSchema jsontext.Value `json:"inputSchema"`
	// OutputSchema is the JSON Schema of structuredContent (2025-06-18).
	OutputSchema jsontext.Value   `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitzero"`
	Execution    *ToolExecution   `json:"execution,omitzero"`
	Icons        []Icon           `json:"icons,omitempty"`
	Meta         Meta             `json:"_meta,omitempty"`
}

// MarshalJSONTo writes the tool, filling in an object schema when
// InputSchema is nil (a default, which v2 tags cannot give).
func (t Tool) MarshalJSONTo(enc *jsontext.Encoder) error {
	type fields Tool
	if t.InputSchema == nil {
		t.InputSchema = jsontext.Value(`{"type":"object"}`)
	}
	return json.MarshalEncode(enc, (*fields)(&t))
}

// ToolAnnotations are hints about a tool's behaviour. Clients must not trust
// them from servers they do not trust.
type ToolAnnotations struct {
	Title string `json:"title,omitempty"`
	// ReadOnlyHint says the tool does not modify its environment.
	ReadOnlyHint *bool `json:"readOnlyHint,omitzero"`
	// DestructiveHint says updates may be destructive (default true).
	DestructiveHint *bool `json:"destructiveHint,omitzero"`
	// IdempotentHint says repeated calls with the same arguments have no
	// further effect (default false).
	IdempotentHint *bool `json:"idempotentHint,omitzero"`
	// OpenWorldHint says the tool reaches outside entities (default true).
	OpenWorldHint *bool `json:"openWorldHint,omitzero"`
}

// ToolExecution says how a tool may be run (2025-11-25).
type ToolExecution struct {
	// TaskSupport is TaskSupportForbidden (the default when empty),
	// TaskSupportOptional or TaskSupportRequired.
	TaskSupport string `json:"taskSupport,omitempty"`
}

// Values of ToolExecution.TaskSupport.
const (
	TaskSupportForbidden = "forbidden"
	TaskSupportOptional  = "optional"
	TaskSupportRequired  = "required"
)

// ListToolsParams are the params of tools/list.
type ListToolsParams struct {
	Cursor string `json:"cursor,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// ListToolsResult is one page of tools/list.
type ListToolsResult struct {
	// Tools never marshals as null.
	Tools      []*Tool `json:"tools"`
	NextCursor string  `json:"nextCursor,omitempty"`
	Meta       Meta    `json:"_meta,omitempty"`
}

// CallToolParams are the params of tools/call.
type CallToolParams struct {
	Name string `json:"name"`
	// Arguments is the arguments object, raw.
	Arguments jsontext.Value `json:"arguments,omitempty"`
	// Task asks for the call to run as a task (2025-11-25).
	Task *TaskMetadata `json:"task,omitzero"`
	Meta Meta          `json:"_meta,omitempty"`
}

// CallToolResult is the result of tools/call. A tool's own failure is
// IsError with a message in Content, not a JSON-RPC error.
type CallToolResult struct {
	// Content is always written, as [] when empty.
	Content ContentList `json:"content"`
	// StructuredContent is an object matching the tool's OutputSchema.
	StructuredContent jsontext.Value `json:"structuredContent,omitempty"`
	IsError           bool           `json:"isError,omitzero"`
	Meta              Meta           `json:"_meta,omitempty"`
}
