package schema

import (
	jsonv1 "encoding/json"
	"encoding/json/jsontext"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type decodeTarget struct {
	Name   string    `json:"name" jsonschema:"minLength=1"`
	Email  string    `json:"email,omitempty" jsonschema:"format=email"`
	Age    int8      `json:"age,omitempty"`
	Count  *uint     `json:"count"`
	Ratio  float32   `json:"ratio,omitempty" jsonschema:"maximum=1"`
	Agree  bool      `json:"agree"`
	Color  level     `json:"color,omitempty" jsonschema:"enum=low,enum=high"`
	Picks  []string  `json:"picks,omitempty" jsonschema:"enum=a,enum=b,enum=c,maxItems=2"`
	Day    time.Time `json:"day,omitzero" jsonschema:"format=date"`
	Nick   *string   `json:"nick"`
	Legacy string    `json:"-"`
}

func TestFormDecode(t *testing.T) {
	f, err := FormForType[decodeTarget]()
	require.NoError(t, err)
	ptr := func(s string) *string { return &s }
	uptr := func(u uint) *uint { return &u }

	tests := []struct {
		name    string
		content string
		strict  bool
		want    decodeTarget
		issues  []Issue
	}{
		{
			name:    "minimal",
			content: `{"name":"Ada","agree":true}`,
			want:    decodeTarget{Name: "Ada", Agree: true},
		},
		{
			name: "everything",
			content: `{"name":"Ada","email":"ada@example.com","age":36,"count":3,"ratio":0.5,"agree":false,
				"color":"high","picks":["a","c"],"day":"1815-12-10","nick":"A"}`,
			want: decodeTarget{Name: "Ada", Email: "ada@example.com", Age: 36, Count: uptr(3), Ratio: 0.5,
				Color: "high", Picks: []string{"a", "c"}, Day: time.Date(1815, 12, 10, 0, 0, 0, 0, time.UTC), Nick: ptr("A")},
		},
		{
			name:    "integral number forms for integers",
			content: `{"name":"Ada","agree":true,"age":2.0,"count":1e2}`,
			want:    decodeTarget{Name: "Ada", Agree: true, Age: 2, Count: uptr(100)},
		},
		{
			name:    "unknown key ignored when not strict",
			content: `{"name":"Ada","agree":true,"extra":1}`,
			want:    decodeTarget{Name: "Ada", Agree: true},
		},
		{
			name:    "strict without unknown keys",
			content: `{"name":"Ada","agree":true}`,
			strict:  true,
			want:    decodeTarget{Name: "Ada", Agree: true},
		},
		{
			name:    "unknown key rejected when strict",
			content: `{"name":"Ada","agree":true,"extra":1}`,
			strict:  true,
			issues:  []Issue{{"", `unexpected property "extra"`}},
		},
		{
			name:    "missing required",
			content: `{"name":"Ada"}`,
			issues:  []Issue{{"", `missing property "agree"`}},
		},
		{
			name:    "type mismatch",
			content: `{"name":7,"agree":"yes"}`,
			issues:  []Issue{{"/agree", "got string, want boolean"}, {"/name", "got number, want string"}},
		},
		{
			name:    "fraction for integer",
			content: `{"name":"Ada","agree":true,"age":1.5}`,
			issues:  []Issue{{"/age", "got number, want integer"}},
		},
		{
			name:    "negative for unsigned",
			content: `{"name":"Ada","agree":true,"count":-1}`,
			issues:  []Issue{{"/count", "minimum: got -1, want 0"}},
		},
		{
			name:    "out of range for the Go type",
			content: `{"name":"Ada","agree":true,"age":300}`,
			issues:  []Issue{{"/age", "300 is out of range"}},
		},
		{
			name:    "enum violation",
			content: `{"name":"Ada","agree":true,"color":"mid"}`,
			issues:  []Issue{{"/color", `must be one of "low", "high"`}},
		},
		{
			name:    "multi-select violation",
			content: `{"name":"Ada","agree":true,"picks":["a","z"]}`,
			issues:  []Issue{{"/picks/1", `must be one of "a", "b", "c"`}},
		},
		{
			name:    "too many picks",
			content: `{"name":"Ada","agree":true,"picks":["a","b","c"]}`,
			issues:  []Issue{{"/picks", "maxItems: got 3, want 2"}},
		},
		{
			name:    "format asserted",
			content: `{"name":"Ada","agree":true,"email":"not-an-email","day":"10/12/1815"}`,
			issues:  []Issue{{"/day", `"10/12/1815" is not a valid date`}, {"/email", `"not-an-email" is not a valid email`}},
		},
		{
			name:    "minLength",
			content: `{"name":"","agree":true}`,
			issues:  []Issue{{"/name", "minLength: got 0, want 1"}},
		},
		{
			name:    "null for a pointer field",
			content: `{"name":"Ada","agree":true,"nick":null}`,
			issues:  []Issue{{"/nick", "got null, want string"}},
		},
		{
			name:    "not an object",
			content: `["Ada"]`,
			issues:  []Issue{{"", "got array, want object"}},
		},
		{
			name:    "not JSON",
			content: `{"name":`,
			issues:  []Issue{{"", "invalid JSON: unexpected EOF"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sentinel := decodeTarget{Name: "before", Legacy: "kept?", Picks: []string{"b"}}
			dst := sentinel
			err := f.Decode(jsontext.Value(tt.content), &dst, tt.strict)
			if tt.issues != nil {
				var verr *ValidationError
				require.ErrorAs(t, err, &verr)
				require.ErrorIs(t, err, ErrInvalid)
				assert.Equal(t, tt.issues, verr.Issues)
				assert.Equal(t, sentinel, dst, "dst is untouched on failure")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, dst, "dst is replaced as a whole")
		})
	}
}

func TestFormDecodeTarget(t *testing.T) {
	f, err := FormForType[decodeTarget]()
	require.NoError(t, err)
	content := jsontext.Value(`{"name":"Ada","agree":true}`)
	var nilPtr *decodeTarget
	for _, dst := range []any{nil, decodeTarget{}, nilPtr, &contact{}, new(*decodeTarget), new(string)} {
		t.Run(fmt.Sprintf("%T", dst), func(t *testing.T) {
			require.ErrorIs(t, f.Decode(content, dst, false), ErrBadTarget)
		})
	}
}

// custom is a string type that parses itself.
type custom string

func (c *custom) UnmarshalText(b []byte) error {
	if string(b) == "bad" {
		return fmt.Errorf("bad value")
	}
	*c = custom("<" + string(b) + ">")
	return nil
}

func TestFormDecodeCustomUnmarshaler(t *testing.T) {
	type form struct {
		C custom `json:"c"`
	}
	f, err := FormForType[form]()
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"object","properties":{"c":{"type":"string"}},"required":["c"]}`, string(f.Schema()))

	var dst form
	require.NoError(t, f.Decode(jsontext.Value(`{"c":"x"}`), &dst, true))
	assert.Equal(t, custom("<x>"), dst.C)

	err = f.Decode(jsontext.Value(`{"c":"bad"}`), &dst, true)
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	assert.Equal(t, []Issue{{"/c", "value not accepted"}}, verr.Issues)
	assert.Equal(t, custom("<x>"), dst.C)
}

// upper is a string type that decodes itself from the JSON stream.
type upper string

func (u *upper) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	*u = upper(strings.ToUpper(tok.String()))
	return nil
}

func TestFormDecodeUnmarshalerFrom(t *testing.T) {
	type form struct {
		U upper `json:"u"`
	}
	f, err := FormForType[form]()
	require.NoError(t, err)
	var dst form
	require.NoError(t, f.Decode(jsontext.Value(`{"u":"ada"}`), &dst, true))
	assert.Equal(t, upper("ADA"), dst.U)
}

func TestFormDecodeJSONNumber(t *testing.T) {
	type form struct {
		N jsonv1.Number `json:"n" jsonschema:"maximum=10"`
	}
	f, err := FormForType[form]()
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"object","properties":{"n":{"type":"number","maximum":10}},"required":["n"]}`, string(f.Schema()))
	var dst form
	require.NoError(t, f.Decode(jsontext.Value(`{"n":2.50}`), &dst, true))
	assert.Equal(t, jsonv1.Number("2.50"), dst.N)
	assert.ErrorIs(t, f.Decode(jsontext.Value(`{"n":"2"}`), &dst, true), ErrInvalid)
}

