package schema

import (
	"encoding/json/jsontext"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var fastSchemas = []string{
	`{"type":"object","properties":{"text":{"type":"string","description":"d"}},"required":["text"]}`,
	`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"number"},"c":{"type":"boolean"},"d":{}},"required":["a","b"],"additionalProperties":false}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"o":{"type":"object"},"l":{"type":"array"},"n":{"type":"null"}}}`,
	`{"type":"object","properties":{},"required":["x","y"]}`,
}

func TestFastObjectShapes(t *testing.T) {
	for _, s := range fastSchemas {
		assert.NotNil(t, newFastObject(jsontext.Value(s)), s)
	}
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"string","minLength":1}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{}}}`,
		`{"type":"object","properties":{"a":{"type":["string","null"]}}}`,
		`{"type":"object","minProperties":1}`,
		`{"properties":{"a":{"type":"string"}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
	} {
		assert.Nil(t, newFastObject(jsontext.Value(s)), s)
	}
}

// FuzzFastObjectAgreesWithLibrary checks that whatever the fast check calls
// valid, the full validator calls valid too.
func FuzzFastObjectAgreesWithLibrary(f *testing.F) {
	for _, seed := range []string{
		`{"text":"hi"}`, `{"text":5}`, `{}`, `{"text":"a","text":"b"}`, `{"a":1,"b":2.5,"c":true}`,
		`{"a":1.0,"b":1e3}`, `{"a":1.5,"b":1}`, `{"a":1,"b":2,"z":0}`, `{"a":1,"a":2}`, `{"o":{"x":[1,{"y":"\""}]},"l":[],"n":null}`,
		`[1]`, `"s"`, `{"text":"\u00e9\n"}`, `{"te\u0078t":"hi"}`, `{"a":-0,"b":-0.0e-0}`, ` { "text" : "x" } `,
	} {
		for i := range fastSchemas {
			f.Add(i, []byte(seed))
		}
	}
	validators := make([]*Validator, len(fastSchemas))
	for i, s := range fastSchemas {
		v, err := Compile(jsontext.Value(s))
		require.NoError(f, err)
		require.NotNil(f, v.fast)
		validators[i] = v
	}
	f.Fuzz(func(t *testing.T, i int, instance []byte) {
		// What the library's decoder accepts: v1 rules, names may repeat.
		if i < 0 || !jsontext.Value(instance).IsValid(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) {
			return
		}
		v := validators[i%len(validators)]
		if v.fast.valid(instance) {
			v2 := &Validator{schema: v.schema}
			assert.NoError(t, v2.Validate(instance), "the fast check accepted what the library rejects: %s", instance)
		}
	})
}

func BenchmarkValidateFast(b *testing.B) { benchmarkValidate(b, true) }

// BenchmarkValidateLibrary is BenchmarkValidateFast without the fast check:
// what the check saves on each tools/call of the commonest tool shape.
func BenchmarkValidateLibrary(b *testing.B) { benchmarkValidate(b, false) }

func benchmarkValidate(b *testing.B, fast bool) {
	v, err := Compile(jsontext.Value(fastSchemas[0]))
	require.NoError(b, err)
	if !fast {
		v.fast = nil
	}
	in := jsontext.Value(`{"text":"hello from the bench client"}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(in); err != nil {
			b.Fatal(err)
		}
	}
}
