package schema

import (
	"bytes"
	jsonv1 "encoding/json"
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refSchema is the reference tool's 2020-12 schema with $defs and $ref.
const refSchema = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"properties": {
		"name": {"type": "string"},
		"address": {"$ref": "#/$defs/address"}
	},
	"$defs": {
		"address": {
			"type": "object",
			"properties": {"street": {"type": "string"}, "city": {"type": "string"}}
		}
	},
	"additionalProperties": false
}`

func TestValidateRefSchema(t *testing.T) {
	v, err := Compile(jsontext.Value(refSchema))
	require.NoError(t, err)

	tests := []struct {
		name     string
		instance string
		issues   []Issue // nil: valid
	}{
		{"empty object", `{}`, nil},
		{"full", `{"name":"Ada","address":{"street":"1 Main St","city":"London"}}`, nil},
		{"extra keys inside $ref target are allowed", `{"address":{"zip":"N1"}}`, nil},
		{"unknown top-level key", `{"name":"Ada","age":36}`, []Issue{{"", `unexpected property "age"`}}},
		{"two unknown keys", `{"b":1,"a":2}`, []Issue{{"", `unexpected properties "a", "b"`}}},
		{"wrong type through $ref", `{"address":{"city":7}}`, []Issue{{"/address/city", "got number, want string"}}},
		{"address not an object", `{"address":"London"}`, []Issue{{"/address", "got string, want object"}}},
		{"not an object", `[]`, []Issue{{"", "got array, want object"}}},
		{"several", `{"name":1,"address":{"street":false},"x":null}`, []Issue{
			{"", `unexpected property "x"`},
			{"/address/street", "got boolean, want string"},
			{"/name", "got number, want string"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.Validate(jsontext.Value(tt.instance))
			if tt.issues == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalid)
			var verr *ValidationError
			require.ErrorAs(t, err, &verr)
			assert.Equal(t, tt.issues, verr.Issues)
		})
	}
}

func TestCompileDialects(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		valid  string
		bad    string
	}{
		{
			name:   "2020-12 by default: prefixItems",
			schema: `{"type":"array","prefixItems":[{"type":"integer"}],"items":false}`,
			valid:  `[1]`,
			bad:    `[1,2]`,
		},
		{
			name:   "draft-07 when $schema says so: items as array",
			schema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"integer"}],"additionalItems":false}`,
			valid:  `[1]`,
			bad:    `[1,2]`,
		},
		{
			name:   "draft-07 definitions and $ref",
			schema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$ref":"#/definitions/n"}},"definitions":{"n":{"type":"integer"}}}`,
			valid:  `{"a":1}`,
			bad:    `{"a":"1"}`,
		},
		{
			name:   "$id does not trigger loading",
			schema: `{"$id":"https://example.com/tool.json","type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"integer"}}}`,
			valid:  `{"a":1}`,
			bad:    `{"a":true}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Compile(jsontext.Value(tt.schema))
			require.NoError(t, err)
			assert.NoError(t, v.Validate(jsontext.Value(tt.valid)))
			assert.ErrorIs(t, v.Validate(jsontext.Value(tt.bad)), ErrInvalid)
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		remote bool
	}{
		{"not JSON", `{"type":`, false},
		{"empty", ``, false},
		{"trailing data", `{} {}`, false},
		{"breaks the metaschema", `{"type":5}`, false},
		{"missing local definition", `{"$ref":"#/$defs/nope"}`, false},
		{"remote $ref", `{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`, true},
		{"relative $ref", `{"$ref":"other.json"}`, true},
		{"unknown metaschema", `{"$schema":"https://example.com/meta","type":"object"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Compile(jsontext.Value(tt.schema))
			require.ErrorIs(t, err, ErrBadSchema)
			assert.Nil(t, v)
			assert.Equal(t, tt.remote, errorsIs(err, ErrRemoteRef), err.Error())
		})
	}
}

func TestValidateInvalidJSON(t *testing.T) {
	v, err := Compile(jsontext.Value(`{"type":"object"}`))
	require.NoError(t, err)
	for _, instance := range []string{``, `{`, `{"a":1}x`, `nul`} {
		t.Run(instance, func(t *testing.T) {
			err := v.Validate(jsontext.Value(instance))
			require.ErrorIs(t, err, ErrInvalid)
			assert.Contains(t, err.Error(), `validation failed: at "": invalid JSON`)
		})
	}
}

func TestValidateValue(t *testing.T) {
	v, err := Compile(jsontext.Value(`{
		"type":"object",
		"properties":{"text":{"type":"string"},"n":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},
		"required":["text"]
	}`))
	require.NoError(t, err)

	useNumber := func(s string) any {
		d := jsonv1.NewDecoder(bytes.NewReader([]byte(s)))
		d.UseNumber()
		var out any
		require.NoError(t, d.Decode(&out))
		return out
	}
	plain := func(s string) any {
		var out any
		require.NoError(t, json.Unmarshal([]byte(s), &out))
		return out
	}
	tests := []struct {
		name  string
		value any
		issue *Issue
	}{
		{"UseNumber", useNumber(`{"text":"a","n":3}`), nil},
		{"UseNumber fraction", useNumber(`{"text":"a","n":3.5}`), &Issue{"/n", "got number, want integer"}},
		{"float64", plain(`{"text":"a","n":3}`), nil},
		{"float64 fraction", plain(`{"text":"a","n":3.5}`), &Issue{"/n", "got number, want integer"}},
		{"Go ints", map[string]any{"text": "a", "n": 3}, nil},
		{"typed map", map[string]string{"text": "a"}, nil},
		{"typed slice inside", map[string]any{"text": "a", "tags": []string{"x"}}, nil},
		{"struct", struct {
			Text string `json:"text"`
		}{"a"}, nil},
		{"struct missing field", struct{}{}, &Issue{"", `missing property "text"`}},
		{"nil slice is marshaled as []", struct {
			Text string   `json:"text"`
			Tags []string `json:"tags"`
		}{Text: "a"}, nil},
		{"nil", nil, &Issue{"", "got null, want object"}},
		{"unmarshalable", map[string]any{"text": make(chan int)}, &Issue{"", "not a JSON value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.ValidateValue(tt.value)
			if tt.issue == nil {
				require.NoError(t, err)
				return
			}
			var verr *ValidationError
			require.ErrorAs(t, err, &verr)
			assert.Equal(t, []Issue{*tt.issue}, verr.Issues)
		})
	}
}

func TestValidatorConcurrent(t *testing.T) {
	v, err := Compile(jsontext.Value(refSchema))
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 32 {
		wg.Go(func() {
			good := fmt.Sprintf(`{"name":"n%d","address":{"city":"c"}}`, i)
			bad := fmt.Sprintf(`{"name":%d}`, i)
			for range 50 {
				if err := v.Validate(jsontext.Value(good)); err != nil {
					errs <- err
					return
				}
				if err := v.Validate(jsontext.Value(bad)); err == nil {
					errs <- fmt.Errorf("bad instance %s passed", bad)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func BenchmarkValidateSmall(b *testing.B) {
	v, err := Compile(jsontext.Value(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`))
	require.NoError(b, err)
	instance := jsontext.Value(`{"text":"hello, world"}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(instance); err != nil {
			b.Fatal(err)
		}
	}
}