func TestFormDecodeEmbedded(t *testing.T) {
	type meta struct {
		Tag string `json:"tag"`
	}
	type form struct {
		meta
		Name string `json:"name"`
	}
	f, err := FormForType[form]()
	require.NoError(t, err)
	var dst form
	require.NoError(t, f.Decode(jsontext.Value(`{"tag":"t","name":"n"}`), &dst, true))
	assert.Equal(t, form{meta: meta{Tag: "t"}, Name: "n"}, dst)
}

func TestConcurrentUse(t *testing.T) {
	type local struct {
		A string `json:"a" jsonschema:"enum=x,enum=y"`
		N int    `json:"n,omitempty" jsonschema:"maximum=9"`
	}
	var wg sync.WaitGroup
	errs := make(chan error, 128)
	report := func(err error) {
		if err != nil {
			errs <- err
		}
	}
	for i := range 16 {
		wg.Go(func() {
			// Cold caches race here: every goroutine asks for the same types.
			f, err := FormFor(reflect.TypeFor[local]())
			if err != nil {
				report(err)
				return
			}
			_, err = ForType[contact]()
			report(err)
			for j := range 40 {
				var dst local
				report(f.Decode(jsontext.Value(fmt.Sprintf(`{"a":"x","n":%d}`, (i+j)%10)), &dst, true))
				if err := f.Decode(jsontext.Value(`{"a":"z"}`), &dst, false); err == nil {
					report(fmt.Errorf("enum violation accepted"))
				}
				_ = f.Schema()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
