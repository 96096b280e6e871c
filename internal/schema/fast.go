package schema

import (
	"bytes"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"slices"
	"strconv"
)

// A fastObject checks, without decoding, the commonest tool input schema:
// an object whose properties have one primitive type each, with required
// properties and perhaps additionalProperties false. It answers only "this
// instance is certainly valid"; anything else (a failure, or a shape it
// does not know) goes to the full validator, which also words the errors.
//
//	{"type":"object","properties":{"text":{"type":"string","description":"…"}},"required":["text"]}
//
// It stays because the library's cost is not small next to a call: without
// this check, validating test_echo's arguments took 17 % of the server's CPU
// per tools/call in BenchmarkEchoRoundTrip (tests/httpbench, 2026-11-26),
// half of it the library decoding the instance and half its walk, both
// growing the fresh handler goroutine's stack; with it, under 1 %.
type fastObject struct {
	props      map[string]primitive
	required   []string // without repeats, at most 64
	additional bool     // additionalProperties is not false
}

// primitive is the JSON type a property must have ("" for any).
type primitive string

// annotations are keywords that never fail an instance; a schema with any
// other keyword is not fast.
var annotations = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "title": true, "description": true,
	"default": true, "examples": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	"format": true, // an annotation in 2020-12, as Compile treats it
}

// newFastObject returns the fast check for raw, or nil when raw is not of
// the simple shape (or repeats a name, which v2 refuses: the library judges).
func newFastObject(raw jsontext.Value) *fastObject {
	var top map[string]jsontext.Value
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	f := &fastObject{props: map[string]primitive{}, additional: true}
	for k, v := range top {
		switch k {
		case "type":
			if string(v) != `"object"` {
				return nil
			}
		case "properties":
			var props map[string]map[string]jsontext.Value
			if json.Unmarshal(v, &props) != nil {
				return nil
			}
			for name, p := range props {
				t, ok := primitiveOf(p)
				if !ok {
					return nil
				}
				f.props[name] = t
			}
		case "required":
			var req []string
			if json.Unmarshal(v, &req) != nil {
				return nil
			}
			for _, r := range req {
				if !slices.Contains(f.required, r) {
					f.required = append(f.required, r)
				}
			}
			if len(f.required) > 64 {
				return nil
			}
		case "additionalProperties":
			switch string(v) {
			case "true":
			case "false":
				f.additional = false
			default:
				return nil
			}
		default:
			if !annotations[k] {
				return nil
			}
		}
	}
	if _, ok := top["type"]; !ok {
		return nil
	}
	if s, ok := top["$schema"]; ok && string(s) != `"https://json-schema.org/draft/2020-12/schema"` {
		return nil // another dialect: let the library judge
	}
	return f
}

// primitiveOf returns the type a property schema demands, if the schema has
// only a primitive type and annotations.
func primitiveOf(p map[string]jsontext.Value) (primitive, bool) {
	t := primitive("")
	for k, v := range p {
		switch {
		case k == "type":
			switch string(v) {
			case `"string"`, `"number"`, `"integer"`, `"boolean"`, `"null"`, `"object"`, `"array"`:
				t = primitive(v[1 : len(v)-1])
			default:
				return "", false
			}
		case !annotations[k]:
			return "", false
		}
	}
	return t, true
}

// valid reports whether instance certainly satisfies the schema. It
// assumes nothing of instance: on anything unexpected it says false.
func (f *fastObject) valid(instance []byte) bool {
	d := bytes.TrimSpace(instance)
	if len(d) < 2 || d[0] != '{' || d[len(d)-1] != '}' {
		return false
	}
	var seen uint64 // bit n: required property n is present
	i := 1
	for {
		i = skipSpace(d, i)
		if i < len(d) && d[i] == '}' {
			break
		}
		keyEnd, ok := skipString(d, i)
		if !ok {
			return false
		}
		key := d[i+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false // an escaped name: leave it to the full check
		}
		i = skipSpace(d, keyEnd)
		if i >= len(d) || d[i] != ':' {
			return false
		}
		i = skipSpace(d, i+1)
		valEnd, ok := skipValue(d, i, 0)
		if !ok {
			return false
		}
		t, known := f.props[string(key)]
		switch {
		case !known && !f.additional:
			return false
		case known && !hasType(d[i:valEnd], t):
			return false
		}
		for n, r := range f.required {
			if r == string(key) {
				seen |= 1 << n
				break
			}
		}
		i = skipSpace(d, valEnd)
		if i < len(d) && d[i] == ',' {
			i++
			continue
		}
		if i < len(d) && d[i] == '}' {
			break
		}
		return false
	}
	if skipSpace(d, i+1) != len(d) {
		return false
	}
	return seen == 1<<len(f.required)-1
}

// hasType reports whether a raw JSON value has type t.
func hasType(v []byte, t primitive) bool {
	switch t {
	case "":
		return true
	case "string":
		return v[0] == '"'
	case "boolean":
		return v[0] == 't' || v[0] == 'f'
	case "null":
		return v[0] == 'n'
	case "object":
		return v[0] == '{'
	case "array":
		return v[0] == '['
	case "number", "integer":
		if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
			return false
		}
		if t == "number" || bytes.IndexAny(v, ".eE") < 0 {
			return true
		}
		f, err := strconv.ParseFloat(string(v), 64)
		return err == nil && f == float64(int64(f))
	}
	return false
}

func skipSpace(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string at i.
func skipString(d []byte, i int) (int, bool) {
	if i >= len(d) || d[i] != '"' {
		return 0, false
	}
	for i++; i < len(d); i++ {
		switch d[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		default:
			if d[i] < 0x20 {
				return 0, false
			}
		}
	}
	return 0, false
}

// skipValue returns the index after the value at i. It checks structure,
// not every detail of literals: callers pass JSON that was already
// decoded once, and fall back to the full check when unsure.
func skipValue(d []byte, i, depth int) (int, bool) {
	if i >= len(d) || depth > 64 {
		return 0, false
	}
	switch d[i] {
	case '"':
		return skipString(d, i)
	case '{', '[':
		open, close := d[i], byte('}')
		if open == '[' {
			close = ']'
		}
		i = skipSpace(d, i+1)
		if i < len(d) && d[i] == close {
			return i + 1, true
		}
		for {
			if open == '{' {
				end, ok := skipString(d, i)
				if !ok {
					return 0, false
				}
				i = skipSpace(d, end)
				if i >= len(d) || d[i] != ':' {
					return 0, false
				}
				i = skipSpace(d, i+1)
			}
			end, ok := skipValue(d, i, depth+1)
			if !ok {
				return 0, false
			}
			i = skipSpace(d, end)
			if i >= len(d) {
				return 0, false
			}
			if d[i] == close {
				return i + 1, true
			}
			if d[i] != ',' {
				return 0, false
			}
			i = skipSpace(d, i+1)
		}
	default:
		j := i
		for j < len(d) && bytes.IndexByte([]byte("-+.0123456789eEtrufalsn"), d[j]) >= 0 {
			j++
		}
		if j == i {
			return 0, false
		}
		switch lit := string(d[i:j]); {
		case lit == "true" || lit == "false" || lit == "null":
		case d[i] == '-' || (d[i] >= '0' && d[i] <= '9'):
			if _, err := strconv.ParseFloat(lit, 64); err != nil {
				return 0, false
			}
		default:
			return 0, false
		}
		return j, true
	}
}
