package messages

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// StructDecoder decodes a JSON object into a struct whose fields are all
// plain (strings, booleans, numbers) in one scanner pass: the arguments of
// most typed tools. It decodes exactly as encoding/json does or declines
// (Decode returns false), and the caller then uses encoding/json, which
// also gives the error; a fuzz test holds the two together.
type StructDecoder struct {
	byName map[string]plainField
	names  []string // every field's JSON name, for case-folded matches
}

type plainField struct {
	index int
	kind  reflect.Kind
}

// NewStructDecoder returns a decoder for t, or nil when t is not a struct
// of plain fields (embedded fields, options such as ",string", and other
// types are left to encoding/json).
func NewStructDecoder(t reflect.Type) *StructDecoder {
	if t.Kind() != reflect.Struct {
		return nil
	}
	d := &StructDecoder{byName: map[string]plainField{}}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if opts != "" && opts != "omitempty" && opts != "omitzero" {
			return nil
		}
		if name == "" || !plainName(name) {
			name = f.Name
		}
		switch f.Type.Kind() {
		case reflect.String, reflect.Bool,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
		default:
			return nil
		}
		if f.Type == reflect.TypeFor[json.Number]() || f.Type.PkgPath() != "" && implementsUnmarshaler(f.Type) {
			return nil // decoded by rules of their own
		}
		if _, dup := d.byName[name]; dup {
			return nil // encoding/json's rules for clashing names are its own
		}
		d.byName[name] = plainField{index: i, kind: f.Type.Kind()}
		d.names = append(d.names, name)
	}
	return d
}

// plainName reports whether a tag name is one encoding/json takes as is.
func plainName(s string) bool {
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		default:
			return false
		}
	}
	return true
}

func implementsUnmarshaler(t reflect.Type) bool {
	u := reflect.TypeFor[json.Unmarshaler]()
	tu := reflect.TypeFor[interface{ UnmarshalText([]byte) error }]()
	return t.Implements(u) || reflect.PointerTo(t).Implements(u) || t.Implements(tu) || reflect.PointerTo(t).Implements(tu)
}

// Decode decodes raw into *ptr (a pointer to the decoder's struct type)
// and reports whether it could; on false *ptr may be partly written, so
// decode into a fresh value.
func (d *StructDecoder) Decode(raw []byte, ptr any) bool {
	v := reflect.ValueOf(ptr).Elem()
	return scanMembers(raw, func(name string, val []byte) bool {
		f, ok := d.byName[name]
		if !ok {
			return otherName(name, d.names...)
		}
		return setPlain(v.Field(f.index), f.kind, val)
	})
}

// setPlain sets field from a JSON value as encoding/json would, or
// reports that it cannot (a mismatch: encoding/json reports the error).
func setPlain(field reflect.Value, kind reflect.Kind, val []byte) bool {
	if isNull(val) {
		return true // encoding/json leaves a plain field as it is
	}
	switch kind {
	case reflect.String:
		s, ok := unquote(val)
		if ok {
			field.SetString(s)
		}
		return ok
	case reflect.Bool:
		var b bool
		if !scanBool(val, &b) {
			return false
		}
		field.SetBool(b)
		return true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(string(val), 10, field.Type().Bits())
		if err != nil {
			return false
		}
		field.SetInt(n)
		return true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(string(val), 10, field.Type().Bits())
		if err != nil {
			return false
		}
		field.SetUint(n)
		return true
	case reflect.Float32, reflect.Float64:
		if val[0] == '"' || val[0] == '{' || val[0] == '[' || val[0] == 't' || val[0] == 'f' {
			return false
		}
		n, err := strconv.ParseFloat(string(val), field.Type().Bits())
		if err != nil {
			return false
		}
		field.SetFloat(n)
		return true
	}
	return false
}
