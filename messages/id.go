package messages

import (
	"bytes"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"errors"
	"strconv"
)

// ID is a JSON-RPC request ID: a string or a number, kept as the exact JSON
// text it arrived as so that a response echoes it byte for byte. The zero ID
// is "no ID" (a notification). IDs are comparable and usable as map keys; the
// number 1 and the string "1" are different IDs.
type ID struct {
	raw string
}

// errBadID is returned when an ID is neither a string nor a number.
var errBadID = errors.New("id must be a string or a number")

// StringID returns the ID for the string s.
func StringID(s string) ID {
	b, _ := json.Marshal(s, encodeOptions) // a string always marshals
	return ID{raw: string(b)}
}

// IntID returns the ID for the integer n.
func IntID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// IsZero reports whether the ID is absent.
func (id ID) IsZero() bool { return id.raw == "" }

// IsString reports whether the ID is a JSON string.
func (id ID) IsString() bool { return len(id.raw) > 0 && id.raw[0] == '"' }

// Raw returns the ID's exact JSON text ("null" for the zero ID).
func (id ID) Raw() string {
	if id.raw == "" {
		return "null"
	}
	return id.raw
}

// String returns the ID for humans: a string ID unquoted, a number as written.
func (id ID) String() string {
	if id.IsString() {
		var s string
		if json.Unmarshal([]byte(id.raw), &s) == nil {
			return s
		}
	}
	return id.raw
}

// Int returns the ID as an integer when it is an integral number.
func (id ID) Int() (int64, bool) {
	if id.raw == "" || id.IsString() {
		return 0, false
	}
	n, err := strconv.ParseInt(id.raw, 10, 64)
	return n, err == nil
}

// MarshalJSONTo writes the ID exactly as it was received (v2 would write
// the struct: an ID is raw JSON text of one of two kinds).
func (id ID) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(jsontext.Value(id.Raw()))
}

// UnmarshalJSONFrom accepts a JSON string or number; null leaves the ID
// zero.
func (id *ID) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	parsed, err := ParseID(raw)
	if err != nil {
		return err
	}
	*id = parsed
	return nil
}

// ParseID parses raw JSON text as an ID. "null" and empty input give the
// zero ID; anything other than a string or a number is an error.
func ParseID(b []byte) (ID, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return ID{}, nil
	}
	v := jsontext.Value(b)
	if k := v.Kind(); (k != '"' && k != '0') || !v.IsValid() {
		return ID{}, errBadID
	}
	return ID{raw: string(b)}, nil
}
