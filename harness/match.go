package harness

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"maps"
	"reflect"
	"strings"
)

// Placeholders in golden transcripts are JSON strings starting with "$":
// "$ANY" matches any value; "$NAME" binds to the value at its first
// appearance in a server message and must match it afterwards; in a client
// message it is replaced by the bound value. "$$…" is a literal string
// starting with "$".

// decodeJSON decodes data into an any, keeping each number as written (a
// jsontext.Value): 1 and 1.0 differ, and a bound number is sent again with
// the digits it came with.
func decodeJSON(data []byte) (any, error) {
	var v any
	if err := json.Unmarshal(data, &v, json.WithUnmarshalers(keepNumbers)); err != nil {
		return nil, err
	}
	return v, nil
}

// keepNumbers decodes a JSON number into an any as its text.
var keepNumbers = json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *any) error {
	if dec.PeekKind() != '0' {
		return errors.ErrUnsupported // the default decoding
	}
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	*v = raw.Clone()
	return nil
})

// placeholder returns the name of a placeholder string, if v is one.
func placeholder(v any) (string, bool) {
	s, ok := v.(string)
	if !ok || !strings.HasPrefix(s, "$") || strings.HasPrefix(s, "$$") || len(s) < 2 {
		return "", false
	}
	return s[1:], true
}

// matchJSON reports whether act fits exp, binding placeholders in vars
// (which it changes only when it returns true).
func matchJSON(exp, act any, vars map[string]any) bool {
	trial := maps.Clone(vars)
	if !matchInto(exp, act, trial) {
		return false
	}
	maps.Copy(vars, trial)
	return true
}

func matchInto(exp, act any, vars map[string]any) bool {
	if name, ok := placeholder(exp); ok {
		if name == "ANY" {
			return true
		}
		if bound, ok := vars[name]; ok {
			return reflect.DeepEqual(bound, act)
		}
		vars[name] = act
		return true
	}
	switch e := exp.(type) {
	case map[string]any:
		a, ok := act.(map[string]any)
		if !ok || len(a) != len(e) {
			return false
		}
		for k, ev := range e {
			av, ok := a[k]
			if !ok || !matchInto(ev, av, vars) {
				return false
			}
		}
		return true
	case []any:
		a, ok := act.([]any)
		if !ok || len(a) != len(e) {
			return false
		}
		for i := range e {
			if !matchInto(e[i], a[i], vars) {
				return false
			}
		}
		return true
	case string:
		if strings.HasPrefix(e, "$$") {
			e = e[1:]
		}
		return act == e
	}
	return reflect.DeepEqual(exp, act)
}

// bindLoose binds the placeholders of exp that are not bound yet to the
// values at the same places in act, wherever act has them. Update uses it
// for a line that did not match, so that later lines can use its names.
func bindLoose(exp, act any, vars map[string]any) {
	if name, ok := placeholder(exp); ok {
		if _, bound := vars[name]; !bound && name != "ANY" {
			vars[name] = act
		}
		return
	}
	switch e := exp.(type) {
	case map[string]any:
		a, _ := act.(map[string]any)
		for k, ev := range e {
			if av, ok := a[k]; ok {
				bindLoose(ev, av, vars)
			}
		}
	case []any:
		a, _ := act.([]any)
		for i := range min(len(e), len(a)) {
			bindLoose(e[i], a[i], vars)
		}
	}
}

// substituteLine replaces the placeholders and "$$" escapes among the
// string values of a client line (which must be valid JSON) in place,
// leaving everything else as written: key order, spacing, number formats.
// It returns the name of a placeholder that is not bound, if any.
func substituteLine(line string, vars map[string]any) (string, string) {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '"' {
			b.WriteByte(line[i])
			i++
			continue
		}
		end := i + 1
		for end < len(line) && line[end] != '"' {
			if line[end] == '\\' {
				end++
			}
			end++
		}
		end = min(end+1, len(line)) // past the closing quote
		tok := line[i:end]
		i = end
		var s string
		isKey := strings.HasPrefix(strings.TrimLeft(line[i:], " \t\r\n"), ":")
		if isKey || json.Unmarshal([]byte(tok), &s) != nil || !strings.HasPrefix(s, "$") {
			b.WriteString(tok)
			continue
		}
		v, missing := substitute(s, vars)
		if missing != "" {
			return "", missing
		}
		b.WriteString(compact(v))
	}
	return b.String(), ""
}

// substitute replaces placeholders in a client message with bound values.
func substitute(v any, vars map[string]any) (any, string) {
	if name, ok := placeholder(v); ok {
		bound, ok := vars[name]
		if !ok {
			return nil, name
		}
		return bound, ""
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			r, missing := substitute(e, vars)
			if missing != "" {
				return nil, missing
			}
			out[k] = r
		}
		return out, ""
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, missing := substitute(e, vars)
			if missing != "" {
				return nil, missing
			}
			out[i] = r
		}
		return out, ""
	case string:
		if strings.HasPrefix(x, "$$") {
			return x[1:], ""
		}
	}
	return v, ""
}

// template rewrites act for a golden file, keeping the placeholders exp had
// at the same places.
func template(exp, act any) any {
	if _, ok := placeholder(exp); ok {
		return exp
	}
	switch a := act.(type) {
	case map[string]any:
		e, _ := exp.(map[string]any)
		out := make(map[string]any, len(a))
		for k, av := range a {
			out[k] = template(e[k], av)
		}
		return out
	case []any:
		e, _ := exp.([]any)
		out := make([]any, len(a))
		for i, av := range a {
			var ev any
			if i < len(e) {
				ev = e[i]
			}
			out[i] = template(ev, av)
		}
		return out
	case string:
		if strings.HasPrefix(a, "$") {
			return "$" + a // escape a literal dollar
		}
	}
	return act
}

// compact encodes v for a transcript line (keys sorted, no HTML escaping).
func compact(v any) string {
	b, _ := json.Marshal(v, json.Deterministic(true))
	return string(b)
}
