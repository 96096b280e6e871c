package messages

// Resource describes a resource a server can read.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	// Size is the raw size in bytes, when known.
	Size        *int64       `json:"size,omitzero"`
	Annotations *Annotations `json:"annotations,omitzero"`
	Icons       []Icon       `json:"icons,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI
// template.
type ResourceTemplate struct {
	URITemplate string       `json:"uriTemplate"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Annotations *Annotations `json:"annotations,omitzero"`
	Icons       []Icon       `json:"icons,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ListResourcesParams are the params of resources/list.
type ListResourcesParams struct {
	Cursor string `json:"cursor,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// ListResourcesResult is one page of resources/list.
type ListResourcesResult struct {
	// Resources never marshals as null.
	Resources  []*Resource `json:"resources"`
	NextCursor string      `json:"nextCursor,omitempty"`
	Meta       Meta        `json:"_meta,omitempty"`
}

// ListResourceTemplatesParams are the params of resources/templates/list.
type ListResourceTemplatesParams struct {
	Cursor string `json:"cursor,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// ListResourceTemplatesResult is one page of resources/templates/list.
type ListResourceTemplatesResult struct {
	// ResourceTemplates never marshals as null.
	ResourceTemplates []*ResourceTemplate `json:"resourceTemplates"`
	NextCursor        string              `json:"nextCursor,omitempty"`
	Meta              Meta                `json:"_meta,omitempty"`
}

// ReadResourceParams are the params of resources/read.
type ReadResourceParams struct {
	URI  string `json:"uri"`
	Meta Meta   `json:"_meta,omitempty"`
}

// ReadResourceResult is the result of resources/read.
type ReadResourceResult struct {
	// Contents never marshals as null.
	Contents []*ResourceContents `json:"contents"`
	Meta     Meta                `json:"_meta,omitempty"`
}

// SubscribeParams are the params of resources/subscribe.
type SubscribeParams struct {
	URI  string `json:"uri"`
	Meta Meta   `json:"_meta,omitempty"`
}

// UnsubscribeParams are the params of resources/unsubscribe.
type UnsubscribeParams struct {
	URI  string `json:"uri"`
	Meta Meta   `json:"_meta,omitempty"`
}
