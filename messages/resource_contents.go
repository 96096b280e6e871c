package messages

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// ResourceContents are the contents of one resource, as text or as binary.
// On the wire it is a TextResourceContents when Blob is nil and a
// BlobResourceContents otherwise.
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	// Text is the contents when the resource is text.
	Text string `json:"text"`
	// Blob is the contents when the resource is binary; it travels
	// base64-encoded. A non-nil Blob wins over Text.
	Blob []byte `json:"blob"`
	Meta Meta   `json:"_meta,omitempty"`
}

// textResourceContents is the wire form of text contents.
type textResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// blobResourceContents is the wire form of binary contents.
type blobResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Blob     []byte `json:"blob"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// MarshalJSON writes "text" (even when empty) if Blob is nil and a base64
// "blob" otherwise.
func (rc ResourceContents) MarshalJSON() ([]byte, error) {
	if rc.Blob != nil {
		return marshalJSON(blobResourceContents{rc.URI, rc.MIMEType, rc.Blob, rc.Meta})
	}
	return marshalJSON(textResourceContents{rc.URI, rc.MIMEType, rc.Text, rc.Meta})
}

// UnmarshalJSON accepts text or blob contents. An empty "blob" decodes as a
// non-nil empty Blob, so it stays binary.
func (rc *ResourceContents) UnmarshalJSON(b []byte) error {
	var w struct {
		textResourceContents
		Blob *string `json:"blob"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*rc = ResourceContents{URI: w.URI, MIMEType: w.MIMEType, Text: w.Text, Meta: w.Meta}
	if w.Blob != nil {
		blob, err := base64.StdEncoding.DecodeString(*w.Blob)
		if err != nil {
			return fmt.Errorf("decoding resource blob: %w", err)
		}
		rc.Blob = blob
	}
	return nil
}
