package messages

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Below the platform, and on its way out: encoding/json (v1) reflects on
// every field of the hot path's messages, and encoding/json/v2, which
// covers what these do, needs Go 1.27; the next issue ("back on the
// platform") moves to it and removes this file.

// This file holds hand-written encoders and decoders for the messages on
// the hot path (tools/call and its result), which would otherwise go
// through reflection. They produce exactly what encoding/json produces
// (without HTML escaping, as Marshal does) and fall back to it for any field
// they do not handle.

// appender is implemented by types that can append their own JSON.
type appender interface {
	appendJSON(b []byte) ([]byte, error)
}

// appendString appends s as a JSON string, escaped as encoding/json does
// with HTML escaping off: quotes, backslashes, control characters, U+2028
// and U+2029, and invalid UTF-8 (as U+FFFD).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendValue appends v: through its own encoder when it has one, else
// through encoding/json.
func appendValue(b []byte, v any) ([]byte, error) {
	if a, ok := v.(appender); ok {
		return a.appendJSON(b)
	}
	raw, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, raw...), nil
}

// appendRaw appends raw JSON, compacted as encoding/json would. One
// scanner pass validates it and tells whether it is compact already
// (whitespace inside strings, as in a schema's descriptions, is content).
func appendRaw(b []byte, raw json.RawMessage) ([]byte, error) {
	s := scanner{data: raw}
	ok := s.value(0)
	if ok {
		s.ws()
	}
	if !ok || s.pos != len(raw) {
		return nil, &json.SyntaxError{}
	}
	if !s.spaced {
		return append(b, raw...), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return append(b, buf.Bytes()...), nil
}

func (c *TextContent) appendJSON(b []byte) ([]byte, error) {
	if c.Annotations != nil || c.Meta != nil {
		raw, err := c.MarshalJSON()
		return append(b, raw...), err
	}
	b = append(b, `{"type":"text","text":`...)
	b = appendString(b, c.Text)
	return append(b, '}'), nil
}

func (l ContentList) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '[')
	for i, c := range l {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendValue(b, c); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

func (r *CallToolResult) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"content":`...)
	b, err := r.Content.appendJSON(b)
	if err != nil {
		return nil, err
	}
	if r.StructuredContent != nil {
		b = append(b, `,"structuredContent":`...)
		if b, err = appendRaw(b, r.StructuredContent); err != nil {
			return nil, err
		}
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	if r.Meta != nil {
		raw, err := Marshal(r.Meta)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"_meta":`...)
		b = append(b, raw...)
	}
	return append(b, '}'), nil
}

// DecodeCallToolParams decodes tools/call params in one pass, as
// DecodeParams would.
func DecodeCallToolParams(raw json.RawMessage) (*CallToolParams, *Error) {
	p := &CallToolParams{}
	if len(raw) == 0 {
		return p, nil
	}
	s := scanner{data: raw}
	s.ws()
	if s.pos >= len(raw) || raw[s.pos] != '{' {
		return nil, DecodeParams(raw, p) // the general path words the error
	}
	var bad bool
	ok := s.object(1, func(key, val []byte) {
		switch string(key) {
		case `"name"`:
			if name, ok := unquote(val); ok {
				p.Name = name
			} else if string(val) != "null" {
				bad = true
			}
		case `"arguments"`:
			p.Arguments = val
		case `"_meta"`, `"task"`:
			bad = bad || !decodeInto(string(key), val, p)
		default:
			// An escaped name, or one that differs only in case (which
			// encoding/json matches too): let encoding/json judge.
			k, _ := unquote(key)
			for _, name := range [...]string{"name", "arguments", "_meta", "task"} {
				if strings.EqualFold(k, name) {
					bad = true
				}
			}
		}
	})
	if !ok || bad {
		p = &CallToolParams{}
		return p, DecodeParams(raw, p)
	}
	return p, nil
}

func decodeInto(key string, val []byte, p *CallToolParams) bool {
	switch key {
	case `"_meta"`:
		return json.Unmarshal(val, &p.Meta) == nil
	default:
		return json.Unmarshal(val, &p.Task) == nil
	}
}

func (p *ElicitParams) appendJSON(b []byte) ([]byte, error) {
	if p.Task != nil || p.Meta != nil {
		type plain ElicitParams // no appendJSON: the reflection path
		raw, err := Marshal((*plain)(p))
		return append(b, raw...), err
	}
	b = append(b, '{')
	if p.Mode != "" {
		b = append(b, `"mode":`...)
		b = appendString(b, p.Mode)
		b = append(b, ',')
	}
	b = append(b, `"message":`...)
	b = appendString(b, p.Message)
	if p.RequestedSchema != nil {
		b = append(b, `,"requestedSchema":`...)
		var err error
		if b, err = appendRaw(b, p.RequestedSchema); err != nil {
			return nil, err
		}
	}
	b = appendOptString(b, `,"url":`, p.URL)
	b = appendOptString(b, `,"elicitationId":`, p.ElicitationID)
	return append(b, '}'), nil
}

