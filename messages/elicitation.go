package messages

import (
	"encoding/json/jsontext"
)

// Values of ElicitParams.Mode.
const (
	ElicitModeForm = "form"
	ElicitModeURL  = "url"
)

// ElicitParams are the params of elicitation/create (2025-06-18): a form
// the client renders from RequestedSchema, or (2025-11-25) a URL the user
// visits out of band.
type ElicitParams struct {
	// Mode is ElicitModeForm, ElicitModeURL or empty, which means form.
	Mode    string `json:"mode,omitempty"`
	Message string `json:"message"`
	// RequestedSchema is a flat object schema of primitive properties; form
	// mode only, where it is required.
	RequestedSchema jsontext.Value `json:"requestedSchema,omitempty"`
	// URL is the page to send the user to; URL mode only.
	URL string `json:"url,omitempty"`
	// ElicitationID identifies a URL-mode elicitation; the server echoes it
	// in notifications/elicitation/complete.
	ElicitationID string `json:"elicitationId,omitempty"`
	// Task asks for the request to run as a task (2025-11-25).
	Task *TaskMetadata `json:"task,omitzero"`
	Meta Meta          `json:"_meta,omitempty"`
}

// EffectiveMode returns the mode of the request, ElicitModeForm when Mode
// is empty.
func (p *ElicitParams) EffectiveMode() string {
	if p.Mode == "" {
		return ElicitModeForm
	}
	return p.Mode
}

// ElicitAction is the user's response to an elicitation.
type ElicitAction string

// The elicitation actions.
const (
	ElicitAccept  ElicitAction = "accept"
	ElicitDecline ElicitAction = "decline"
	ElicitCancel  ElicitAction = "cancel"
)

// ElicitResult is the client's answer to elicitation/create.
type ElicitResult struct {
	Action ElicitAction `json:"action"`
	// Content is the submitted form, an object of primitive values; form
	// mode with ElicitAccept only.
	Content jsontext.Value `json:"content,omitempty"`
	Meta    Meta           `json:"_meta,omitempty"`
}

// ElicitationCompleteParams are the params of
// notifications/elicitation/complete (2025-11-25).
type ElicitationCompleteParams struct {
	ElicitationID string `json:"elicitationId"`
	Meta          Meta   `json:"_meta,omitempty"`
}

// URLElicitationRequiredData is the data of a CodeURLElicitationRequired
// error: the URL-mode elicitations that must complete first (2025-11-25).
type URLElicitationRequiredData struct {
	// Elicitations never marshals as null.
	Elicitations []*ElicitParams `json:"elicitations"`
}
