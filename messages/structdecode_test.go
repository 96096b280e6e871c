package messages_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

type plainArgs struct {
	Text    string  `json:"text"`
	Count   int     `json:"count,omitempty"`
	Small   int8    `json:"small"`
	Big     uint64  `json:"big"`
	Ratio   float64 `json:"ratio"`
	Narrow  float32 `json:"narrow"`
	On      bool    `json:"on"`
	NoTag   string
	Skipped string `json:"-"`
	Dash    string `json:"-,"`
	hidden  string //nolint:unused // unexported: encoding/json ignores it
}

func TestStructDecoderDeclinesWhatItDoesNotHandle(t *testing.T) {
	type embedded struct{ plainArgs }
	type quoted struct {
		N int `json:"n,string"`
	}
	type nested struct{ In plainArgs }
	type slice struct{ S []string }
	type number struct{ N json.Number }
	for _, typ := range []reflect.Type{
		reflect.TypeFor[embedded](), reflect.TypeFor[quoted](), reflect.TypeFor[nested](),
		reflect.TypeFor[slice](), reflect.TypeFor[number](), reflect.TypeFor[string](),
	} {
		assert.Nil(t, messages.NewStructDecoder(typ), "%v", typ)
	}
	assert.NotNil(t, messages.NewStructDecoder(reflect.TypeFor[plainArgs]()))
}

func FuzzStructDecoderMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"text":"hi"}`, `{"text":"a\u00e9\n","count":3,"small":-128,"big":18446744073709551615,"ratio":1.5e3,"narrow":3.4e39,"on":true}`,
		`{"text":null,"count":null}`, `{"TEXT":"x"}`, `{"te\u0078t":"x"}`, `{"count":1.0}`, `{"count":"1"}`, `{"small":200}`,
		`{"big":-1}`, `{"on":1}`, `{"NoTag":"n","notag":"m"}`, `{"-":"dash","Skipped":"s"}`, `{"hidden":"h"}`, `{"text":"a","text":"b"}`,
		`[]`, `null`, `{"extra":{"deep":[1,2,{"x":null}]}}`, `{"ratio":-0.0,"narrow":1e-50}`, `{"text":"\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	dec := messages.NewStructDecoder(reflect.TypeFor[plainArgs]())
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want plainArgs
		werr := json.Unmarshal(raw, &want)
		var got plainArgs
		if !dec.Decode(raw, &got) {
			return // the caller falls back to encoding/json
		}
		require.NoError(t, werr, "decoded what encoding/json refuses: %s", raw)
		assert.Equal(t, want, got, "%s", raw)
	})
}
