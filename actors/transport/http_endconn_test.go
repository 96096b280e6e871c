package transport

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writesConn records each write as it reaches the connection.
type writesConn struct {
	net.Conn
	writes []string
	closed bool
}

func (c *writesConn) Write(p []byte) (int, error) {
	c.writes = append(c.writes, string(p))
	return len(p), nil
}
func (c *writesConn) Close() error { c.closed = true; return nil }

// TestEndConnWritesTheLastEventWithTheEnd replays the writes fasthttp makes
// for a chunked SSE body and checks what reaches the socket.
func TestEndConnWritesTheLastEventWithTheEnd(t *testing.T) {
	event := "id: 1-2\nevent: message\ndata: {}\n\n"
	chunk := func(s string) string { return strconv.FormatInt(int64(len(s)), 16) + "\r\n" + s + "\r\n" }

	for _, tc := range []struct {
		name   string
		writes []string // after holdToEnd
		want   []string
	}{
		{"last event, zero chunk, trailer", []string{chunk(event), "0\r\n", "\r\n"}, []string{chunk(event) + "0\r\n\r\n"}},
		{"nothing after the hold but the end", []string{"0\r\n", "\r\n"}, []string{"0\r\n\r\n"}},
		{"the end and the next response together", []string{chunk(event), "0\r\n", "\r\nHTTP/1.1 202 Accepted\r\n\r\n"},
			[]string{chunk(event) + "0\r\n\r\nHTTP/1.1 202 Accepted\r\n\r\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := &writesConn{}
			c := &endConn{Conn: raw}
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\n\r\n" + chunk(event)))
			c.holdToEnd()
			for _, w := range tc.writes {
				n, err := c.Write([]byte(w))
				require.NoError(t, err)
				require.Equal(t, len(w), n)
			}
			assert.Equal(t, append([]string{"HTTP/1.1 200 OK\r\n\r\n" + chunk(event)}, tc.want...), raw.writes)
			_, _ = c.Write([]byte("next"))
			assert.Equal(t, "next", raw.writes[len(raw.writes)-1], "not held after the end")
		})
	}

	t.Run("a large event goes out as it comes, all but its tail", func(t *testing.T) {
		raw := &writesConn{}
		c := &endConn{Conn: raw}
		c.holdToEnd()
		big := chunk(strings.Repeat("x", maxHeld) + "\n\n")
		_, _ = c.Write([]byte(big))
		require.Len(t, raw.writes, 1)
		assert.Len(t, raw.writes[0], len(big)-heldTail)
		_, _ = c.Write([]byte("0\r\n"))
		_, _ = c.Write([]byte("\r\n"))
		require.Len(t, raw.writes, 2)
		assert.Equal(t, big[len(big)-heldTail:]+"0\r\n\r\n", raw.writes[1])
	})

	t.Run("close writes what is held", func(t *testing.T) {
		raw := &writesConn{}
		c := &endConn{Conn: raw}
		c.holdToEnd()
		_, _ = c.Write([]byte(chunk(event)))
		assert.Empty(t, raw.writes)
		require.NoError(t, c.Close())
		assert.Equal(t, []string{chunk(event)}, raw.writes)
		assert.True(t, raw.closed)
	})
}