func (m *SamplingMessage) appendJSON(b []byte) ([]byte, error) {
	if m.Meta != nil {
		raw, err := m.MarshalJSON()
		return append(b, raw...), err
	}
	b = append(b, `{"role":`...)
	b = appendString(b, string(m.Role))
	b = append(b, `,"content":`...)
	var err error
	if len(m.Content) == 1 { // one block, as older clients expect
		b, err = appendValue(b, m.Content[0])
	} else {
		b, err = m.Content.appendJSON(b)
	}
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

func (p *CreateMessageParams) appendJSON(b []byte) ([]byte, error) {
	if p.ModelPreferences != nil || p.Temperature != nil || p.StopSequences != nil || p.Metadata != nil ||
		p.Tools != nil || p.ToolChoice != nil || p.Task != nil || p.Meta != nil {
		raw, err := p.MarshalJSON()
		return append(b, raw...), err
	}
	b = append(b, `{"messages":[`...)
	for i, m := range p.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if m == nil {
			b = append(b, "null"...)
		} else if b, err = m.appendJSON(b); err != nil {
			return nil, err
		}
	}
	b = append(b, ']')
	b = appendOptString(b, `,"systemPrompt":`, p.SystemPrompt)
	b = appendOptString(b, `,"includeContext":`, p.IncludeContext)
	b = append(b, `,"maxTokens":`...)
	b = strconv.AppendInt(b, p.MaxTokens, 10)
	return append(b, '}'), nil
}

// scanMembers calls member with each raw member of a JSON object and
// reports whether raw was one object and member accepted every name.
// member returns false for a name it cannot take as is (escaped, or
// differing only in case from a field), which sends the caller to
// encoding/json.
func scanMembers(raw []byte, member func(name string, val []byte) bool) bool {
	s := scanner{data: raw}
	s.ws()
	if s.pos >= len(raw) || raw[s.pos] != '{' {
		return false
	}
	ok := true
	done := s.object(1, func(key, val []byte) {
		var name string
		if len(key) > 2 {
			name = string(key[1 : len(key)-1])
		}
		if ok && !member(name, val) {
			ok = false
		}
	})
	if !done {
		return false
	}
	s.ws()
	return ok && s.pos == len(raw)
}

// UnmarshalJSON decodes the result in one pass (encoding/json for anything
// unusual).
func (r *ElicitResult) UnmarshalJSON(b []byte) error {
	var out ElicitResult
	if scanMembers(b, func(name string, val []byte) bool {
		switch name {
		case "action":
			a, ok := unquote(val)
			out.Action = ElicitAction(a)
			return ok
		case "content":
			out.Content = append(json.RawMessage(nil), val...)
			return true
		case "_meta":
			return json.Unmarshal(val, &out.Meta) == nil
		}
		return !strings.EqualFold(name, "action") && !strings.EqualFold(name, "content") &&
			!strings.EqualFold(name, "_meta") && !strings.Contains(name, `\`)
	}) {
		*r = out
		return nil
	}
	type plain ElicitResult // no UnmarshalJSON: the reflection path
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*r = ElicitResult(p)
	return nil
}

// fastText decodes a content block that is plain text ({"type":"text",
// "text":…} and nothing else), the commonest sampled answer.
func fastText(raw []byte) (*TextContent, bool) {
	var typ, text []byte
	if !scanMembers(raw, func(name string, val []byte) bool {
		switch name {
		case "type":
			typ = val
		case "text":
			text = val
		default:
			return false
		}
		return true
	}) || string(typ) != `"text"` || text == nil {
		return nil, false
	}
	t, ok := unquote(text)
	return &TextContent{Text: t}, ok
}

// PreEncoded is a result already encoded as compact JSON (by Marshal):
// EncodeResult copies it as is. A result every session sends alike (the
// initialize result) is encoded once this way.
type PreEncoded []byte

func (p PreEncoded) appendJSON(b []byte) ([]byte, error) { return append(b, p...), nil }

// appendOptString appends a member whose value is a string, when the
// string is not empty (omitempty); key is the member's name with its
// leading comma, quotes and colon.
func appendOptString(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return appendString(append(b, key...), v)
}
