package transport

import (
	"context"
	"errors"
	"net"
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
	// stream answers 200 with an event stream and calls feed to write it.
	// feed may run after stream returns (fasthttp writes the body once the
	// handler is done), so nothing may follow a call to stream. gone, when
	// not nil, is called from another goroutine if the client hangs up
	// while feed runs, where the server can tell (net/http ends the
	// request's context instead).
	stream(feed func(w *eventWriter), gone func())
	// canHijack reports whether hijack can hand the connection over (not
	// on HTTP/2).
	canHijack() bool
	// hijack hands the connection over for a long-lived event stream and
	// calls take with it once it is ours; the HTTP server then forgets it.
	// take may run after hijack returns; nothing may follow a call to
	// hijack. The head of the response is take's to write.
	hijack(take func(net.Conn))
}

// errBodyTooLarge reports a request body over the limit (413).
var errBodyTooLarge = errors.New("transport: request body too large")
