package harness

import (
	"encoding/json/jsontext"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// js decodes a JSON literal the way transcripts are decoded.
func js(t *testing.T, s string) any {
	t.Helper()
	v, err := decodeJSON([]byte(s))
	require.NoError(t, err, "decoding %s", s)
	return v
}

func TestMatchJSON(t *testing.T) {
	tests := []struct {
		name     string
		exp, act string
		vars     map[string]any // bound before the match
		want     bool
		wantVars map[string]any // bound after it (nil: unchanged)
	}{
		{name: "equal objects, any key order", exp: `{"a":1,"b":[true,null]}`, act: `{"b":[true,null],"a":1}`, want: true},
		{name: "numbers compare as written", exp: `{"n":1}`, act: `{"n":1.0}`, want: false},
		{name: "a number is not a string", exp: `{"n":1}`, act: `{"n":"1"}`, want: false},
		{name: "an extra key fails", exp: `{"a":1}`, act: `{"a":1,"b":2}`, want: false},
		{name: "a missing key fails", exp: `{"a":1,"b":2}`, act: `{"a":1}`, want: false},
		{name: "arrays are ordered", exp: `[1,2]`, act: `[2,1]`, want: false},
		{name: "array lengths must agree", exp: `[1]`, act: `[1,1]`, want: false},
		{name: "null is not an empty object", exp: `{}`, act: `null`, want: false},
		{name: "$ANY matches an object", exp: `{"a":"$ANY"}`, act: `{"a":{"deep":[1]}}`, want: true},
		{name: "$ANY matches null", exp: `{"a":"$ANY"}`, act: `{"a":null}`, want: true},
		{name: "$ANY still needs the key", exp: `{"a":"$ANY"}`, act: `{}`, want: false},
		{name: "$ANY binds nothing", exp: `"$ANY"`, act: `3`, want: true, wantVars: map[string]any{}},
		{name: "a name binds at first sight", exp: `{"id":"$S"}`, act: `{"id":7}`, want: true,
			wantVars: map[string]any{"S": jsontext.Value("7")}},
		{name: "a bound name must match again", exp: `{"id":"$S"}`, act: `{"id":8}`,
			vars: map[string]any{"S": jsontext.Value("7")}, want: false},
		{name: "a bound name matches its value", exp: `{"id":"$S"}`, act: `{"id":7}`,
			vars: map[string]any{"S": jsontext.Value("7")}, want: true},
		{name: "a name used twice in one message", exp: `["$X","$X"]`, act: `["a","b"]`, want: false},
		{name: "a name used twice, same value", exp: `["$X","$X"]`, act: `["a","a"]`, want: true,
			wantVars: map[string]any{"X": "a"}},
		{name: "no binding survives a failed match", exp: `{"id":"$S","n":1}`, act: `{"id":7,"n":2}`, want: false},
		{name: "$$ is a literal dollar", exp: `"$$ANY"`, act: `"$ANY"`, want: true},
		{name: "$$ does not match the unescaped text", exp: `"$$ANY"`, act: `"$$ANY"`, want: false},
		{name: "a lone $ is literal", exp: `"$"`, act: `"$"`, want: true},
		{name: "a lone $ needs a $", exp: `"$"`, act: `"x"`, want: false},
		{name: "placeholders nest", exp: `{"a":[{"b":"$B"}]}`, act: `{"a":[{"b":{"c":1}}]}`, want: true,
			wantVars: map[string]any{"B": map[string]any{"c": jsontext.Value("1")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]any{}
			for k, v := range tt.vars {
				vars[k] = v
			}
			got := matchJSON(js(t, tt.exp), js(t, tt.act), vars)
			assert.Equal(t, tt.want, got)
			want := tt.wantVars
			if want == nil {
				want = tt.vars
				if want == nil {
					want = map[string]any{}
				}
			}
			assert.Equal(t, want, vars)
		})
	}
}

func TestSubstitute(t *testing.T) {
	vars := map[string]any{
		"S":   jsontext.Value("7"),
		"Str": "abc",
		"Obj": map[string]any{"k": true},
	}
	tests := []struct {
		name, in, want string
		missing        string
	}{
		{name: "a number stays a number", in: `{"id":"$S"}`, want: `{"id":7}`},
		{name: "a string", in: `{"id":"$Str"}`, want: `{"id":"abc"}`},
		{name: "a whole object", in: `{"v":"$Obj"}`, want: `{"v":{"k":true}}`},
		{name: "inside arrays", in: `[1,["$S"]]`, want: `[1,[7]]`},
		{name: "$$ is unescaped", in: `{"t":"$$S"}`, want: `{"t":"$S"}`},
		{name: "a lone $ is kept", in: `"$"`, want: `"$"`},
		{name: "other values are kept", in: `{"a":[1,"x",null,false]}`, want: `{"a":[1,"x",null,false]}`},
		{name: "an unbound name", in: `{"a":["$Nope"]}`, missing: "Nope"},
		{name: "$ANY cannot be sent", in: `"$ANY"`, missing: "ANY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, missing := substitute(js(t, tt.in), vars)
			assert.Equal(t, tt.missing, missing)
			if tt.missing == "" {
				assert.JSONEq(t, tt.want, compact(got))
			}
		})
	}
}

