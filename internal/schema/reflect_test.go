package schema

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// everyTag uses each kind of tag the invopop grammar offers.
type everyTag struct {
	Name     string   `json:"name" jsonschema:"title=Name,description=Your name,minLength=1,maxLength=40,pattern=^[a-z]+$"`
	Email    string   `json:"email" jsonschema:"format=email,default=a@b.c,example=x@y.z"`
	Color    string   `json:"color" jsonschema:"enum=red,enum=green,default=red"`
	Age      int      `json:"age" jsonschema:"minimum=0,maximum=150,default=30"`
	Ratio    float64  `json:"ratio" jsonschema:"exclusiveMinimum=0,exclusiveMaximum=1,multipleOf=0.25"`
	Admin    bool     `json:"admin" jsonschema:"default=true"`
	Tags     []string `json:"tags" jsonschema:"minItems=1,maxItems=3,uniqueItems=true,enum=a,enum=b"`
	Note     string   `json:"note" jsonschema_description:"A note"`
	Code     string   `json:"code" jsonschema_extras:"x-order=1"`
	Comma    string   `json:"comma" jsonschema:"description=one\\, two"`
	Nullable *string  `json:"nullable" jsonschema:"nullable"`
	Hidden   string   `json:"hidden" jsonschema:"-"`
	Skipped  string   `json:"-"`
	When     time.Time
	private  string
}

// requiredRules covers each way a field becomes optional or required.
type requiredRules struct {
	Plain      string            `json:"plain"`
	OmitEmpty  string            `json:"omit_empty,omitempty"`
	OmitZero   int               `json:"omit_zero,omitzero"`
	Pointer    *string           `json:"pointer"`
	ForcedPtr  *string           `json:"forced_ptr" jsonschema:"required"`
	ForcedOmit string            `json:"forced_omit,omitempty" jsonschema:"required"`
	Nested     inner             `json:"nested"`
	NestedPtr  *inner            `json:"nested_ptr"`
	List       []inner           `json:"list"`
	Dict       map[string]*inner `json:"dict"`
	Embedded
	*EmbeddedPtr
}

type inner struct {
	A string  `json:"a"`
	B *string `json:"b"`
}

type Embedded struct {
	E  string  `json:"e"`
	EP *string `json:"ep"`
}

type EmbeddedPtr struct {
	F string `json:"f"`
}

type treeNode struct {
	Value    string      `json:"value"`
	Children []*treeNode `json:"children,omitempty"`
	Parent   *treeNode   `json:"parent"`
}

func TestForEveryTag(t *testing.T) {
	got, err := ForType[everyTag]()
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"type": "object",
		"properties": {
			"name": {"type": "string", "title": "Name", "description": "Your name", "minLength": 1, "maxLength": 40, "pattern": "^[a-z]+$"},
			"email": {"type": "string", "format": "email", "default": "a@b.c", "examples": ["x@y.z"]},
			"color": {"type": "string", "enum": ["red", "green"], "default": "red"},
			"age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
			"ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "multipleOf": 0.25},
			"admin": {"type": "boolean", "default": true},
			"tags": {"type": "array", "minItems": 1, "maxItems": 3, "uniqueItems": true, "items": {"type": "string", "enum": ["a", "b"]}},
			"note": {"type": "string", "description": "A note"},
			"code": {"type": "string", "x-order": "1"},
			"comma": {"type": "string", "description": "one, two"},
			"nullable": {"oneOf": [{"type": "string"}, {"type": "null"}]},
			"When": {"type": "string", "format": "date-time"}
		},
		"required": ["name", "email", "color", "age", "ratio", "admin", "tags", "note", "code", "comma", "When"]
	}`, string(got))
}

func TestForRequiredRules(t *testing.T) {
	got, err := ForType[requiredRules]()
	require.NoError(t, err)
	type required struct {
		Required []string `json:"required"` // v2 matches names case-sensitively
	}
	var s struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Required             []string `json:"required"`
			Items                required `json:"items"`
			AdditionalProperties required `json:"additionalProperties"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(got, &s))

	assert.Equal(t, []string{"plain", "forced_ptr", "forced_omit", "nested", "list", "dict", "e"}, s.Required,
		"omitempty, omitzero, pointers and fields of embedded pointers are optional")
	for _, prop := range []string{"nested", "nested_ptr"} {
		assert.Equal(t, []string{"a"}, s.Properties[prop].Required, prop)
	}
	assert.Equal(t, []string{"a"}, s.Properties["list"].Items.Required, "slice items")
	assert.Equal(t, []string{"a"}, s.Properties["dict"].AdditionalProperties.Required, "map values")
}

