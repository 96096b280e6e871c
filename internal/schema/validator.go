package schema

import (
	"bytes"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"fmt"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// rootURL names the compiled document inside the validator library. Relative
// references resolve against it, so they too count as remote and fail.
const rootURL = "mem:///schema.json"

// Validator checks JSON instances against one compiled schema. It is
// immutable and safe for concurrent use.
type Validator struct {
	schema *jsv.Schema
	fast   *fastObject // a check on the raw JSON for simple schemas, or nil
}

// Compile compiles a JSON Schema document once for repeated validation.
//
// The dialect is JSON Schema 2020-12 unless the document's $schema names
// another one the library embeds (draft-07, 2019-09, ...). References
// ($ref) resolve inside the document, e.g. to "#/$defs/address"; nothing
// is loaded from the network or disk, so a reference to another document is
// an error matching both ErrBadSchema and ErrRemoteRef. Any other compile
// failure matches ErrBadSchema. "format" is an annotation, as 2020-12
// specifies: it is not asserted.
func Compile(raw jsontext.Value) (*Validator, error) {
	return compile(raw, false)
}

func compile(raw jsontext.Value, assertFormat bool) (*Validator, error) {
	doc, err := jsv.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSchema, err)
	}
	c := jsv.NewCompiler()
	c.DefaultDraft(jsv.Draft2020)
	c.UseLoader(refuseLoader{})
	if assertFormat {
		c.AssertFormat()
	}
	if err := c.AddResource(rootURL, doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSchema, err)
	}
	sch, err := c.Compile(rootURL)
	if err != nil {
		var load *jsv.LoadURLError
		if errors.As(err, &load) {
			return nil, fmt.Errorf("%w: %w", ErrBadSchema, &remoteRefError{url: load.URL})
		}
		return nil, fmt.Errorf("%w: %w", ErrBadSchema, err)
	}
	v := &Validator{schema: sch}
	if !assertFormat {
		v.fast = newFastObject(raw)
	}
	return v, nil
}

// Validate checks a JSON instance. It returns nil, or a *ValidationError
// (errors.Is ErrInvalid) when the instance is not JSON or breaks the schema.
func (v *Validator) Validate(instance jsontext.Value) error {
	if v.fast != nil && v.fast.valid(instance) {
		return nil
	}
	doc, err := jsv.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return notJSON(err)
	}
	return v.validate(doc)
}

// ValidateValue checks an already decoded instance: the map[string]any,
// []any, string, float64 or json.Number, bool and nil values that
// encoding/json produces (v2, or v1 with or without UseNumber). Other Go
// values, such as structs or typed maps, are marshaled with
// encoding/json/v2 first, so a nil slice or map is checked as [] or {}. It
// returns nil, or a *ValidationError (errors.Is ErrInvalid).
func (v *Validator) ValidateValue(value any) error {
	err := v.schema.Validate(value)
	if err == nil {
		return nil
	}
	var verr *jsv.ValidationError
	if !errors.As(err, &verr) {
		return err
	}
	if !hasInvalidJSONValue(verr) {
		return fromLibrary(verr)
	}
	b, merr := json.Marshal(value)
	if merr != nil {
		return invalid(Issue{Path: "", Reason: "not a JSON value"})
	}
	return v.Validate(b)
}

func (v *Validator) validate(doc any) error {
	err := v.schema.Validate(doc)
	if err == nil {
		return nil
	}
	var verr *jsv.ValidationError
	if errors.As(err, &verr) {
		return fromLibrary(verr)
	}
	return err
}

// hasInvalidJSONValue reports whether the library met a Go value that is not
// one of encoding/json's decoded forms anywhere in the error tree.
func hasInvalidJSONValue(e *jsv.ValidationError) bool {
	if _, ok := e.ErrorKind.(*kind.InvalidJsonValue); ok {
		return true
	}
	for _, c := range e.Causes {
		if hasInvalidJSONValue(c) {
			return true
		}
	}
	return false
}

// refuseLoader is the compiler's only URL loader: it loads nothing.
type refuseLoader struct{}

// Load implements jsv.URLLoader.
func (refuseLoader) Load(string) (any, error) { return nil, ErrRemoteRef }

// remoteRefError names the document a reference pointed at.
type remoteRefError struct{ url string }

func (e *remoteRefError) Error() string {
	return fmt.Sprintf("remote reference %q not loaded", e.url)
}

// Is reports whether target is ErrRemoteRef.
func (e *remoteRefError) Is(target error) bool { return target == ErrRemoteRef }
