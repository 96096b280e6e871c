package harness

import (
	"encoding/json/jsontext"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
)

func TestParseTranscript(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []step
	}{
		{name: "empty", text: "", want: nil},
		{name: "comments and blank lines only", text: "# hello\n\n   \n# bye\n", want: nil},
		{
			name: "sends and groups",
			text: "> {\"a\":1}\n< {\"b\":1}\n< {\"b\":2}\n> {\"a\":2}\n< {\"b\":3}\n",
			want: []step{
				{send: `{"a":1}`, line: 1},
				{expect: []string{`{"b":1}`, `{"b":2}`}, line: 2},
				{send: `{"a":2}`, line: 4},
				{expect: []string{`{"b":3}`}, line: 5},
			},
		},
		{
			name: "a comment or a blank line ends a group",
			text: "> {}\n< {\"b\":1}\n# then\n< {\"b\":2}\n\n< {\"b\":3}\n< {\"b\":4}",
			want: []step{
				{send: `{}`, line: 1},
				{expect: []string{`{"b":1}`}, line: 2},
				{expect: []string{`{"b":2}`}, line: 4},
				{expect: []string{`{"b":3}`, `{"b":4}`}, line: 6},
			},
		},
		{
			name: "consecutive sends are separate steps",
			text: "> {\"a\":1}\n> {\"a\":2}\n",
			want: []step{{send: `{"a":1}`, line: 1}, {send: `{"a":2}`, line: 2}},
		},
		{
			name: "surrounding space is trimmed",
			text: "  >   {\"a\":1}  \n\t< {\"b\":1}\r\n",
			want: []step{{send: `{"a":1}`, line: 1}, {expect: []string{`{"b":1}`}, line: 2}},
		},
		{
			name: "an action ends a group and is a step of its own",
			text: "> {}\n< {\"b\":1}\n! complete $ID 3\n< {\"b\":2}\n",
			want: []step{
				{send: `{}`, line: 1},
				{expect: []string{`{"b":1}`}, line: 2},
				{action: []string{"complete", "$ID", "3"}, line: 3},
				{expect: []string{`{"b":2}`}, line: 4},
			},
		},
		{
			name: "a group may come first",
			text: "< {\"b\":1}\n",
			want: []step{{expect: []string{`{"b":1}`}, line: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseTranscript(tt.text)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseTranscriptErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{name: "no marker", text: "> {}\n{\"a\":1}\n", want: "transcript line 2:"},
		{name: "no space after >", text: "# x\n\n>{}\n", want: "transcript line 3:"},
		{name: "no space after <", text: "<{}", want: "transcript line 1:"},
		{name: "a bare marker", text: "> {}\n<\n", want: "transcript line 2:"},
		{name: "another marker", text: "// comment\n", want: "transcript line 1:"},
		{name: "an action without a name", text: "> {}\n!  \n", want: "transcript line 2:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseTranscript(tt.text)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// received builds what a client would have received from raw JSON lines.
func received(lines ...string) []*Received {
	out := make([]*Received, len(lines))
	for i, l := range lines {
		out[i] = &Received{Raw: []byte(l), Seq: i}
	}
	return out
}

func TestMatchGroup(t *testing.T) {
	tests := []struct {
		name     string
		expect   []string
		actual   []string
		wantOK   bool
		wantOut  []string // by expected line, then the rest as they arrived
		wantVars map[string]any
	}{
		{
			name:    "in order",
			expect:  []string{`{"id":1}`, `{"id":2}`},
			actual:  []string{`{"id":1}`, `{"id":2}`},
			wantOK:  true,
			wantOut: []string{`{"id":1}`, `{"id":2}`},
		},
		{
			name:    "in any order",
			expect:  []string{`{"id":2}`, `{"method":"n"}`},
			actual:  []string{`{"method":"n"}`, `{"id":2}`},
			wantOK:  true,
			wantOut: []string{`{"id":2}`, `{"method":"n"}`},
		},
		{
			name:     "placeholders bind and stay in the output",
			expect:   []string{`{"id":2,"r":"$ANY"}`, `{"id":"$S","method":"m"}`},
			actual:   []string{`{"id":"srv-1","method":"m"}`, `{"id":2,"r":[1]}`},
			wantOK:   true,
			wantOut:  []string{`{"id":2,"r":"$ANY"}`, `{"id":"$S","method":"m"}`},
			wantVars: map[string]any{"S": "srv-1"},
		},
		{
			name:    "one same-looking line each",
			expect:  []string{`{"p":"$ANY"}`, `{"p":"$ANY"}`},
			actual:  []string{`{"p":1}`, `{"p":2}`},
			wantOK:  true,
			wantOut: []string{`{"p":"$ANY"}`, `{"p":"$ANY"}`},
		},
		{
			name:    "a loose line does not take what a strict one needs",
			expect:  []string{`{"p":"$ANY"}`, `{"p":1}`},
			actual:  []string{`{"p":1}`, `{"p":2}`},
			wantOK:  true,
			wantOut: []string{`{"p":"$ANY"}`, `{"p":1}`},
		},
		{
			name:     "bindings steer the choice",
			expect:   []string{`{"id":"$A","k":"$K"}`, `{"id":"$A","k":"y"}`, `{"id":"$B","k":"z"}`},
			actual:   []string{`{"id":2,"k":"z"}`, `{"id":1,"k":"x"}`, `{"id":1,"k":"y"}`},
			wantOK:   true,
			wantOut:  []string{`{"id":"$A","k":"$K"}`, `{"id":"$A","k":"y"}`, `{"id":"$B","k":"z"}`},
			wantVars: map[string]any{"A": jsontext.Value("1"), "K": "x", "B": jsontext.Value("2")},
		},
		{
			name:    "a wrong line is rewritten from the message left over",
			expect:  []string{`{"id":2,"result":"old"}`, `{"method":"n"}`},
			actual:  []string{`{"method":"n"}`, `{"id":2,"result":"new"}`},
			wantOK:  false,
			wantOut: []string{`{"id":2,"result":"new"}`, `{"method":"n"}`},
		},
		{
			name:     "a wrong line keeps its placeholders and binds them loosely",
			expect:   []string{`{"id":"$S","method":"old"}`},
			actual:   []string{`{"id":5,"method":"new"}`},
			wantOK:   false,
			wantOut:  []string{`{"id":"$S","method":"new"}`},
			wantVars: map[string]any{"S": jsontext.Value("5")},
		},
		{
			name:    "an expected line that is not JSON",
			expect:  []string{`{nope`},
			actual:  []string{`{"a":"$x"}`},
			wantOK:  false,
			wantOut: []string{`{"a":"$$x"}`},
		},
		{
			name:    "a message that is not JSON is kept raw",
			expect:  []string{`{}`},
			actual:  []string{`not json`},
			wantOK:  false,
			wantOut: []string{`not json`},
		},
		{
			name:     "fewer messages than lines",
			expect:   []string{`{"a":1}`, `{"b":"$B"}`},
			actual:   []string{`{"b":2}`},
			wantOK:   false,
			wantOut:  []string{`{"b":"$B"}`},
			wantVars: map[string]any{"B": jsontext.Value("2")},
		},
		{
			name:    "a message no line stands for goes last",
			expect:  []string{`{"b":2}`, `{"wrong":1}`},
			actual:  []string{`not json`, `{"b":2}`, `{"c":3}`},
			wantOK:  false,
			wantOut: []string{`{"b":2}`, `{"c":3}`, `not json`},
		},
		{
			name:    "more messages than lines",
			expect:  []string{`{"a":1}`},
			actual:  []string{`{"a":1}`, `{"c":3}`},
			wantOK:  true,
			wantOut: []string{`{"a":1}`, `{"c":3}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]any{}
			out, ok := matchGroup(tt.expect, received(tt.actual...), vars)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.wantOut, out)
			want := tt.wantVars
			if want == nil {
				want = map[string]any{}
			}
			assert.Equal(t, want, vars)
		})
	}
}

func TestRewrite(t *testing.T) {
	text := "# head\n" + // 1
		"> {\"id\":1}\n" + // 2
		"< {\"old\":1}\n" + // 3: played, replaced by two lines
		"# then\n" + // 4
		"< {\"old\":2}\n" + // 5: played, replaced
		"< {\"old\":3}\n" + // 6
		"> {\"id\":2}\n" + // 7
		"< {\"old\":4}\n" + // 8: never played, kept
		"  < {\"old\":5}\n" + // 9
		"\n" // 10
	got := map[int][]string{
		3: {`{"new":1}`, `{"new":2}`},
		5: {`{"new":3}`},
	}
	want := "# head\n" +
		"> {\"id\":1}\n" +
		"< {\"new\":1}\n" +
		"< {\"new\":2}\n" +
		"# then\n" +
		"< {\"new\":3}\n" +
		"> {\"id\":2}\n" +
		"< {\"old\":4}\n" +
		"  < {\"old\":5}\n" +
		"\n"
	assert.Equal(t, want, rewrite(text, got))

	t.Run("a group the server sent nothing for is emptied", func(t *testing.T) {
		assert.Equal(t, "> {}\n# end\n", rewrite("> {}\n< {\"a\":1}\n# end\n", map[int][]string{2: {}}))
	})
	t.Run("extras go at the end", func(t *testing.T) {
		assert.Equal(t, "> {}\n< {\"a\":1}\n< {\"x\":1}\n",
			rewrite("> {}\n< {\"a\":1}\n\n\n", map[int][]string{2: {`{"a":1}`}, -1: {`{"x":1}`}}))
	})
	t.Run("rewrite and parse agree on groups", func(t *testing.T) {
		text := "> {}\n< {\"a\":1}\n< {\"a\":2}\n# x\n< {\"a\":3}\n\n< {\"a\":4}\n> {}\n< {\"a\":5}\n"
		steps, err := parseTranscript(text)
		require.NoError(t, err)
		got := map[int][]string{}
		for _, st := range steps {
			if st.expect != nil {
				got[st.line] = st.expect
			}
		}
		assert.Equal(t, text, rewrite(text, got), "rewriting each group with its own lines changes nothing")
	})
}

// TestActions: a test's actions win over the harness's; the harness's
// check their arguments; an unknown action or "node" off a cluster's
// modern conn is an error.
func TestActions(t *testing.T) {
	var got []string
	a := &actor{acts: Actions{"drain": func(_ []*mcpactors.Server, args []string) error {
		got = args
		return nil
	}}}
	require.NoError(t, a.run(nil, []string{"drain", "x"}))
	assert.Equal(t, []string{"x"}, got, "the test's drain")

	a = &actor{}
	assert.ErrorContains(t, a.run(nil, []string{"nope"}), `no action "nope"`)
	assert.ErrorContains(t, a.run(nil, []string{"drain", "2"}), "a node number from 1 to 0")
	assert.ErrorContains(t, a.run(nil, []string{"node", "1"}), "a cluster's modern scenarios")

	c := &modernConn{urls: []string{"a", "b"}}
	a = &actor{servers: make([]*mcpactors.Server, 2)}
	require.NoError(t, a.run(c, []string{"node", "2"}))
	assert.Equal(t, 1, c.node)
	assert.ErrorContains(t, a.run(c, []string{"node", "3"}), "from 1 to 2")
	assert.ErrorContains(t, a.run(c, []string{"node", "2x"}), "from 1 to 2", "a number, whole")
}
