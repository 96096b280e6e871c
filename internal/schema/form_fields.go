package schema

import (
	"cmp"
	"encoding"
	jsonv1 "encoding/json" // only for json.Number, a field type forms support
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// fieldKind says how a form field is represented and decoded.
type fieldKind int

const (
	kindString  fieldKind = iota // string kinds: free text or single-select enum
	kindInteger                  // int and uint kinds
	kindNumber                   // float kinds
	kindBool                     // bool
	kindMulti                    // []string with enum values: multi-select
	kindTime                     // time.Time: string with format date-time or date
)

// formField is one property of a form and the struct field behind it.
type formField struct {
	goName   string // struct field name, for error messages
	name     string // JSON property name
	index    []int  // reflect index path from the form's struct
	kind     fieldKind
	ptr      bool   // the field is *T: allocated on decode
	custom   bool   // the type unmarshals itself (json.Number does too): decoded through encoding/json/v2
	layout   string // kindTime: time layout of the format
	required bool
	prop     property
}

// property is the schema of one form field: a PrimitiveSchemaDefinition of
// the MCP schema, marshaled in this field order.
type property struct {
	Type        string         `json:"type"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	MinLength   *uint64        `json:"minLength,omitzero"`
	MaxLength   *uint64        `json:"maxLength,omitzero"`
	Format      string         `json:"format,omitempty"`
	Enum        []string       `json:"enum,omitempty"`
	Minimum     jsontext.Value `json:"minimum,omitzero"` // a JSON number as tagged
	Maximum     jsontext.Value `json:"maximum,omitzero"`
	MinItems    *uint64        `json:"minItems,omitzero"`
	MaxItems    *uint64        `json:"maxItems,omitzero"`
	Items       *enumItems     `json:"items,omitzero"`
	Default     any            `json:"default,omitzero"` // omitzero: a default of "" is kept
}

// enumItems is the items schema of a multi-select.
type enumItems struct {
	Type string   `json:"type"`
	Enum []string `json:"enum"`
}

// formFormats are the string formats elicitation allows.
var formFormats = []string{"email", "uri", "date", "date-time"}

var (
	timeType            = reflect.TypeFor[time.Time]()
	jsonNumberType      = reflect.TypeFor[jsonv1.Number]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	jsonFromType        = reflect.TypeFor[json.UnmarshalerFrom]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// formFields lists the properties of struct t in encoding/json's order, with
// fields of embedded structs promoted and shadowed as encoding/json does.
func formFields(t reflect.Type) ([]formField, error) {
	var all []formField
	if err := collectFields(t, nil, &all); err != nil {
		return nil, err
	}
	shallowest := map[string]int{}
	for _, f := range all {
		if d, ok := shallowest[f.name]; !ok || len(f.index) < d {
			shallowest[f.name] = len(f.index)
		}
	}
	var out []formField
	for _, f := range all {
		if len(f.index) != shallowest[f.name] {
			continue // shadowed by a shallower field
		}
		if i := slices.IndexFunc(out, func(o formField) bool { return o.name == f.name }); i >= 0 {
			return nil, fmt.Errorf("%w: fields %s and %s both map to property %q", ErrBadTag, out[i].goName, f.goName, f.name)
		}
		out = append(out, f)
	}
	return out, nil
}

func collectFields(t reflect.Type, index []int, out *[]formField) error {
	for i := range t.NumField() {
		f := t.Field(i)
		if skippedField(f) {
			continue
		}
		jsonTag := strings.Split(f.Tag.Get("json"), ",")
		idx := append(slices.Clip(index), i)
		if f.Anonymous && jsonTag[0] == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct {
				return fmt.Errorf("%w: field %s embeds a pointer to a struct; embed the struct itself", ErrNotFlat, f.Name)
			}
			if ft.Kind() == reflect.Struct && ft != timeType {
				if err := collectFields(ft, idx, out); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() && indirect(f.Type).Kind() != reflect.Struct {
			// An embedded unexported non-struct is invisible to encoding/json;
			// a named embedded struct is a (nested) field, rejected below.
			continue
		}
		ff, err := newFormField(f, jsonTag, idx)
		if err != nil {
			return err
		}
		*out = append(*out, ff)
	}
	return nil
}

// newFormField derives the property for struct field f.
func newFormField(f reflect.StructField, jsonTag []string, index []int) (formField, error) {
	name := cmp.Or(jsonTag[0], f.Name)
	opts := jsonTag[1:]
	fail := func(sentinel error, format string, args ...any) (formField, error) {
		return formField{}, fmt.Errorf("%w: field %s (%q): %s", sentinel, f.Name, name, fmt.Sprintf(format, args...))
	}
	if slices.Contains(opts, "string") {
		return fail(ErrBadTag, "the json \",string\" option is not supported")
	}
	tags := parseTags(f)
	ff := formField{goName: f.Name, name: name, index: index}
	ft := f.Type
	if ft.Kind() == reflect.Pointer {
		ff.ptr, ft = true, ft.Elem()
	}
	omit := slices.Contains(opts, "omitempty") || slices.Contains(opts, "omitzero")
	ff.required = tags.required || !ff.ptr && !omit
	ff.prop.Title, _ = tags.last("title")
	ff.prop.Description, _ = tags.last("description")

	var err error
	k := ft.Kind()
	switch {
	case ft == timeType:
		err = ff.timeProperty(tags)
	case ft == jsonNumberType:
		err = ff.numberProperty(tags, "number", false)
	case k == reflect.String:
		err = ff.stringProperty(tags)
	case k >= reflect.Int && k <= reflect.Uint64:
		err = ff.numberProperty(tags, "integer", k >= reflect.Uint)
	case k == reflect.Float32 || k == reflect.Float64:
		err = ff.numberProperty(tags, "number", false)
	case k == reflect.Bool:
		err = ff.boolProperty(tags)
	case k == reflect.Slice && ft.Elem().Kind() == reflect.String:
		if len(tags.all("enum")) == 0 {
			return fail(ErrNotFlat, "a []string field must list its choices with enum=... (multi-select)")
		}
		err = ff.multiProperty(tags)
	default:
		return fail(ErrNotFlat, "%s is not a string, number, integer, boolean or multi-select", ft)
	}
	if err != nil {
		return fail(ErrBadTag, "%v", err)
	}
	ff.custom = ft != timeType && (unmarshalsItself(ft) || k == reflect.Slice && unmarshalsItself(ft.Elem()))
	return ff, nil
}

// indirect strips one pointer.
func indirect(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// unmarshalsItself reports whether encoding/json/v2 hands t's JSON to a
// method of t.
func unmarshalsItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(jsonFromType) || p.Implements(jsonUnmarshalerType) || p.Implements(textUnmarshalerType)
}

func (ff *formField) stringProperty(tags fieldTags) error {
	ff.kind = kindString
	p := &ff.prop
	p.Type = "string"
	p.Enum = tags.all("enum")
	if len(p.Enum) == 0 {
		// Length and format make no sense next to a fixed list of choices.
		var err error
		if p.MinLength, err = uintTag(tags, "minLength"); err != nil {
			return err
		}
		if p.MaxLength, err = uintTag(tags, "maxLength"); err != nil {
			return err
		}
		if p.Format, err = formatTag(tags); err != nil {
			return err
		}
	}
	if d, ok := tags.last("default"); ok {
		if len(p.Enum) > 0 && !slices.Contains(p.Enum, d) {
			return fmt.Errorf("default %q is not among the enum values", d)
		}
		p.Default = d
	}
	return nil
}

func (ff *formField) timeProperty(tags fieldTags) error {
	ff.kind = kindTime
	p := &ff.prop
	p.Type, p.Format = "string", "date-time"
	if f, ok := tags.last("format"); ok {
		p.Format = f
	}
	switch p.Format {
	case "date-time":
		ff.layout = time.RFC3339Nano
	case "date":
		ff.layout = time.DateOnly
	default:
		return fmt.Errorf("format %q: a time.Time field takes date-time or date", p.Format)
	}
	if d, ok := tags.last("default"); ok {
		if _, err := time.Parse(ff.layout, d); err != nil {
			return fmt.Errorf("default %q is not a valid %s", d, p.Format)
		}
		p.Default = d
	}
	return nil
}

func (ff *formField) numberProperty(tags fieldTags, typ string, unsigned bool) error {
	ff.kind = kindNumber
	if typ == "integer" {
		ff.kind = kindInteger
	}
	p := &ff.prop
	p.Type = typ
	if len(tags.all("enum")) > 0 {
		return fmt.Errorf("enum is only supported on string fields")
	}
	var err error
	if p.Minimum, err = numberTag(tags, "minimum", false); err != nil {
		return err
	}
	if p.Maximum, err = numberTag(tags, "maximum", false); err != nil {
		return err
	}
	if unsigned && p.Minimum == nil {
		p.Minimum = jsontext.Value("0")
	}
	d, err := numberTag(tags, "default", typ == "integer")
	if err != nil {
		return err
	}
	if d != nil {
		p.Default = d
	}
	return nil
}

func (ff *formField) boolProperty(tags fieldTags) error {
	ff.kind = kindBool
	ff.prop.Type = "boolean"
	if d, ok := tags.last("default"); ok {
		switch d {
		case "true", "false":
			ff.prop.Default = d == "true"
		default:
			return fmt.Errorf("default %q is not true or false", d)
		}
	}
	return nil
}

func (ff *formField) multiProperty(tags fieldTags) error {
	ff.kind = kindMulti
	p := &ff.prop
	p.Type = "array"
	p.Items = &enumItems{Type: "string", Enum: tags.all("enum")}
	var err error
	if p.MinItems, err = uintTag(tags, "minItems"); err != nil {
		return err
	}
	if p.MaxItems, err = uintTag(tags, "maxItems"); err != nil {
		return err
	}
	if ds := tags.all("default"); len(ds) > 0 {
		for _, d := range ds {
			if !slices.Contains(p.Items.Enum, d) {
				return fmt.Errorf("default %q is not among the enum values", d)
			}
		}
		p.Default = ds
	}
	return nil
}

// uintTag parses a non-negative integer keyword such as minLength.
func uintTag(tags fieldTags, key string) (*uint64, error) {
	v, ok := tags.last(key)
	if !ok {
		return nil, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%s=%q is not a non-negative integer", key, v)
	}
	return &n, nil
}

// numberTag parses a JSON number keyword such as minimum; nil when absent.
func numberTag(tags fieldTags, key string, integer bool) (jsontext.Value, error) {
	v, ok := tags.last(key)
	if !ok {
		return nil, nil
	}
	var r big.Rat
	if _, err := strconv.ParseFloat(v, 64); err != nil || !jsontext.Value(v).IsValid() {
		return nil, fmt.Errorf("%s=%q is not a number", key, v)
	}
	if _, ok := r.SetString(v); integer && (!ok || !r.IsInt()) {
		return nil, fmt.Errorf("%s=%q is not an integer", key, v)
	}
	return jsontext.Value(v), nil
}

// formatTag checks the format keyword against the formats forms allow.
func formatTag(tags fieldTags) (string, error) {
	f, ok := tags.last("format")
	if !ok {
		return "", nil
	}
	if !slices.Contains(formFormats, f) {
		return "", fmt.Errorf("format %q: forms allow only %s", f, strings.Join(formFormats, ", "))
	}
	return f, nil
}
