package schema

import (
	"bytes"
	jsonv1 "encoding/json" // only for json.Number, the library's decoded number
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"math/big"
	"reflect"
	"strconv"
	"time"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
)

// Decode validates content, the "content" of an accepted elicitation result,
// against the form's schema and then stores it in dst, which must be a
// non-nil pointer to the form's struct type (else ErrBadTarget).
//
// With strict, a property the schema does not define is a failure naming
// it; otherwise such properties are ignored. Content that is not JSON, has a
// value of the wrong type (1.5 for an integer field), breaks an enum, bound
// or format, lacks a required property, or does not fit the Go field
// (300 for an int8) yields a *ValidationError, and dst is left untouched.
//
// On success *dst is replaced as a whole: fields whose property is absent
// from content are zero (nil for pointers), whatever they held before.
func (f *Form) Decode(content jsontext.Value, dst any, strict bool) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Type().Elem() != f.typ {
		return fmt.Errorf("%w: got %T, want *%v", ErrBadTarget, dst, f.typ)
	}
	doc, err := jsv.UnmarshalJSON(bytes.NewReader(content))
	if err != nil {
		return notJSON(err)
	}
	v := f.lenient
	if strict {
		v = f.strict
	}
	if err := v.validate(doc); err != nil {
		return err
	}
	obj := doc.(map[string]any) // the schema is "type":"object"
	out := reflect.New(f.typ).Elem()
	var issues []Issue
	for i := range f.fields {
		fl := &f.fields[i]
		raw, ok := obj[fl.name]
		if !ok {
			continue
		}
		if reason := fl.decode(out.FieldByIndex(fl.index), raw); reason != "" {
			issues = append(issues, Issue{Path: pointer([]string{fl.name}), Reason: reason})
		}
	}
	if len(issues) > 0 {
		return invalid(issues...)
	}
	rv.Elem().Set(out)
	return nil
}

// decode stores raw, which already passed the field's schema, in the struct
// field dst. It returns "" or the reason raw does not fit the Go type.
func (fl *formField) decode(dst reflect.Value, raw any) string {
	if fl.ptr {
		p := reflect.New(dst.Type().Elem())
		if reason := fl.decodeValue(p.Elem(), raw); reason != "" {
			return reason
		}
		dst.Set(p)
		return ""
	}
	return fl.decodeValue(dst, raw)
}

func (fl *formField) decodeValue(v reflect.Value, raw any) string {
	if fl.custom {
		b, err := json.Marshal(raw)
		if err == nil {
			err = json.Unmarshal(b, v.Addr().Interface())
		}
		if err != nil {
			return "value not accepted"
		}
		return ""
	}
	switch fl.kind {
	case kindString:
		v.SetString(raw.(string))
	case kindBool:
		v.SetBool(raw.(bool))
	case kindInteger:
		return setInteger(v, raw.(jsonv1.Number))
	case kindNumber:
		n, err := raw.(jsonv1.Number).Float64()
		if err != nil || v.OverflowFloat(n) {
			return fmt.Sprintf("%s is out of range", raw)
		}
		v.SetFloat(n)
	case kindMulti:
		items := raw.([]any)
		s := reflect.MakeSlice(v.Type(), len(items), len(items))
		for i, it := range items {
			s.Index(i).SetString(it.(string))
		}
		v.Set(s)
	case kindTime:
		t, err := time.Parse(fl.layout, raw.(string))
		if err != nil {
			return fmt.Sprintf("%q is not a valid %s", raw, fl.prop.Format)
		}
		v.Set(reflect.ValueOf(t))
	}
	return ""
}

// setInteger stores n, which the schema accepted as an integer (so 2.0 and
// 1e3 too), in an int or uint kind, checking the Go type's range.
func setInteger(v reflect.Value, n jsonv1.Number) string {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil && v.CanInt() && !v.OverflowInt(i) {
		v.SetInt(i)
		return ""
	}
	var r big.Rat
	if _, ok := r.SetString(string(n)); !ok || !r.IsInt() {
		return fmt.Sprintf("%s is not an integer", n)
	}
	i := r.Num()
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if i.IsInt64() && !v.OverflowInt(i.Int64()) {
			v.SetInt(i.Int64())
			return ""
		}
	default:
		if i.IsUint64() && !v.OverflowUint(i.Uint64()) {
			v.SetUint(i.Uint64())
			return ""
		}
	}
	return fmt.Sprintf("%s is out of range", n)
}
