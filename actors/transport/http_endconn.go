package transport

import (
	"bytes"
	"io"
	"net"
	"time"
)

// chunkedEnd is how a chunked body without trailers ends: the last data
// chunk's CRLF, the zero-size chunk, and the empty trailer.
const chunkedEnd = "\r\n" + bodyEnd

// Bounds on what an endConn holds back: past maxHeld it writes all but the
// last heldTail bytes, which still go out with the end of the body.
const (
	maxHeld  = 64 << 10
	heldTail = 64
)

// endConn is a connection FastServer accepts. It can hold back the last
// event of an SSE response until the end of the chunked body follows, and
// write both at once. fasthttp flushes each chunk, then the zero-size
// chunk, then the trailer: three writes, and a client that stops reading
// at the response it waited for (Go's, for one) closes the body before
// the end arrives, so it cannot reuse the connection and opens a new one
// for its next request. Sent together, the end is read with the event and
// the connection is kept.
//
// Only one goroutine writes a connection at a time (fasthttp's, or the
// one that took it over), so endConn needs no lock.
//
// It can also drop the head of a response (discardHead): the one the HTTP
// server writes for a request whose event stream a directStream has
// already written in full.
//
// And it can hand its socket over (detach), which is how a GET stream is
// taken from fasthttp: cheaper than fasthttp's Hijack, which starts a
// goroutine and leaves the connection's read buffer to the collector.
type endConn struct {
	net.Conn
	holding  bool
	held     []byte
	discard  int  // > 0: dropping a head; how much of its CRLFCRLF end is seen, plus one
	detached bool // the socket belongs to someone else now
}

// endListener wraps the connections a listener accepts in endConns.
type endListener struct{ net.Listener }

func (l endListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &endConn{Conn: c}, nil
}

// holdToEnd holds what is written next until the end of the chunked body
// has been written too.
func (c *endConn) holdToEnd() { c.holding = true }

// discardHead drops what is written next up to the end of a response head
// (an empty line).
func (c *endConn) discardHead() { c.discard = 1 }

// detach hands the socket over: from now on fasthttp's writes are
// dropped, its reads see the end of the stream, and its Close and deadlines
// leave the socket alone. Call it from the handler (fasthttp's goroutine),
// and have the response close the connection, so that fasthttp lets go of
// it (and returns its buffers to their pools) when the handler returns.
func (c *endConn) detach() net.Conn {
	c.detached = true
	_ = c.Conn.SetDeadline(time.Time{}) // fasthttp's read deadline is not the stream's
	return c.Conn
}

func (c *endConn) Read(p []byte) (int, error) {
	if c.detached {
		return 0, io.EOF
	}
	return c.Conn.Read(p)
}

func (c *endConn) SetDeadline(t time.Time) error {
	if c.detached {
		return nil
	}
	return c.Conn.SetDeadline(t)
}

func (c *endConn) SetReadDeadline(t time.Time) error {
	if c.detached {
		return nil
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *endConn) SetWriteDeadline(t time.Time) error {
	if c.detached {
		return nil
	}
	return c.Conn.SetWriteDeadline(t)
}

func (c *endConn) Write(p []byte) (int, error) {
	if c.detached {
		return len(p), nil
	}
	if c.discard > 0 {
		n := len(p)
		for i, b := range p {
			switch {
			case b == "\r\n\r\n"[c.discard-1]:
				c.discard++
			case b == '\r':
				c.discard = 2
			default:
				c.discard = 1
			}
			if c.discard == 5 {
				c.discard = 0
				if rest := p[i+1:]; len(rest) > 0 {
					if _, err := c.Write(rest); err != nil {
						return 0, err
					}
				}
				return n, nil
			}
		}
		return n, nil
	}
	if !c.holding {
		return c.Conn.Write(p)
	}
	from := max(0, len(c.held)-len(chunkedEnd))
	c.held = append(c.held, p...)
	if c.ended(from) {
		c.holding = false
		err := c.writeHeld(len(c.held))
		if err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if len(c.held) > maxHeld {
		if err := c.writeHeld(len(c.held) - heldTail); err != nil {
			c.holding = false
			return 0, err
		}
	}
	return len(p), nil
}

// ended reports whether the held bytes, searched from from, hold the end
// of the body. They start at a chunk boundary, and an SSE chunk never holds
// a CR, so the end is the zero-size chunk at the start or after a chunk's
// CRLF.
func (c *endConn) ended(from int) bool {
	return bytes.HasPrefix(c.held, bodyEndBytes) || bytes.Contains(c.held[from:], []byte(chunkedEnd))
}

// writeHeld writes the first n held bytes and keeps the rest.
func (c *endConn) writeHeld(n int) error {
	_, err := c.Conn.Write(c.held[:n])
	rest := copy(c.held, c.held[n:])
	c.held = c.held[:rest]
	if rest == 0 && cap(c.held) > 4<<10 {
		c.held = nil // a large event: do not keep its buffer per connection
	}
	return err
}

// Close writes what is held (a body that ended without the chunked end:
// none does on fasthttp, but nothing is dropped) and closes.
func (c *endConn) Close() error {
	if c.detached {
		return nil
	}
	if len(c.held) > 0 {
		_, _ = c.Conn.Write(c.held)
	}
	c.holding, c.held = false, nil
	return c.Conn.Close()
}

// socketOf returns the connection beneath an endConn, which the close
// watcher and peerGone reach the socket through.
func socketOf(conn net.Conn) net.Conn {
	if c, ok := conn.(*endConn); ok {
		return c.Conn
	}
	return conn
}
