package schema

import (
	"bytes"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// contact is a form that also serves as a tool input: it uses the same tags.
type contact struct {
	Name     string     `json:"name" jsonschema:"title=Name,description=Your full name,minLength=1,maxLength=80,pattern=^\\S"`
	Email    string     `json:"email,omitempty" jsonschema:"title=Email,format=email"`
	Age      *int       `json:"age" jsonschema:"minimum=0,maximum=150,default=30"`
	Score    float64    `json:"score" jsonschema:"minimum=0.5,maximum=9.5"`
	Count    uint8      `json:"count,omitempty"`
	Agree    bool       `json:"agree" jsonschema:"title=I agree,default=false"`
	Color    string     `json:"color" jsonschema:"enum=red,enum=green,enum=blue,default=green"`
	Toppings []string   `json:"toppings,omitempty" jsonschema:"enum=cheese,enum=ham,enum=olives,minItems=1,maxItems=2,default=cheese"`
	Day      time.Time  `json:"day" jsonschema:"format=date"`
	At       *time.Time `json:"at,omitempty"`
	Notes    string     `json:"notes" jsonschema:"required"`
	Skip     string     `json:"-"`
	Hidden   string     `jsonschema:"-"`
	Plain    string
	private  string
}

const contactSchema = `{
	"type": "object",
	"properties": {
		"name": {"type": "string", "title": "Name", "description": "Your full name", "minLength": 1, "maxLength": 80},
		"email": {"type": "string", "title": "Email", "format": "email"},
		"age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
		"score": {"type": "number", "minimum": 0.5, "maximum": 9.5},
		"count": {"type": "integer", "minimum": 0},
		"agree": {"type": "boolean", "title": "I agree", "default": false},
		"color": {"type": "string", "enum": ["red", "green", "blue"], "default": "green"},
		"toppings": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string", "enum": ["cheese", "ham", "olives"]}, "default": ["cheese"]},
		"day": {"type": "string", "format": "date"},
		"at": {"type": "string", "format": "date-time"},
		"notes": {"type": "string"},
		"Plain": {"type": "string"}
	},
	"required": ["name", "score", "agree", "color", "day", "notes", "Plain"]
}`

func TestFormFor(t *testing.T) {
	f, err := FormForType[contact]()
	require.NoError(t, err)
	got := f.Schema()
	assert.JSONEq(t, contactSchema, string(got))

	keys, err := propertyOrder(got)
	require.NoError(t, err)
	assert.Equal(t, []string{"name", "email", "age", "score", "count", "agree", "color", "toppings", "day", "at", "notes", "Plain"}, keys,
		"properties keep struct field order")

	// The same struct serves as a tool input schema.
	_, err = ForType[contact]()
	require.NoError(t, err)
}

func TestFormForShapes(t *testing.T) {
	type Base struct {
		ID   string `json:"id"`
		Kind string `json:"kind"`
	}
	type hidden struct {
		Secret string `json:"secret"`
	}
	type withEmbedded struct {
		Base
		hidden
		Kind string `json:"kind" jsonschema:"enum=a"` // shadows Base.Kind
	}
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"empty", reflect.TypeFor[struct{}](), `{"type":"object","properties":{}}`},
		{"pointer to struct", reflect.TypeFor[*struct {
			A string `json:"a"`
		}](), `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`},
		{"all optional", reflect.TypeFor[struct {
			A *string `json:"a"`
			B bool    `json:"b,omitzero"`
		}](), `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"boolean"}}}`},
		{"embedded structs promote", reflect.TypeFor[withEmbedded](),
			`{"type":"object","properties":{"id":{"type":"string"},"secret":{"type":"string"},"kind":{"type":"string","enum":["a"]}},"required":["id","secret","kind"]}`},
		{"named string with enum", reflect.TypeFor[struct {
			L level `json:"l" jsonschema:"enum=low,enum=high"`
		}](), `{"type":"object","properties":{"l":{"type":"string","enum":["low","high"]}},"required":["l"]}`},
		{"escaped comma", reflect.TypeFor[struct {
			A string `json:"a" jsonschema:"description=x\\, y"`
		}](), `{"type":"object","properties":{"a":{"type":"string","description":"x, y"}},"required":["a"]}`},
		{"empty default", reflect.TypeFor[struct {
			A string `json:"a" jsonschema:"default="`
		}](), `{"type":"object","properties":{"a":{"type":"string","default":""}},"required":["a"]}`},
		{"jsonschema_description", reflect.TypeFor[struct {
			A string `json:"a" jsonschema_description:"about a"`
		}](), `{"type":"object","properties":{"a":{"type":"string","description":"about a"}},"required":["a"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := FormFor(tt.typ)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(f.Schema()))
		})
	}
}

type level string

func TestFormForRejects(t *testing.T) {
	type address struct{ Street string }
	tests := []struct {
		name     string
		typ      reflect.Type
		sentinel error
		mentions string
	}{
		{"not a struct", reflect.TypeFor[int](), ErrNotStruct, "int"},
		{"pointer to non-struct", reflect.TypeFor[*string](), ErrNotStruct, "string"},
		{"map", reflect.TypeFor[map[string]string](), ErrNotStruct, "map"},
		{"nil", nil, ErrNotStruct, "nil"},
		{"nested struct", reflect.TypeFor[struct {
			Home address `json:"home"`
		}](), ErrNotFlat, `Home ("home")`},
		{"pointer to nested struct", reflect.TypeFor[struct {
			Home *address `json:"home"`
		}](), ErrNotFlat, "Home"},
		{"named embedded struct", reflect.TypeFor[struct {
			address `json:"addr"`
		}](), ErrNotFlat, "address"},
		{"embedded pointer", reflect.TypeFor[struct{ *address }](), ErrNotFlat, "address"},
		{"map field", reflect.TypeFor[struct {
			M map[string]string `json:"m"`
		}](), ErrNotFlat, "M"},
		{"interface field", reflect.TypeFor[struct {
			X any `json:"x"`
		}](), ErrNotFlat, "X"},
		{"int slice", reflect.TypeFor[struct {
			N []int `json:"n"`
		}](), ErrNotFlat, "N"},
		{"string slice without enum", reflect.TypeFor[struct {
			S []string `json:"s"`
		}](), ErrNotFlat, "multi-select"},
		{"double pointer", reflect.TypeFor[struct {
			P **string `json:"p"`
		}](), ErrNotFlat, "P"},
		{"unsupported format", reflect.TypeFor[struct {
			ID string `json:"id" jsonschema:"format=uuid"`
		}](), ErrBadTag, `format "uuid"`},
		{"time with a string format", reflect.TypeFor[struct {
			T time.Time `json:"t" jsonschema:"format=email"`
		}](), ErrBadTag, "T"},
		{"enum on integer", reflect.TypeFor[struct {
			N int `json:"n" jsonschema:"enum=1,enum=2"`
		}](), ErrBadTag, "enum"},
		{"default outside enum", reflect.TypeFor[struct {
			C string `json:"c" jsonschema:"enum=a,default=b"`
		}](), ErrBadTag, `default "b"`},
		{"multi default outside enum", reflect.TypeFor[struct {
			C []string `json:"c" jsonschema:"enum=a,default=a,default=z"`
		}](), ErrBadTag, `default "z"`},
		{"bad minLength", reflect.TypeFor[struct {
			S string `json:"s" jsonschema:"minLength=-1"`
		}](), ErrBadTag, "minLength"},
		{"bad minimum", reflect.TypeFor[struct {
			N int `json:"n" jsonschema:"minimum=ten"`
		}](), ErrBadTag, "minimum"},
		{"fractional integer default", reflect.TypeFor[struct {
			N int `json:"n" jsonschema:"default=1.5"`
		}](), ErrBadTag, "not an integer"},
		{"bool default", reflect.TypeFor[struct {
			B bool `json:"b" jsonschema:"default=yes"`
		}](), ErrBadTag, "default"},
		{"json string option", reflect.TypeFor[struct {
			N int `json:"n,string"`
		}](), ErrBadTag, "string"},
		{"same name twice", reflect.StructOf([]reflect.StructField{ // built at run time: vet rejects the literal
			{Name: "A", Type: reflect.TypeFor[string](), Tag: `json:"x"`},
			{Name: "B", Type: reflect.TypeFor[string](), Tag: `json:"x"`},
		}), ErrBadTag, `"x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := FormFor(tt.typ)
			require.ErrorIs(t, err, tt.sentinel)
			assert.Nil(t, f)
			assert.Contains(t, err.Error(), tt.mentions)
		})
	}
}

