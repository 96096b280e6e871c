package messages

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"fmt"
)

// The "type" discriminators of content blocks.
const (
	ContentTypeText         = "text"
	ContentTypeImage        = "image"
	ContentTypeAudio        = "audio"
	ContentTypeResourceLink = "resource_link"
	ContentTypeResource     = "resource"
	ContentTypeToolUse      = "tool_use"
	ContentTypeToolResult   = "tool_result"
)

// ErrUnknownContentType is returned when a content block's "type" is missing
// or not one this package knows.
var ErrUnknownContentType = errors.New("unknown content type")

// Content is one content block of a tool result, prompt message or sampling
// message. It is implemented only by the pointer types *TextContent,
// *ImageContent, *AudioContent, *ResourceLink, *EmbeddedResource,
// *ToolUseContent and *ToolResultContent.
type Content interface {
	isContent()
}

// TextContent is a block of text.
type TextContent struct {
	Text        string       `json:"text"`
	Annotations *Annotations `json:"annotations,omitzero"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ImageContent is an image.
type ImageContent struct {
	// Data is the image itself; it travels base64-encoded.
	Data        []byte       `json:"data"`
	MIMEType    string       `json:"mimeType"`
	Annotations *Annotations `json:"annotations,omitzero"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// AudioContent is an audio clip (2025-03-26).
type AudioContent struct {
	// Data is the audio itself; it travels base64-encoded.
	Data        []byte       `json:"data"`
	MIMEType    string       `json:"mimeType"`
	Annotations *Annotations `json:"annotations,omitzero"`
	Meta        Meta         `json:"_meta,omitempty"`
}

func (*TextContent) isContent()  {}
func (*ImageContent) isContent() {}
func (*AudioContent) isContent() {}

// Each block writes its own "type" discriminator (v2 has no constant
// members); the methods have value receivers, like time.Time's, so that a
// value marshals the same as a pointer to it.

// MarshalJSONTo writes the block with "type":"text".
func (c TextContent) MarshalJSONTo(enc *jsontext.Encoder) error {
	type fields TextContent
	return marshalTyped(enc, ContentTypeText, (*fields)(&c))
}

// MarshalJSONTo writes the block with "type":"image".
func (c ImageContent) MarshalJSONTo(enc *jsontext.Encoder) error {
	type fields ImageContent
	return marshalTyped(enc, ContentTypeImage, (*fields)(&c))
}

// MarshalJSONTo writes the block with "type":"audio".
func (c AudioContent) MarshalJSONTo(enc *jsontext.Encoder) error {
	type fields AudioContent
	return marshalTyped(enc, ContentTypeAudio, (*fields)(&c))
}

// typedBlock is a content block on the wire: its "type", then its fields.
type typedBlock[T any] struct {
	Type   string `json:"type"`
	Fields *T     `json:",embed"`
}

// marshalTyped writes fields (a struct type without JSON methods) with a
// "type" member first.
func marshalTyped[T any](enc *jsontext.Encoder, typ string, fields *T) error {
	return json.MarshalEncode(enc, &typedBlock[T]{Type: typ, Fields: fields})
}

// UnmarshalContent decodes one content block of any type this package
// knows. A missing or unknown "type" is ErrUnknownContentType.
func UnmarshalContent(raw jsontext.Value) (Content, error) {
	return unmarshalContent(raw, true)
}

// unmarshalContent decodes a content block; tool_use and tool_result are
// accepted only when withTools is set, which bounds their nesting to one
// level as the schema does.
func unmarshalContent(raw jsontext.Value, withTools bool) (Content, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("decoding content: %w", err)
	}
	var c Content
	switch head.Type {
	case ContentTypeText:
		c = new(TextContent)
	case ContentTypeImage:
		c = new(ImageContent)
	case ContentTypeAudio:
		c = new(AudioContent)
	case ContentTypeResourceLink:
		c = new(ResourceLink)
	case ContentTypeResource:
		c = new(EmbeddedResource)
	case ContentTypeToolUse, ContentTypeToolResult:
		if !withTools {
			return nil, fmt.Errorf("decoding content: %w %q inside a tool result", ErrUnknownContentType, head.Type)
		}
		if head.Type == ContentTypeToolUse {
			c = new(ToolUseContent)
		} else {
			c = new(ToolResultContent)
		}
	default:
		return nil, fmt.Errorf("decoding content: %w %q", ErrUnknownContentType, head.Type)
	}
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, fmt.Errorf("decoding %s content: %w", head.Type, err)
	}
	return c, nil
}

// ContentList is a list of content blocks. A nil list marshals as [].
type ContentList []Content

// UnmarshalJSONFrom decodes an array of content blocks of any known type,
// each by its "type" (a union v2 cannot decode by itself).
func (l *ContentList) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	list, err := unmarshalContentList(raw, true)
	if err != nil {
		return err
	}
	*l = list
	return nil
}

func unmarshalContentList(b jsontext.Value, withTools bool) (ContentList, error) {
	var raws []jsontext.Value
	if err := json.Unmarshal(b, &raws); err != nil {
		return nil, fmt.Errorf("decoding content list: %w", err)
	}
	if raws == nil {
		return nil, nil
	}
	list := make(ContentList, len(raws))
	for i, raw := range raws {
		c, err := unmarshalContent(raw, withTools)
		if err != nil {
			return nil, err
		}
		list[i] = c
	}
	return list, nil
}
