package mcpactors

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"math/big"
	"strings"

	"github.com/mcp-actors/mcp-actors/actors/transport"
	"github.com/mcp-actors/mcp-actors/messages"
)

// A tool's parameter whose schema carries "x-mcp-header": "Name" is
// mirrored by clients of 2026-07-28 over HTTP into the header
// Mcp-Param-Name; the server checks that the header says what the body
// says (a load balancer may route on it).

// mirroredParam is one parameter a tool mirrors into a header.
type mirroredParam struct {
	header string   // the name after Mcp-Param-, as declared
	path   []string // the properties leading to it
	kind   string   // its JSON Schema type: string, integer, boolean
}

// mirroredParams reads a tool's x-mcp-header annotations from its input
// schema: properties of the root object, or of nested objects.
func mirroredParams(schema jsontext.Value) ([]mirroredParam, error) {
	var root map[string]any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, nil // not an object: compiled and refused elsewhere
	}
	var out []mirroredParam
	seen := map[string]bool{}
	var walk func(node map[string]any, path []string) error
	walk = func(node map[string]any, path []string) error {
		props, _ := node["properties"].(map[string]any)
		for name, v := range props {
			p, ok := v.(map[string]any)
			if !ok {
				continue
			}
			here := append(append([]string(nil), path...), name)
			if h, ok := p["x-mcp-header"]; ok {
				hs, _ := h.(string)
				kind, _ := p["type"].(string)
				switch {
				case hs == "" || !validHeaderName(hs):
					return fmt.Errorf("parameter %q: x-mcp-header %q is not a header name", strings.Join(here, "."), hs)
				case kind != "string" && kind != "integer" && kind != "boolean":
					return fmt.Errorf("parameter %q: x-mcp-header needs a string, integer or boolean parameter, not %q", strings.Join(here, "."), kind)
				case seen[strings.ToLower(hs)]:
					return fmt.Errorf("x-mcp-header %q is declared twice", hs)
				}
				seen[strings.ToLower(hs)] = true
				out = append(out, mirroredParam{header: hs, path: here, kind: kind})
			}
			if err := walk(p, here); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(root, nil)
}

// validHeaderName reports whether s is an HTTP field name's token.
func validHeaderName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// checkMirrored checks a tools/call's Mcp-Param headers against its
// arguments: every mirrored parameter with a value must come with its
// header, decoded equal to the value.
func checkMirrored(params []mirroredParam, args jsontext.Value, headers map[string]string) *messages.Error {
	if len(params) == 0 {
		return nil
	}
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil {
		return nil // the input schema refuses it
	}
	for _, p := range params {
		v, ok := valueAt(obj, p.path)
		if !ok || v == nil {
			continue // no value, no header expected
		}
		raw, present := headers[strings.ToLower(p.header)]
		if !present {
			return messages.HeaderMismatchError("the Mcp-Param-%s header is required: parameter %q has a value", p.header, strings.Join(p.path, "."))
		}
		got, good := transport.DecodeHeaderValue(raw)
		if !good {
			return messages.HeaderMismatchError("the Mcp-Param-%s header is malformed", p.header)
		}
		if !sameValue(p.kind, got, v) {
			return messages.HeaderMismatchError("Mcp-Param-%s header value does not match the body's %q", p.header, strings.Join(p.path, "."))
		}
	}
	return nil
}

// valueAt returns the value at path in obj.
func valueAt(obj map[string]any, path []string) (any, bool) {
	var cur any = obj
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// sameValue compares a header's decoded text with the body's value: as
// text for a string, as a number for an integer, as true/false for a
// boolean.
func sameValue(kind, header string, body any) bool {
	switch kind {
	case "integer":
		n, ok := body.(float64)
		if !ok {
			return false
		}
		h, _, err := big.ParseFloat(header, 10, 256, big.ToNearestEven)
		return err == nil && h.Cmp(big.NewFloat(n)) == 0
	case "boolean":
		b, ok := body.(bool)
		return ok && header == fmt.Sprint(b)
	default:
		s, ok := body.(string)
		return ok && header == s
	}
}
