package schema

import (
	"bytes"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/invopop/jsonschema"
)

// reflected caches For's result per reflect.Type (pointers stripped).
var reflected sync.Map // reflect.Type → reflection

type reflection struct {
	raw jsontext.Value // never handed out; callers get a copy
	err error
}

// For returns the JSON Schema (2020-12) of t for a tool's inputSchema.
//
// t must be a struct or a map (or a pointer to one), because MCP requires
// "type":"object"; any other type yields ErrNotObject, and a type with no
// JSON form (channel, func, complex) yields ErrUnsupportedType.
//
// The schema follows github.com/invopop/jsonschema and its tag grammar:
// property names come from `json` tags, keywords from `jsonschema` tags
// (`jsonschema:"title=Name,description=Your name,minLength=1,enum=a,enum=b,default=a,format=email"`),
// and `jsonschema_description` / `jsonschema_extras` are honoured. On top of
// that:
//
//   - The schema is one inline document: no $id, no $schema (MCP's default
//     dialect is 2020-12) and no $defs, unless the type is recursive; then
//     the named types are kept in $defs and referenced with $ref, while the
//     root stays an inline "type":"object".
//   - A field is required unless its json tag has omitempty or omitzero or
//     its type is a pointer; `jsonschema:"required"` makes any field required.
//   - additionalProperties is not emitted for structs (invopop would emit
//     false): encoding/json ignores unknown keys, and a client that adds one
//     should not fail the call. A type can still opt in through invopop's
//     JSONSchemaExtend method or `jsonschema_extras:"additionalProperties=false"`
//     on a field.
//
// Results are cached per type; each call returns a fresh copy.
func For(t reflect.Type) (jsontext.Value, error) {
	return forObject(t, "input")
}

// ForType is For for the type parameter T.
func ForType[T any]() (jsontext.Value, error) {
	return For(reflect.TypeFor[T]())
}

// ForOutput returns the JSON Schema of t for a tool's outputSchema. The rules
// are For's: MCP's structuredContent is a JSON object too, so t must be a
// struct or a map, or ErrNotObject is returned.
//
// encoding/json/v2 (which writes structuredContent) writes a nil slice or
// map as [] or {}, but a nil pointer as null unless the field has omitzero
// or omitempty, and the schema does not allow null there: a server that
// validates its own structuredContent should tag such fields so (or
// `jsonschema:"nullable"`) or keep them non-nil.
func ForOutput(t reflect.Type) (jsontext.Value, error) {
	return forObject(t, "output")
}

// ForOutputType is ForOutput for the type parameter T.
func ForOutputType[T any]() (jsontext.Value, error) {
	return ForOutput(reflect.TypeFor[T]())
}

// forObject serves For and ForOutput from the cache; use only names the
// schema's purpose in errors.
func forObject(t reflect.Type, use string) (jsontext.Value, error) {
	if t == nil {
		return nil, fmt.Errorf("%s schema of nil type: %w", use, ErrNotObject)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	r, ok := reflected.Load(t)
	if !ok {
		raw, err := reflectObject(t)
		r, _ = reflected.LoadOrStore(t, reflection{raw: raw, err: err})
	}
	res := r.(reflection)
	if res.err != nil {
		return nil, fmt.Errorf("%s schema of %v: %w", use, t, res.err)
	}
	return bytes.Clone(res.raw), nil
}

// reflectObject reflects t, which has no pointer indirection left.
func reflectObject(t reflect.Type) (raw jsontext.Value, err error) {
	if k := t.Kind(); k != reflect.Struct && k != reflect.Map {
		return nil, fmt.Errorf("%w (kind %s)", ErrNotObject, k)
	}
	defer func() {
		// invopop panics on types it cannot express.
		if p := recover(); p != nil {
			raw, err = nil, fmt.Errorf("%w: %v", ErrUnsupportedType, p)
		}
	}()
	recursive := isRecursive(t)
	r := &jsonschema.Reflector{
		Anonymous:                 true,
		AllowAdditionalProperties: true,
		ExpandedStruct:            !recursive,
		DoNotReference:            !recursive,
		Namer:                     defName,
	}
	s := r.ReflectFromType(t)
	s.Version = ""
	if name, ok := strings.CutPrefix(s.Ref, "#/$defs/"); ok && s.Definitions[name] != nil {
		// A recursive root: inline a copy and keep the definition for the
		// references back to it.
		defs := s.Definitions
		root := *defs[name]
		root.Definitions = defs
		s = &root
	}
	relaxPointers(s, t, s.Definitions, map[*jsonschema.Schema]bool{})
	if s.Type != "object" {
		return nil, fmt.Errorf("%w (its schema has type %q)", ErrNotObject, s.Type)
	}
	return json.Marshal(s)
}

// defName keeps $defs keys (and so $ref pointers) to plain characters:
// generic instantiations otherwise carry package paths with slashes.
func defName(t reflect.Type) string {
	return unsafeDefChars.ReplaceAllString(t.Name(), "_")
}

var unsafeDefChars = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// isRecursive reports whether a value of t can contain another value of a
// type already on its path, which invopop can only express with $ref.
func isRecursive(t reflect.Type) bool {
	onPath := map[reflect.Type]bool{}
	done := map[reflect.Type]bool{}
	var visit func(t reflect.Type) bool
	visit = func(t reflect.Type) bool {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if onPath[t] {
			return true
		}
		if done[t] {
			return false
		}
		onPath[t] = true
		defer func() { onPath[t] = false; done[t] = true }()
		switch t.Kind() {
		case reflect.Slice, reflect.Array, reflect.Map:
			return visit(t.Elem())
		case reflect.Struct:
			for i := range t.NumField() {
				f := t.Field(i)
				if skippedField(f) {
					continue
				}
				if visit(f.Type) {
					return true
				}
			}
		}
		return false
	}
	return visit(t)
}

// skippedField reports whether invopop leaves f out of the schema: unexported
// and not embedded, or tagged json:"-" / jsonschema:"-".
func skippedField(f reflect.StructField) bool {
	if !f.IsExported() && !f.Anonymous {
		return true
	}
	return tagName(f.Tag.Get("json")) == "-" || tagName(f.Tag.Get("jsonschema")) == "-"
}

// tagName is the first comma-separated element of a struct tag value.
func tagName(tag string) string {
	name, _, _ := strings.Cut(tag, ",")
	return name
}
