package sse_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/internal/sse"
)

// TestEvents: the fields of each event up to its blank line, whatever the
// line ends; a block of comments alone is an event too; a data field's one leading
// space dropped, its lines joined with "\n"; an ID alone is an event (an
// MCP priming event); a last event without its blank line is left out.
func TestEvents(t *testing.T) {
	body := "id: 1-0\ndata: \n\n" + // priming: an ID and empty data
		": keep-alive\n\n" +
		"event: message\r\nid: 1-1\r\ndata: {\"a\":1}\r\n\r\n" +
		"data:first\rdata:  second\r\rretry: 3000\n\n" +
		"id: 1-2\n\n" +
		"data: cut"
	rd := sse.NewReader(strings.NewReader(body))
	var got []sse.Event
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		got = append(got, ev)
	}
	assert.Equal(t, []sse.Event{
		{ID: "1-0", HasID: true, HasData: true},
		{Comments: []string{" keep-alive"}},
		{ID: "1-1", HasID: true, Name: "message", Data: []byte(`{"a":1}`), HasData: true},
		{Data: []byte("first\n second"), HasData: true},
		{Retry: "3000"},
		{ID: "1-2", HasID: true},
	}, got)
	assert.Equal(t, got, sse.Parse([]byte(body)), "Parse reads the same")
}

// TestReadErrors: a read error is returned as it is, not as the end.
func TestReadErrors(t *testing.T) {
	boom := errors.New("boom")
	_, err := sse.All(io.MultiReader(strings.NewReader("data: x\n\n"), iotest.ErrReader(boom)))
	assert.ErrorIs(t, err, boom)
	evs, err := sse.All(iotest.OneByteReader(strings.NewReader("data: a\r\n\r\ndata: b\r\r")))
	require.NoError(t, err)
	assert.Len(t, evs, 2, "a CRLF split across reads is one line end")
}
