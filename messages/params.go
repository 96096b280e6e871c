package messages

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"strings"
)

// DecodeParams decodes request params into v; absent params decode as {}.
// A failure is a -32602 error whose message names the field but no Go type.
func DecodeParams(raw jsontext.Value, v any) *Error {
	if len(raw) == 0 {
		raw = jsontext.Value(`{}`)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return Errorf(CodeInvalidParams, "invalid params: %s", DecodeErrorText(err))
	}
	return nil
}

// DecodeErrorText describes an error of encoding/json/v2's Unmarshal for a
// peer: the member at fault and what it held, without Go type names.
func DecodeErrorText(err error) string {
	if _, ok := errors.AsType[*jsontext.SyntacticError](err); ok {
		return "malformed JSON"
	}
	field, kind, ok := semanticFault(err)
	if !ok {
		return "cannot decode params"
	}
	switch {
	case errors.Is(err, ErrUnknownContentType) && field != "":
		return "field " + field + " has an unknown content type"
	case field == "" && kind != "":
		return "params must be an object, not " + kind
	case field == "":
		return "cannot decode params"
	case kind == "":
		return "field " + field + " is not valid"
	}
	return "field " + field + " must not be " + kind
}

// semanticFault reads a semantic error of encoding/json/v2: the member at
// fault as a dotted path ("" for the value itself) and the kind of JSON it
// held ("" when unknown); ok is false for another error.
func semanticFault(err error) (field, kind string, ok bool) {
	se, ok := errors.AsType[*json.SemanticError](err)
	if !ok {
		return "", "", false
	}
	return strings.ReplaceAll(strings.TrimPrefix(string(se.JSONPointer), "/"), "/", "."), jsonKind(se.JSONKind), true
}

// jsonKind names a JSON value kind for a message ("" when unknown).
func jsonKind(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a JSON string"
	case '0':
		return "a JSON number"
	case 't', 'f':
		return "a JSON bool"
	case '[':
		return "a JSON array"
	case '{':
		return "a JSON object"
	case 'n':
		return "null"
	}
	return ""
}
