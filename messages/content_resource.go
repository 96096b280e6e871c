package messages

import "encoding/json/jsontext"

// ResourceLink is a content block that points at a resource the client may
// read (2025-06-18).
type ResourceLink struct {
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Size        *int64       `json:"size,omitzero"`
	Annotations *Annotations `json:"annotations,omitzero"`
	Icons       []Icon       `json:"icons,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// EmbeddedResource is a content block that carries a resource's contents.
type EmbeddedResource struct {
	Resource    *ResourceContents `json:"resource"`
	Annotations *Annotations      `json:"annotations,omitzero"`
	Meta        Meta              `json:"_meta,omitempty"`
}

func (*ResourceLink) isContent()     {}
func (*EmbeddedResource) isContent() {}

// MarshalJSONTo writes the block with "type":"resource_link".
func (c ResourceLink) MarshalJSONTo(enc *jsontext.Encoder) error {
	type fields ResourceLink
	return marshalTyped(enc, ContentTypeResourceLink, (*fields)(&c))
}

// MarshalJSONTo writes the block with "type":"resource".
func (c EmbeddedResource) MarshalJSONTo(enc *jsontext.Encoder) error {
	type fields EmbeddedResource
	return marshalTyped(enc, ContentTypeResource, (*fields)(&c))
}
