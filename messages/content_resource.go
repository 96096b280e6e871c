package messages

// ResourceLink is a content block that points at a resource the client may
// read (2025-06-18).
type ResourceLink struct {
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Size        *int64       `json:"size,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// EmbeddedResource is a content block that carries a resource's contents.
type EmbeddedResource struct {
	Resource    *ResourceContents `json:"resource"`
	Annotations *Annotations      `json:"annotations,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

func (*ResourceLink) isContent()     {}
func (*EmbeddedResource) isContent() {}

// MarshalJSON writes the block with "type":"resource_link".
func (c ResourceLink) MarshalJSON() ([]byte, error) {
	type fields ResourceLink
	return marshalTyped(ContentTypeResourceLink, fields(c))
}

// MarshalJSON writes the block with "type":"resource".
func (c EmbeddedResource) MarshalJSON() ([]byte, error) {
	type fields EmbeddedResource
	return marshalTyped(ContentTypeResource, fields(c))
}
