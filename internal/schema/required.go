package schema

import (
	"cmp"
	"reflect"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"
)

// relaxPointers applies the pointer rule to a schema invopop reflected from
// t: invopop requires every field without omitempty/omitzero, but a pointer
// field (or a field promoted from an embedded pointer) is optional unless
// tagged `jsonschema:"required"`. It walks the schema alongside the type,
// following $refs into defs; seen guards against revisiting shared and
// recursive definitions.
func relaxPointers(s *jsonschema.Schema, t reflect.Type, defs jsonschema.Definitions, seen map[*jsonschema.Schema]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s = resolve(s, defs)
	if s == nil || seen[s] {
		return
	}
	seen[s] = true
	switch t.Kind() {
	case reflect.Struct:
		if s.Properties != nil {
			relaxFields(s, t, false, defs, seen)
		}
	case reflect.Slice, reflect.Array:
		relaxPointers(s.Items, t.Elem(), defs, seen)
	case reflect.Map:
		relaxPointers(s.AdditionalProperties, t.Elem(), defs, seen)
		for _, p := range s.PatternProperties {
			relaxPointers(p, t.Elem(), defs, seen)
		}
	}
}

// relaxFields handles the fields of struct t, whose properties live in s
// (t's own schema, or the schema of the struct t is embedded in). optional
// marks fields promoted through an embedded pointer.
func relaxFields(s *jsonschema.Schema, t reflect.Type, optional bool, defs jsonschema.Definitions, seen map[*jsonschema.Schema]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if skippedField(f) {
			continue
		}
		jsonTag := strings.Split(f.Tag.Get("json"), ",")
		ft := f.Type
		if f.Anonymous && jsonTag[0] == "" || slices.Contains(jsonTag[1:], "inline") {
			// Promoted fields, as invopop (and encoding/json) flatten them.
			ptr := ft.Kind() == reflect.Pointer
			if ptr {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				relaxFields(s, ft, optional || ptr, defs, seen)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		name := cmp.Or(jsonTag[0], f.Name)
		prop, ok := s.Properties.Get(name)
		if !ok {
			continue
		}
		explicit := slices.Contains(strings.Split(f.Tag.Get("jsonschema"), ","), "required")
		if (optional || f.Type.Kind() == reflect.Pointer) && !explicit {
			s.Required = without(s.Required, name)
		}
		relaxPointers(unwrapNullable(prop), f.Type, defs, seen)
	}
}

// resolve follows a local "#/$defs/name" reference.
func resolve(s *jsonschema.Schema, defs jsonschema.Definitions) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	if name, ok := strings.CutPrefix(s.Ref, "#/$defs/"); ok {
		return defs[name]
	}
	return s
}

// unwrapNullable undoes invopop's `jsonschema:"nullable"` wrapper,
// {"oneOf":[schema,{"type":"null"}]}.
func unwrapNullable(s *jsonschema.Schema) *jsonschema.Schema {
	if s != nil && s.Type == "" && len(s.OneOf) == 2 && s.OneOf[1].Type == "null" {
		return s.OneOf[0]
	}
	return s
}

// without returns a new slice holding names minus name (nil when empty), so
// a Required slice shared by two schemas is never edited in place.
func without(names []string, name string) []string {
	var out []string
	for _, n := range names {
		if n != name {
			out = append(out, n)
		}
	}
	return out
}