func TestTemplate(t *testing.T) {
	tests := []struct {
		name, exp, act, want string
	}{
		{name: "placeholders stay", exp: `{"id":"$S","x":"$ANY"}`, act: `{"id":9,"x":{"a":1}}`, want: `{"id":"$S","x":"$ANY"}`},
		{name: "literals come from the actual message", exp: `{"a":1}`, act: `{"a":2}`, want: `{"a":2}`},
		{name: "new keys are added, gone keys dropped", exp: `{"a":"$A","b":1}`, act: `{"a":5,"c":3}`, want: `{"a":"$A","c":3}`},
		{name: "a longer array", exp: `["$X"]`, act: `[1,2,3]`, want: `["$X",2,3]`},
		{name: "no expectation at all", exp: `null`, act: `{"a":[1]}`, want: `{"a":[1]}`},
		{name: "a literal dollar is escaped", exp: `null`, act: `{"t":"$5","u":"$$"}`, want: `{"t":"$$5","u":"$$$"}`},
		{name: "a placeholder against a different shape stays", exp: `{"p":"$P"}`, act: `{"p":[1,2]}`, want: `{"p":"$P"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var exp any
			if tt.exp != "null" {
				exp = js(t, tt.exp)
			}
			got := template(exp, js(t, tt.act))
			assert.JSONEq(t, tt.want, compact(got))
			// What template writes matches what it was made from.
			assert.True(t, matchJSON(got, js(t, tt.act), map[string]any{}), "template output must match its input")
		})
	}
}

func TestBindLoose(t *testing.T) {
	vars := map[string]any{"Old": "kept"}
	bindLoose(js(t, `{"id":"$S","a":["$A","$ANY"],"gone":"$G","o":"$Old","lit":1}`),
		js(t, `{"id":"x1","a":[true],"o":"new","lit":2}`), vars)
	assert.Equal(t, map[string]any{"S": "x1", "A": true, "Old": "kept"}, vars)
}

func TestCompact(t *testing.T) {
	assert.Equal(t, `{"a":"<&>","b":[1,2.50]}`, compact(js(t, `{ "b": [1, 2.50], "a": "<&>" }`)),
		"keys sorted, numbers as written, no HTML escaping")
}

func TestSubstituteLine(t *testing.T) {
	vars := map[string]any{"S": jsontext.Value("7"), "Str": "a\"b", "Obj": map[string]any{"k": true}}
	tests := []struct {
		name, in, want, missing string
	}{
		{name: "nothing to do keeps the bytes", in: `{ "b":1.50, "a" : [ "x" ] }`, want: `{ "b":1.50, "a" : [ "x" ] }`},
		{name: "a placeholder in place", in: `{"jsonrpc":"2.0", "id":"$S","result":{"z":1,"a":2}}`, want: `{"jsonrpc":"2.0", "id":7,"result":{"z":1,"a":2}}`},
		{name: "a string with a quote", in: `["$Str"]`, want: `["a\"b"]`},
		{name: "an object", in: `{"v":"$Obj"}`, want: `{"v":{"k":true}}`},
		{name: "an escape", in: `{"t":"$$S","u":"x$"}`, want: `{"t":"$S","u":"x$"}`},
		{name: "keys are left alone", in: `{"$S":"$S", "$$":0}`, want: `{"$S":7, "$$":0}`},
		{name: "escaped quotes inside strings", in: `{"a":"say \"$S\"","b":"$S"}`, want: `{"a":"say \"$S\"","b":7}`},
		{name: "a lone dollar", in: `["$"]`, want: `["$"]`},
		{name: "unbound", in: `{"id":"$Nope"}`, missing: "Nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, missing := substituteLine(tt.in, vars)
			assert.Equal(t, tt.missing, missing)
			if tt.missing == "" {
				assert.Equal(t, tt.want, got)
			}
		})
	}
}
