package messages

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
)

// Keys of the _meta object that the protocol itself defines.
const (
	// MetaKeyProgressToken names the token a requestor puts in a request's
	// _meta to ask for notifications/progress.
	MetaKeyProgressToken = "progressToken"
	// MetaKeyRelatedTask names the RelatedTaskMetadata that ties a message to
	// a task (2025-11-25).
	MetaKeyRelatedTask = "io.modelcontextprotocol/related-task"
	// MetaKeyModelImmediateResponse names a string a server may put in a
	// CreateTaskResult's _meta for the host to hand to the model while the
	// task runs (2025-11-25).
	MetaKeyModelImmediateResponse = "io.modelcontextprotocol/model-immediate-response"
)

// Meta is the _meta object that params, results and many wire types carry.
// Values stay raw JSON; the sender owns the keys it writes.
type Meta map[string]jsontext.Value

// ProgressToken is the token that correlates notifications/progress with the
// request that asked for them: a string or a number, kept as raw JSON.
type ProgressToken = ID

// ProgressToken returns the progressToken in m, if m has one that is a string
// or a number.
func (m Meta) ProgressToken() (ID, bool) {
	raw, ok := m[MetaKeyProgressToken]
	if !ok {
		return ID{}, false
	}
	token, err := ParseID(raw)
	if err != nil || token.IsZero() {
		return ID{}, false
	}
	return token, true
}

// RelatedTask returns the task ID under MetaKeyRelatedTask, if m has one.
func (m Meta) RelatedTask() (string, bool) {
	raw, ok := m[MetaKeyRelatedTask]
	if !ok {
		return "", false
	}
	var rt RelatedTaskMetadata
	if json.Unmarshal(raw, &rt) != nil || rt.TaskID == "" {
		return "", false
	}
	return rt.TaskID, true
}

// RelatedTaskMetadata is the value under MetaKeyRelatedTask.
type RelatedTaskMetadata struct {
	TaskID string `json:"taskId"`
}

// Empty is a presence-only object such as a capability with no settings.
// Use it as *Empty: nil is absent, non-nil marshals as {}.
type Empty struct{}

// EmptyResult is the result of ping and of other requests that return
// nothing but _meta. It marshals as {}.
type EmptyResult struct {
	Meta Meta `json:"_meta,omitempty"`
}

// PingParams are the params of ping.
type PingParams struct {
	Meta Meta `json:"_meta,omitempty"`
}

// PaginatedParams are the params of any paginated list request.
type PaginatedParams struct {
	// Cursor is the opaque nextCursor of the previous page; empty for the first.
	Cursor string `json:"cursor,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// Role is the speaker of a message in a conversation.
type Role string

// The roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Annotations tell the client how to use or display an object.
type Annotations struct {
	// Audience lists who the object is meant for.
	Audience []Role `json:"audience,omitempty"`
	// Priority is the importance from 0 (optional) to 1 (required).
	Priority *float64 `json:"priority,omitzero"`
	// LastModified is an ISO 8601 timestamp.
	LastModified string `json:"lastModified,omitempty"`
}

// Icon is an image a client may show for an implementation, tool, resource
// or prompt (2025-11-25).
type Icon struct {
	// Src is an http(s) or data: URI.
	Src      string `json:"src"`
	MimeType string `json:"mimeType,omitempty"`
	// Sizes are like "48x48", or "any" for scalable formats.
	Sizes []string `json:"sizes,omitempty"`
	// Theme is IconThemeLight, IconThemeDark or empty for any background.
	Theme string `json:"theme,omitempty"`
}

// Icon themes.
const (
	IconThemeLight = "light"
	IconThemeDark  = "dark"
)