// TestFormSchemaConformsToSpec checks generated schemas against the
// requestedSchema definition of the MCP 2025-11-25 schema.
func TestFormSchemaConformsToSpec(t *testing.T) {
	raw, err := os.ReadFile("testdata/requested_schema_2025-11-25.json")
	require.NoError(t, err)
	spec, err := Compile(raw)
	require.NoError(t, err)

	for _, typ := range []reflect.Type{
		reflect.TypeFor[contact](),
		reflect.TypeFor[struct{}](),
		reflect.TypeFor[decodeTarget](),
	} {
		t.Run(typ.String(), func(t *testing.T) {
			f, err := FormFor(typ)
			require.NoError(t, err)
			assert.NoError(t, spec.Validate(f.Schema()))
		})
	}

	// The check has teeth: a nested object is not a primitive.
	assert.ErrorIs(t, spec.Validate(jsontext.Value(`{"type":"object","properties":{"a":{"type":"object"}}}`)), ErrInvalid)
}

func TestFormForCachesAndCopies(t *testing.T) {
	a, err := FormForType[contact]()
	require.NoError(t, err)
	b, err := FormFor(reflect.TypeFor[*contact]())
	require.NoError(t, err)
	assert.Same(t, a, b)

	s := a.Schema()
	s[0] = 'X'
	assert.JSONEq(t, contactSchema, string(b.Schema()))
}

// propertyOrder returns the keys of a schema's "properties" in document order.
func propertyOrder(schema jsontext.Value) ([]string, error) {
	var doc struct {
		Properties jsontext.Value `json:"properties"`
	}
	if err := json.Unmarshal(schema, &doc); err != nil {
		return nil, err
	}
	dec := jsontext.NewDecoder(bytes.NewReader(doc.Properties))
	if _, err := dec.ReadToken(); err != nil { // the opening brace
		return nil, err
	}
	var keys []string
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		keys = append(keys, tok.String())
		if err := dec.SkipValue(); err != nil {
			return nil, err
		}
	}
	return keys, nil
}
