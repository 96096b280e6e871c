package schema

import (
	"bytes"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"reflect"
	"sync"
)

// forms caches FormFor's result per struct type.
var forms sync.Map // reflect.Type → formResult

type formResult struct {
	form *Form
	err  error
}

// Form is the elicitation form (MCP form mode) of a Go struct: a flat object
// schema whose properties are strings, numbers, integers, booleans, single-
// and multi-select enums. It is immutable and safe for concurrent use.
type Form struct {
	typ     reflect.Type
	fields  []formField
	schema  jsontext.Value // requestedSchema; handed out as copies
	lenient *Validator     // the schema as sent
	strict  *Validator     // the schema plus additionalProperties:false
}

// FormFor returns the form of struct type t (or pointer to struct); other
// types yield ErrNotStruct.
//
// Each exported field becomes a property named by its json tag, in field
// order; fields of embedded structs are promoted as encoding/json does. The
// `jsonschema` tag uses the grammar For reads, so one struct can describe a
// tool input and a form; keywords a form cannot carry (pattern, examples,
// ...) are left out. By Go type:
//
//	string           "string": title, description, minLength, maxLength,
//	                 format (email, uri, date, date-time), default;
//	                 with enum=... values a single-select enum
//	int..., uint...  "integer": title, description, minimum, maximum, default
//	                 (unsigned types get minimum 0 unless tagged)
//	float32, float64 "number": the same keywords
//	bool             "boolean": title, description, default
//	[]string         multi-select, only with enum=... values: minItems,
//	                 maxItems, default (repeatable)
//	json.Number      "number", like float64
//	time.Time        "string" with format date-time, or format=date
//
// A field is required unless it is a pointer or its json tag has omitempty
// or omitzero; `jsonschema:"required"` makes any field required. A nested
// struct, map, interface or other slice yields ErrNotFlat, and a tag value
// the form cannot carry (an unknown format, an enum on a number, a default
// outside the enum, a malformed number) yields ErrBadTag; both name the
// field. Results are cached per type.
func FormFor(t reflect.Type) (*Form, error) {
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%w: %v", ErrNotStruct, t)
	}
	r, ok := forms.Load(t)
	if !ok {
		f, err := newForm(t)
		r, _ = forms.LoadOrStore(t, formResult{form: f, err: err})
	}
	res := r.(formResult)
	if res.err != nil {
		return nil, fmt.Errorf("form for %v: %w", t, res.err)
	}
	return res.form, nil
}

// FormForType is FormFor for the type parameter T.
func FormForType[T any]() (*Form, error) {
	return FormFor(reflect.TypeFor[T]())
}

func newForm(t reflect.Type) (*Form, error) {
	fields, err := formFields(t)
	if err != nil {
		return nil, err
	}
	f := &Form{typ: t, fields: fields}
	if f.schema, err = formSchema(fields, false); err != nil {
		return nil, err
	}
	strict, err := formSchema(fields, true)
	if err != nil {
		return nil, err
	}
	// Formats are asserted: a form's formats are part of its contract.
	if f.lenient, err = compile(f.schema, true); err != nil {
		return nil, err
	}
	if f.strict, err = compile(strict, true); err != nil {
		return nil, err
	}
	return f, nil
}

// formDocument is a form's schema document.
type formDocument struct {
	Type                 string         `json:"type"`
	Properties           formProperties `json:"properties"`
	Required             []string       `json:"required,omitempty"`
	AdditionalProperties *bool          `json:"additionalProperties,omitzero"`
}

// formProperties is the "properties" object of a form's schema.
type formProperties []formField

// MarshalJSONTo writes the properties in field order, which no map keeps.
func (ps formProperties) MarshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	for i := range ps {
		if err := enc.WriteToken(jsontext.String(ps[i].name)); err != nil {
			return err
		}
		if err := json.MarshalEncode(enc, &ps[i].prop); err != nil {
			return fmt.Errorf("field %s: %w", ps[i].goName, err)
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// formSchema returns {"type":"object","properties":{…},"required":[…]} with
// the properties in field order; closed adds "additionalProperties":false.
func formSchema(fields []formField, closed bool) (jsontext.Value, error) {
	doc := formDocument{Type: "object", Properties: fields}
	for _, f := range fields {
		if f.required {
			doc.Required = append(doc.Required, f.name)
		}
	}
	if closed {
		doc.AdditionalProperties = new(false)
	}
	return json.Marshal(&doc)
}

// Schema returns the form's requestedSchema for elicitation/create: no
// $schema, no additionalProperties, "required" only when some field is. Each
// call returns a fresh copy.
func (f *Form) Schema() jsontext.Value {
	return bytes.Clone(f.schema)
}
