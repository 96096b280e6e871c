package transport

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"time"
)

// RequestHeaders gives an Authenticator the request's headers.
type RequestHeaders interface {
	Header(name string) string
}

// Authenticator identifies the principal behind a request. An error makes
// the request fail with 401 before anything else happens; its text reaches
// the client only if it has a Public() string method.
type Authenticator interface {
	Authenticate(ctx context.Context, h RequestHeaders) (principal string, err error)
}

// BearerTokens is an Authenticator for "Authorization: Bearer <token>":
// it verifies the token and returns the principal it belongs to.
type BearerTokens func(ctx context.Context, token string) (principal string, err error)

// errNoBearer reports a request without a bearer token.
var errNoBearer = errors.New("transport: no bearer token")

// Authenticate implements Authenticator.
func (v BearerTokens) Authenticate(ctx context.Context, h RequestHeaders) (string, error) {
	scheme, token, ok := strings.Cut(h.Header("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", errNoBearer
	}
	return v(ctx, strings.TrimSpace(token))
}

// HTTPOptions configure the Streamable HTTP transport. Zero fields take the
// defaults.
type HTTPOptions struct {
	// ListenAddr is the address the server listens on. Unless
	// AllowedHosts and AllowedOrigins say otherwise, a loopback address
	// — or none at all — accepts only loopback Host and Origin headers
	// (DNS-rebinding protection); any other address accepts any Host and
	// same-origin Origins.
	ListenAddr string
	// AllowedHosts lists the Host header values accepted (host or
	// host:port; "*" accepts any). Empty: see ListenAddr.
	AllowedHosts []string
	// AllowedOrigins lists the Origin header values accepted (scheme://host
	// [:port]; "*" accepts any). A request without Origin is always
	// accepted. Empty: loopback origins on a loopback listener, the
	// request's own host elsewhere.
	AllowedOrigins []string
	// Authenticator, when set, must accept every request; sessions are
	// bound to the principal that created them.
	Authenticator Authenticator

	// MaxBodyBytes bounds a POST body (default 4 MiB); more gets 413.
	MaxBodyBytes int64
	// StreamQueue bounds the frames queued for one SSE connection (default
	// 256). A client that stops reading past it loses the connection; the
	// frames stay in the session's event log for Last-Event-ID resumption.
	StreamQueue int
	// WriteTimeout bounds one write to a client (default 30 s).
	WriteTimeout time.Duration
	// ReadTimeout bounds the reading of a POST body (default 10 s): a
	// client that trickles it is cut off. NewHTTPServer bounds headers to
	// 10 s itself.
	ReadTimeout time.Duration
	// KeepAlive is the interval of SSE comment pings on idle GET streams
	// and on the event streams of 2026-07-28 requests (subscriptions/listen,
	// a slow tool) (default 25 s; negative disables them).
	KeepAlive time.Duration
	// Retry is the reconnection delay sent in priming events (default 1 s).
	Retry time.Duration
	// Observer receives transport events for metrics; nil ignores them.
	Observer HTTPObserver
	// Logger receives transport diagnostics (at debug level, a line per
	// request and one per refused request with its reason); nil means
	// slog.Default().
	Logger *slog.Logger
}

// HTTPObserver is told about HTTP traffic, for metrics.
type HTTPObserver interface {
	// HTTPRequest reports one finished HTTP request.
	HTTPRequest(method string, status int, d time.Duration)
	// StreamEvent reports an SSE event written; replayed is true for events
	// resent after Last-Event-ID.
	StreamEvent(replayed bool)
}

func (o *HTTPOptions) withDefaults() HTTPOptions {
	var c HTTPOptions
	if o != nil {
		c = *o
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 4 << 20
	}
	if c.StreamQueue <= 0 {
		c.StreamQueue = 256
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 30 * time.Second
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = 10 * time.Second
	}
	if c.KeepAlive == 0 {
		c.KeepAlive = 25 * time.Second
	}
	if c.Retry <= 0 {
		c.Retry = time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// isLoopbackAddr reports whether a listen address is on a loopback
// interface (an empty host, which listens everywhere, is not).
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return isLoopbackHost(host)
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
