package messages

import (
	"encoding/json/jsontext"
)

// ClientCapabilities are the features a client offers, sent in initialize.
type ClientCapabilities struct {
	// Experimental holds non-standard capabilities by name.
	Experimental map[string]jsontext.Value `json:"experimental,omitempty"`
	Roots        *RootsCapabilities        `json:"roots,omitzero"`
	Sampling     *SamplingCapabilities     `json:"sampling,omitzero"`
	Elicitation  *ElicitationCapabilities  `json:"elicitation,omitzero"`
	// Tasks is the 2025-11-25 tasks capability (list, cancel, and which
	// requests may be task-augmented), kept raw.
	Tasks jsontext.Value `json:"tasks,omitempty"`
}

// RootsCapabilities says the client can list roots.
type RootsCapabilities struct {
	// ListChanged says the client sends notifications/roots/list_changed.
	ListChanged bool `json:"listChanged,omitzero"`
}

// SamplingCapabilities says the client can sample from a model.
type SamplingCapabilities struct {
	// Context says the client honours includeContext other than "none".
	Context *Empty `json:"context,omitzero"`
	// Tools says the client accepts tools and toolChoice (2025-11-25).
	Tools *Empty `json:"tools,omitzero"`
}

// ElicitationCapabilities says the client can ask its user for input.
// An empty object (2025-06-18) means form mode only.
type ElicitationCapabilities struct {
	Form *Empty `json:"form,omitzero"`
	URL  *Empty `json:"url,omitzero"`
}

// SupportsFormElicitation reports whether the client accepts form-mode
// elicitation/create: it declared form, or declared elicitation without url
// as a 2025-06-18 client does.
func (c *ClientCapabilities) SupportsFormElicitation() bool {
	if c == nil || c.Elicitation == nil {
		return false
	}
	return c.Elicitation.Form != nil || c.Elicitation.URL == nil
}

// SupportsURLElicitation reports whether the client accepts URL-mode
// elicitation/create.
func (c *ClientCapabilities) SupportsURLElicitation() bool {
	return c != nil && c.Elicitation != nil && c.Elicitation.URL != nil
}

// SupportsSampling reports whether the client accepts sampling/createMessage.
func (c *ClientCapabilities) SupportsSampling() bool {
	return c != nil && c.Sampling != nil
}

// SupportsSamplingTools reports whether sampling/createMessage may carry
// tools and toolChoice.
func (c *ClientCapabilities) SupportsSamplingTools() bool {
	return c.SupportsSampling() && c.Sampling.Tools != nil
}

// SupportsRoots reports whether the client answers roots/list.
func (c *ClientCapabilities) SupportsRoots() bool {
	return c != nil && c.Roots != nil
}

// ServerCapabilities are the features a server offers, sent in its
// InitializeResult.
type ServerCapabilities struct {
	// Experimental holds non-standard capabilities by name.
	Experimental map[string]jsontext.Value `json:"experimental,omitempty"`
	// Logging says the server sends notifications/message and accepts
	// logging/setLevel.
	Logging *Empty `json:"logging,omitzero"`
	// Completions says the server answers completion/complete.
	Completions *Empty                 `json:"completions,omitzero"`
	Prompts     *PromptsCapabilities   `json:"prompts,omitzero"`
	Resources   *ResourcesCapabilities `json:"resources,omitzero"`
	Tools       *ToolsCapabilities     `json:"tools,omitzero"`
	// Tasks is the 2025-11-25 tasks capability, kept raw.
	Tasks jsontext.Value `json:"tasks,omitempty"`
}

// PromptsCapabilities says the server offers prompts.
type PromptsCapabilities struct {
	// ListChanged says the server sends notifications/prompts/list_changed.
	ListChanged bool `json:"listChanged,omitzero"`
}

// ResourcesCapabilities says the server offers resources.
type ResourcesCapabilities struct {
	// Subscribe says the server accepts resources/subscribe.
	Subscribe bool `json:"subscribe,omitzero"`
	// ListChanged says the server sends notifications/resources/list_changed.
	ListChanged bool `json:"listChanged,omitzero"`
}

// ToolsCapabilities says the server offers tools.
type ToolsCapabilities struct {
	// ListChanged says the server sends notifications/tools/list_changed.
	ListChanged bool `json:"listChanged,omitzero"`
}