func TestForNoAdditionalPropertiesFalse(t *testing.T) {
	got, err := ForType[requiredRules]()
	require.NoError(t, err)
	assert.NotContains(t, string(got), `"additionalProperties":false`)
	assert.NotContains(t, string(got), `"$schema"`)
	assert.NotContains(t, string(got), `"$id"`)
	assert.NotContains(t, string(got), `"$defs"`)
	assert.NotContains(t, string(got), `"$ref"`)
}

func TestForOptInAdditionalPropertiesFalse(t *testing.T) {
	type closed struct {
		A string `json:"a"`
	}
	got, err := ForType[struct {
		C closed `json:"c" jsonschema_extras:"additionalProperties=false"`
	}]()
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"object","properties":{"c":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}},"required":["c"]}`, string(got))
}

func TestForObjectsOnly(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
		want string // JSON, or "" for an ErrNotObject
	}{
		{"struct", reflect.TypeFor[struct{ A int }](), `{"type":"object","properties":{"A":{"type":"integer"}},"required":["A"]}`},
		{"pointer to struct", reflect.TypeFor[*struct{ A int }](), `{"type":"object","properties":{"A":{"type":"integer"}},"required":["A"]}`},
		{"empty struct", reflect.TypeFor[struct{}](), `{"type":"object","properties":{}}`},
		{"map of string", reflect.TypeFor[map[string]int](), `{"type":"object","additionalProperties":{"type":"integer"}}`},
		{"map of any", reflect.TypeFor[map[string]any](), `{"type":"object"}`},
		{"string", reflect.TypeFor[string](), ""},
		{"int", reflect.TypeFor[int](), ""},
		{"slice", reflect.TypeFor[[]string](), ""},
		{"interface", reflect.TypeFor[any](), ""},
		{"time.Time", reflect.TypeFor[time.Time](), ""},
		{"nil", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range []func(reflect.Type) (jsontext.Value, error){For, ForOutput} {
				got, err := f(tt.typ)
				if tt.want == "" {
					require.ErrorIs(t, err, ErrNotObject)
					assert.Nil(t, got)
					continue
				}
				require.NoError(t, err)
				assert.JSONEq(t, tt.want, string(got))
			}
		})
	}
}

func TestForUnsupportedType(t *testing.T) {
	_, err := ForType[struct{ C chan int }]()
	require.ErrorIs(t, err, ErrUnsupportedType)

	_, err = ForType[struct {
		C chan int `json:"-"`
		A int      `json:"a"`
	}]()
	require.NoError(t, err, "a field left out of JSON does not count")
}

func TestForRecursive(t *testing.T) {
	got, err := ForType[treeNode]()
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(got, &s))
	assert.Equal(t, "object", s["type"], "the root stays inline")
	assert.Contains(t, s["$defs"], "treeNode")
	assert.Equal(t, []any{"value"}, s["required"])

	v, err := Compile(got)
	require.NoError(t, err)
	assert.NoError(t, v.Validate([]byte(`{"value":"a","children":[{"value":"b","parent":{"value":"a"}}]}`)))
	err = v.Validate([]byte(`{"value":"a","children":[{"parent":{}}]}`))
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	assert.Equal(t, []Issue{
		{Path: "/children/0", Reason: `missing property "value"`},
		{Path: "/children/0/parent", Reason: `missing property "value"`},
	}, verr.Issues)
}

func TestForCachesAndCopies(t *testing.T) {
	a, err := ForType[everyTag]()
	require.NoError(t, err)
	want := string(a)
	a[0] = 'X'
	b, err := For(reflect.TypeFor[*everyTag]())
	require.NoError(t, err)
	assert.Equal(t, want, string(b), "callers cannot corrupt the cache")

	_, err1 := ForType[int]()
	_, err2 := ForOutputType[int]()
	require.ErrorIs(t, err1, ErrNotObject)
	require.ErrorIs(t, err2, ErrNotObject)
	assert.Contains(t, err1.Error(), "input schema of int")
	assert.Contains(t, err2.Error(), "output schema of int")
}

func TestForSchemasCompile(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[everyTag](), reflect.TypeFor[requiredRules](), reflect.TypeFor[treeNode](),
	} {
		t.Run(typ.Name(), func(t *testing.T) {
			raw, err := For(typ)
			require.NoError(t, err)
			_, err = Compile(raw)
			require.NoError(t, err)
		})
	}
}
