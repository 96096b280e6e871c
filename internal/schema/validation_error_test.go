package schema

import (
	"encoding/json/jsontext"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func TestValidationErrorMessages(t *testing.T) {
	tests := []struct {
		name     string
		schema   string
		instance string
		want     string
	}{
		{"missing property", `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`, `{}`,
			`validation failed: at "": missing property "text"`},
		{"missing properties", `{"required":["b","a"]}`, `{}`,
			`validation failed: at "": missing properties "b", "a"`},
		{"wrong type", `{"properties":{"age":{"type":"integer"}}}`, `{"age":"36"}`,
			`validation failed: at "/age": got string, want integer`},
		{"fraction for integer", `{"properties":{"age":{"type":"integer"}}}`, `{"age":1.5}`,
			`validation failed: at "/age": got number, want integer`},
		{"several types", `{"type":["string","null"]}`, `1`,
			`validation failed: at "": got number, want null or string`},
		{"enum", `{"enum":["red","green"]}`, `"blue"`,
			`validation failed: at "": must be one of "red", "green"`},
		{"const", `{"const":"x"}`, `"y"`,
			`validation failed: at "": must be "x"`},
		{"const not HTML-escaped", `{"const":"a<b"}`, `"y"`,
			`validation failed: at "": must be "a<b"`},
		{"enum of objects, names sorted", `{"enum":[{"b":1,"a":[2]}]}`, `1`,
			`validation failed: at "": must be one of {"a":[2],"b":1}`},
		{"additional property", `{"additionalProperties":false}`, `{"x":1}`,
			`validation failed: at "": unexpected property "x"`},
		{"minLength", `{"minLength":2}`, `"a"`,
			`validation failed: at "": minLength: got 1, want 2`},
		{"maximum", `{"maximum":10}`, `11`,
			`validation failed: at "": maximum: got 11, want 10`},
		{"pattern", `{"pattern":"^a"}`, `"b"`,
			`validation failed: at "": "b" does not match pattern "^a"`},
		{"false schema", `{"properties":{"x":false}}`, `{"x":1}`,
			`validation failed: at "/x": no value is allowed here`},
		{"nullable alternatives", `{"properties":{"x":{"oneOf":[{"type":"string"},{"type":"null"}]}}}`, `{"x":1}`,
			`validation failed: at "/x": got number, want string or null`},
		{"anyOf", `{"anyOf":[{"type":"string","minLength":3},{"type":"integer"}]}`, `"a"`,
			`validation failed: at "": does not match any allowed alternative`},
		{"oneOf twice", `{"oneOf":[{"type":"integer"},{"minimum":0}]}`, `1`,
			`validation failed: at "": matches more than one allowed alternative`},
		{"pointer escaping", `{"properties":{"a/b~c":{"type":"string"}}}`, `{"a/b~c":1}`,
			`validation failed: at "/a~1b~0c": got number, want string`},
		{"array index", `{"items":{"type":"string"}}`, `["a",2]`,
			`validation failed: at "/1": got number, want string`},
		{"more than three", `{"properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"},"d":{"type":"string"},"e":{"type":"string"}}}`,
			`{"a":1,"b":1,"c":1,"d":1,"e":1}`,
			`validation failed: at "/a": got number, want string; at "/b": got number, want string; at "/c": got number, want string (and 2 more)`},
		{"format asserted only in forms", `{"format":"email"}`, `"nope"`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Compile(jsontext.Value(tt.schema))
			require.NoError(t, err)
			err = v.Validate(jsontext.Value(tt.instance))
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
			assert.NotContains(t, err.Error(), "jsonschema")
		})
	}
}

func TestValidationErrorIs(t *testing.T) {
	err := error(&ValidationError{Issues: []Issue{{Path: "", Reason: "x"}}})
	assert.ErrorIs(t, err, ErrInvalid)
	assert.NotErrorIs(t, err, ErrBadSchema)
}
