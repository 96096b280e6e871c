package messages

import (
	"bytes"
	"encoding/json"
)

// marshalJSON is json.Marshal without HTML escaping, so that the custom
// MarshalJSON methods write "<" and "&" as they are, like Marshal does.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// nonNil returns s, or an empty slice when s is nil, so that a required
// list marshals as [] and never as null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
