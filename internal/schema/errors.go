package schema

import "errors"

// Errors from reflection (For, ForOutput).
var (
	// ErrNotObject reports a Go type whose schema is not a JSON object.
	// MCP requires "type":"object" for tool input and output schemas, so
	// For and ForOutput accept only structs and maps (or pointers to them).
	ErrNotObject = errors.New("schema: type is not a JSON object")

	// ErrUnsupportedType reports a Go type that has no JSON Schema, such as
	// a channel, a function or a complex number reachable from the type.
	ErrUnsupportedType = errors.New("schema: type has no JSON Schema")
)

// Errors from Compile.
var (
	// ErrBadSchema reports a schema document that does not compile: it is
	// not JSON, breaks its metaschema, or has an unresolvable reference.
	ErrBadSchema = errors.New("schema: invalid schema")

	// ErrRemoteRef reports a $ref (or $schema) to a document outside the
	// compiled one. Nothing is fetched over the network or from disk; an
	// error returned with it also matches ErrBadSchema.
	ErrRemoteRef = errors.New("schema: remote reference not loaded")
)

// ErrInvalid is matched (errors.Is) by every *ValidationError: the instance
// does not satisfy the schema or is not JSON at all.
var ErrInvalid = errors.New("schema: validation failed")

// Errors from FormFor and (*Form).Decode.
var (
	// ErrNotStruct reports a form type that is not a struct or a pointer to
	// a struct.
	ErrNotStruct = errors.New("schema: form type is not a struct")

	// ErrNotFlat reports a form field that elicitation cannot carry: a
	// nested struct, a map, an interface, or a slice other than a []string
	// multi-select enum. The error text names the field.
	ErrNotFlat = errors.New("schema: form field is not a primitive")

	// ErrBadTag reports a `jsonschema` tag on a form field whose value the
	// form schema cannot carry, such as a format other than email, uri, date
	// and date-time, an enum on a non-string field, or an unparsable number.
	// The error text names the field.
	ErrBadTag = errors.New("schema: invalid jsonschema tag")

	// ErrBadTarget reports a Decode destination that is not a non-nil
	// pointer to the struct type the form was made for.
	ErrBadTarget = errors.New("schema: decode target is not a pointer to the form's struct")
)
