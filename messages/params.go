package messages

import "encoding/json"

// DecodeParams decodes request params into v; absent params decode as {}.
// A failure is a -32602 error whose message names the field but no Go type.
func DecodeParams(raw json.RawMessage, v any) *Error {
	if len(raw) == 0 {
		raw = json.RawMessage(`{}`)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return Errorf(CodeInvalidParams, "invalid params: %s", paramsErrText(err))
	}
	return nil
}

// paramsErrText describes a decoding error without Go type names.
func paramsErrText(err error) string {
	switch e := err.(type) {
	case *json.UnmarshalTypeError:
		if e.Field != "" {
			return "field " + e.Field + " must not be " + jsonKind(e.Value)
		}
		return "params must be an object, not " + jsonKind(e.Value)
	case *json.SyntaxError:
		return "malformed JSON"
	}
	return "cannot decode params"
}

// jsonKind names a JSON value kind as encoding/json reports it.
func jsonKind(v string) string {
	switch v {
	case "string", "number", "bool", "array", "object":
		return "a JSON " + v
	}
	return "a JSON " + "value"
}
