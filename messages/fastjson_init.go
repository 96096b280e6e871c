package messages

import (
	"encoding/json"
	"strings"
)

// Every session starts with initialize, so its params are decoded in one
// scanner pass too (encoding/json, through reflection, was the largest
// single cost of a session's setup). Anything unusual — escaped or
// case-folded names, nulls, other types — goes to encoding/json, so the
// results and errors are exactly encoding/json's; a fuzz test holds the
// two together.

// DecodeInitializeParams decodes initialize params (absent means {}).
func DecodeInitializeParams(raw json.RawMessage) (InitializeParams, *Error) {
	var p InitializeParams
	if len(raw) == 0 || p.scan(raw) {
		return p, nil
	}
	type plain InitializeParams // no UnmarshalJSON: the reflection path
	var q plain
	if err := DecodeParams(raw, &q); err != nil {
		return InitializeParams{}, err
	}
	return InitializeParams(q), nil
}

// UnmarshalJSON decodes the params in one pass (encoding/json for anything
// unusual).
func (p *InitializeParams) UnmarshalJSON(b []byte) error {
	var out InitializeParams
	if out.scan(b) {
		*p = out
		return nil
	}
	type plain InitializeParams
	var q plain
	if err := json.Unmarshal(b, &q); err != nil {
		return err
	}
	*p = InitializeParams(q)
	return nil
}

// scan decodes b into p and reports whether it could; false leaves p
// partly written.
func (p *InitializeParams) scan(b []byte) bool {
	return scanMembers(b, func(name string, val []byte) bool {
		switch name {
		case "protocolVersion":
			return scanString(val, &p.ProtocolVersion)
		case "capabilities":
			return p.Capabilities.scan(val)
		case "clientInfo":
			return p.ClientInfo.scan(val)
		case "_meta":
			return json.Unmarshal(val, &p.Meta) == nil
		}
		return otherName(name, "protocolVersion", "capabilities", "clientInfo", "_meta")
	})
}

func (c *ClientCapabilities) scan(b []byte) bool {
	return scanMembers(b, func(name string, val []byte) bool {
		switch name {
		case "experimental":
			return json.Unmarshal(val, &c.Experimental) == nil
		case "roots":
			return scanObjectInto(val, &c.Roots, (*RootsCapabilities).scanMember)
		case "sampling":
			return scanObjectInto(val, &c.Sampling, (*SamplingCapabilities).scanMember)
		case "elicitation":
			return scanObjectInto(val, &c.Elicitation, (*ElicitationCapabilities).scanMember)
		case "tasks":
			c.Tasks = append(json.RawMessage(nil), val...)
			return true
		}
		return otherName(name, "experimental", "roots", "sampling", "elicitation", "tasks")
	})
}

func (r *RootsCapabilities) scanMember(name string, v []byte) bool {
	if name == "listChanged" {
		return scanBool(v, &r.ListChanged)
	}
	return otherName(name, "listChanged")
}

func (c *SamplingCapabilities) scanMember(name string, v []byte) bool {
	switch name {
	case "context":
		return scanEmpty(v, &c.Context)
	case "tools":
		return scanEmpty(v, &c.Tools)
	}
	return otherName(name, "context", "tools")
}

func (c *ElicitationCapabilities) scanMember(name string, v []byte) bool {
	switch name {
	case "form":
		return scanEmpty(v, &c.Form)
	case "url":
		return scanEmpty(v, &c.URL)
	}
	return otherName(name, "form", "url")
}

// scanObjectInto decodes an object into *p with member, allocating *p
// when nil, as encoding/json does; null clears it.
func scanObjectInto[T any](val []byte, p **T, member func(t *T, name string, v []byte) bool) bool {
	if isNull(val) {
		*p = nil
		return true
	}
	if *p == nil {
		*p = new(T)
	}
	t := *p
	return scanMembers(val, func(name string, v []byte) bool { return member(t, name, v) })
}

func (m *Implementation) scan(b []byte) bool {
	return scanMembers(b, func(name string, val []byte) bool {
		switch name {
		case "name":
			return scanString(val, &m.Name)
		case "title":
			return scanString(val, &m.Title)
		case "version":
			return scanString(val, &m.Version)
		case "description":
			return scanString(val, &m.Description)
		case "websiteUrl":
			return scanString(val, &m.WebsiteURL)
		case "icons":
			return json.Unmarshal(val, &m.Icons) == nil
		}
		return otherName(name, "name", "title", "version", "description", "websiteUrl", "icons")
	})
}

// otherName reports whether name is surely none of fields as encoding/json
// matches them (exactly or case-folded) and so is ignored.
func otherName(name string, fields ...string) bool {
	if strings.Contains(name, `\`) {
		return false
	}
	for _, f := range fields {
		if strings.EqualFold(name, f) {
			return false
		}
	}
	return true
}

// scanString decodes a JSON string (not null: encoding/json's no-op is
// left to it).
func scanString(val []byte, s *string) bool {
	v, ok := unquote(val)
	if ok {
		*s = v
	}
	return ok
}

func scanBool(val []byte, b *bool) bool {
	switch string(val) {
	case "true":
		*b = true
	case "false":
		*b = false
	default:
		return false
	}
	return true
}

// scanEmpty decodes an object into an *Empty (null clears it); its
// members are ignored.
func scanEmpty(val []byte, e **Empty) bool {
	return scanObjectInto(val, e, func(*Empty, string, []byte) bool { return true })
}
