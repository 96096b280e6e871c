package messages

import "encoding/json"

// Tool describes a tool a server offers.
type Tool struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the arguments object; it is required
	// on the wire, and nil marshals as {"type":"object"}.
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema is the JSON Schema of structuredContent (2025-06-18).
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	Execution    *ToolExecution   `json:"execution,omitempty"`
	Icons        []Icon           `json:"icons,omitempty"`
	Meta         Meta             `json:"_meta,omitempty"`
}

// MarshalJSON writes the tool, filling in an object schema when InputSchema
// is nil.
func (t Tool) MarshalJSON() ([]byte, error) {
	type fields Tool
	if t.InputSchema == nil {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	return marshalJSON(fields(t))
}

// ToolAnnotations are hints about a tool's behaviour. Clients must not trust
// them from servers they do not trust.
type ToolAnnotations struct {
	Title string `json:"title,omitempty"`
	// ReadOnlyHint says the tool does not modify its environment.
	ReadOnlyHint *bool `json:"readOnlyHint,omitempty"`
	// DestructiveHint says updates may be destructive (default true).
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	// IdempotentHint says repeated calls with the same arguments have no
	// further effect (default false).
	IdempotentHint *bool `json:"idempotentHint,omitempty"`
	// OpenWorldHint says the tool reaches outside entities (default true).
	OpenWorldHint *bool `json:"openWorldHint,omitempty"`
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

// MarshalJSON writes the page with "tools" as [] when there are none.
func (r ListToolsResult) MarshalJSON() ([]byte, error) {
	type fields ListToolsResult
	r.Tools = nonNil(r.Tools)
	return marshalJSON(fields(r))
}

// CallToolParams are the params of tools/call.
type CallToolParams struct {
	Name string `json:"name"`
	// Arguments is the arguments object, raw.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Task asks for the call to run as a task (2025-11-25).
	Task *TaskMetadata `json:"task,omitempty"`
	Meta Meta          `json:"_meta,omitempty"`
}

// CallToolResult is the result of tools/call. A tool's own failure is
// IsError with a message in Content, not a JSON-RPC error.
type CallToolResult struct {
	// Content is always written, as [] when empty.
	Content ContentList `json:"content"`
	// StructuredContent is an object matching the tool's OutputSchema.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	Meta              Meta            `json:"_meta,omitempty"`
}
