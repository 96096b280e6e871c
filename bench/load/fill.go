package main

import "strings"

// fillForm answers a form elicitation for schema (a JSON object schema
// decoded into maps). Every string property gets a deterministic value:
// "yes"; the first enum/oneOf/anyOf constant if there is one; benchEmail for
// format "email" or a property named "email"; fixed values for the formats
// "uri", "date" and "date-time"; "yes" padded to minLength. Other properties
// get their default, or, when required and without one, a minimal valid
// value.
func fillForm(schema any) map[string]any {
	out := map[string]any{}
	m, _ := schema.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	required := map[string]bool{}
	if rs, ok := m["required"].([]any); ok {
		for _, r := range rs {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	for name, p := range props {
		pm, _ := p.(map[string]any)
		if v, ok := fillValue(name, pm, required[name]); ok {
			out[name] = v
		}
	}
	return out
}

// fillValue is the value for one property; ok is false when it is left out.
func fillValue(name string, p map[string]any, required bool) (v any, ok bool) {
	typ, _ := p["type"].(string)
	if typ == "string" {
		return fillString(name, p), true
	}
	if d, ok := p["default"]; ok {
		return d, true
	}
	if !required {
		return nil, false
	}
	switch typ {
	case "integer", "number":
		if mn, ok := p["minimum"].(float64); ok {
			return mn, true
		}
		return 1, true
	case "boolean":
		return true, true
	case "array":
		if items, ok := p["items"].(map[string]any); ok {
			if c, ok := firstConst(items); ok {
				return []any{c}, true
			}
		}
		return []any{}, true
	}
	return nil, false
}

// fillString is the value for a string property.
func fillString(name string, p map[string]any) any {
	if c, ok := firstConst(p); ok {
		return c
	}
	f, _ := p["format"].(string)
	switch {
	case f == "email" || strings.EqualFold(name, "email"):
		return benchEmail
	case f == "uri":
		return "https://example.com/bench"
	case f == "date":
		return "2025-01-01"
	case f == "date-time":
		return "2025-01-01T00:00:00Z"
	}
	v := "yes"
	if n, ok := p["minLength"].(float64); ok && int(n) > len(v) {
		v += strings.Repeat("s", int(n)-len(v))
	}
	return v
}

// firstConst is the first value of p's enum, or the first const among its
// oneOf or anyOf alternatives.
func firstConst(p map[string]any) (any, bool) {
	if e, ok := p["enum"].([]any); ok && len(e) > 0 {
		return e[0], true
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		alts, _ := p[k].([]any)
		for _, a := range alts {
			if am, ok := a.(map[string]any); ok {
				if c, ok := am["const"]; ok {
					return c, true
				}
			}
		}
	}
	return nil, false
}
