package transport

import (
	"context"
	"errors"
	"net"

	"github.com/mcp-actors/mcp-actors/messages"
)

// exchange is one HTTP request and its answer, whichever HTTP server
// carries it (net/http for HTTPHandler, fasthttp for FastServer). The
// endpoint logic in http_*.go is written against it once.
type exchange interface {
	method() string
	header(name string) string
	headerValues(name string) []string
	host() string
	// body reads the request body, at most max bytes (errBodyTooLarge).
	body(max int64) ([]byte, error)
	// context ends when the request is over: the client went away
	// (net/http) or the server is shutting down (fasthttp).
	context() context.Context

	setHeader(name, value string)
	// reply answers with status and, when body is not nil, a JSON body.
	reply(status int, body []byte)
	// stream answers 200 with an event stream and writes what src yields
	// until it says done or an end frame (a request's response) goes out.
	// The stream may be written after stream returns (fasthttp writes the
	// body once the handler is done), so nothing may follow a call to
	// stream.
	stream(src *eventSource)
	// streamAside answers 200 with an event stream written by a new
	// goroutine, while the handler goroutine is busy running a request's
	// handler (see messages.Runner). It returns at once; the handler
	// goroutine calls the returned finish once the handler has returned,
	// which waits for the stream to end and completes the exchange.
	streamAside(src *eventSource) (finish func())
	// canStreamDirect reports whether newDirect can write a POST's event
	// stream from whichever goroutine delivers its frames, while the
	// handler goroutine runs the request's handler; finishDirect then
	// completes the exchange once that stream has ended (d is never nil).
	canStreamDirect() bool
	directStarter
	finishDirect(d *directStream)
	// suspender is what suspends a handler running inline on the serving
	// goroutine while it waits for its client, or nil (messages.Suspender).
	suspender() messages.Suspender
	// canHijack reports whether hijack can hand the connection over (not
	// on HTTP/2).
	canHijack() bool
	// hijack hands the connection over for a long-lived event stream and
	// calls take with it once it is ours; the HTTP server then forgets it.
	// take may run after hijack returns; nothing may follow a call to
	// hijack. The head of the response is take's to write. back is nil
	// when the body must end by closing the connection; otherwise the
	// body is chunked, and back hands the connection to the HTTP server
	// again once it has ended.
	hijack(take func(conn net.Conn, back func(net.Conn)))
}

// eventSource yields an event stream's content, pulled by the HTTP server.
type eventSource struct {
	// next blocks until there is something to write: frames, or a ping
	// (a keep-alive comment); done says nothing follows them.
	next func() (frames []messages.Frame, ping, done bool)
	// failed is called, once, if the stream ends before done because the
	// client went away or a write failed.
	failed func()
	// gone, when not nil, is called from another goroutine if the client
	// hangs up while the stream is written, where the server can tell:
	// it should make next return done at once.
	gone func()
}

// errBodyTooLarge reports a request body over the limit (413).
var errBodyTooLarge = errors.New("transport: request body too large")
