package messages

import (
	"encoding/base64"
	"encoding/json/jsontext"
	json "encoding/json/v2"
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

// MarshalJSONTo writes "text" (even when empty) if Blob is nil and a
// base64 "blob" otherwise: two wire shapes in one Go type.
func (rc ResourceContents) MarshalJSONTo(enc *jsontext.Encoder) error {
	if rc.Blob != nil {
		return json.MarshalEncode(enc, &blobResourceContents{rc.URI, rc.MIMEType, rc.Blob, rc.Meta})
	}
	return json.MarshalEncode(enc, &textResourceContents{rc.URI, rc.MIMEType, rc.Text, rc.Meta})
}

// UnmarshalJSONFrom accepts text or blob contents. An empty "blob" decodes
// as a non-nil empty Blob, so it stays binary; a "blob" that is not base64
// beside a "text" is an extra member of text contents.
func (rc *ResourceContents) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var w struct {
		textResourceContents
		Text *string `json:"text"`
		Blob *string `json:"blob"`
	}
	if err := json.UnmarshalDecode(dec, &w); err != nil {
		return err
	}
	*rc = ResourceContents{URI: w.URI, MIMEType: w.MIMEType, Meta: w.Meta}
	if w.Text != nil {
		rc.Text = *w.Text
	}
	if w.Blob != nil {
		blob, err := base64.StdEncoding.DecodeString(*w.Blob)
		switch {
		case err == nil:
			rc.Blob = blob
		case w.Text == nil:
			return fmt.Errorf("decoding resource blob: %w", err)
		}
	}
	return nil
}
