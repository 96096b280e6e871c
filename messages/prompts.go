package messages

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"fmt"
)

// Prompt describes a prompt or prompt template a server offers.
type Prompt struct {
	Name        string            `json:"name"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Arguments   []*PromptArgument `json:"arguments,omitempty"`
	Icons       []Icon            `json:"icons,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

// PromptArgument describes one argument a prompt accepts.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitzero"`
}

// ListPromptsParams are the params of prompts/list.
type ListPromptsParams struct {
	Cursor string `json:"cursor,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// ListPromptsResult is one page of prompts/list.
type ListPromptsResult struct {
	// Prompts never marshals as null.
	Prompts    []*Prompt `json:"prompts"`
	NextCursor string    `json:"nextCursor,omitempty"`
	Meta       Meta      `json:"_meta,omitempty"`
}

// GetPromptParams are the params of prompts/get.
type GetPromptParams struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
	Meta      Meta              `json:"_meta,omitempty"`
}

// GetPromptResult is the result of prompts/get.
type GetPromptResult struct {
	Description string `json:"description,omitempty"`
	// Messages never marshals as null.
	Messages []*PromptMessage `json:"messages"`
	Meta     Meta             `json:"_meta,omitempty"`
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
}

// UnmarshalJSONFrom decodes the message and its content block, which is
// one of several types by its "type".
func (m *PromptMessage) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var w struct {
		Role    Role           `json:"role"`
		Content jsontext.Value `json:"content"`
	}
	if err := json.UnmarshalDecode(dec, &w); err != nil {
		return err
	}
	if w.Content == nil || w.Content.Kind() == 'n' {
		return errors.New("decoding prompt message: no content")
	}
	c, err := UnmarshalContent(w.Content)
	if err != nil {
		return fmt.Errorf("decoding prompt message: %w", err)
	}
	*m = PromptMessage{Role: w.Role, Content: c}
	return nil
}
