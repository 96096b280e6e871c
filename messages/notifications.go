package messages

// ProgressParams are the params of notifications/progress.
type ProgressParams struct {
	// ProgressToken is the token from the request's _meta.
	ProgressToken ProgressToken `json:"progressToken"`
	// Progress increases with every notification, even when Total is unknown.
	Progress float64  `json:"progress"`
	Total    *float64 `json:"total,omitzero"`
	// Message describes the current progress (2025-03-26).
	Message string `json:"message,omitempty"`
	Meta    Meta   `json:"_meta,omitempty"`
}

// CancelledParams are the params of notifications/cancelled.
type CancelledParams struct {
	// RequestID is the ID of the request to cancel; omitted when zero.
	RequestID ID     `json:"requestId,omitzero"`
	Reason    string `json:"reason,omitempty"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// ListChangedParams are the params of the list_changed notifications of
// tools, prompts, resources and roots.
type ListChangedParams struct {
	Meta Meta `json:"_meta,omitempty"`
}

// ResourceUpdatedParams are the params of notifications/resources/updated.
type ResourceUpdatedParams struct {
	// URI is the resource that changed; it may be a sub-resource of the one
	// subscribed to.
	URI  string `json:"uri"`
	Meta Meta   `json:"_meta,omitempty"`
}
