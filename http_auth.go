package mcpactors

import (
	"cmp"
	"context"

	"github.com/mcp-actors/mcp-actors/actors/transport"
)

// Authenticator identifies the principal behind an HTTP request
// (HTTPOptions.Authenticator). An error makes the request fail with 401
// before anything else happens; its text reaches the client only if it
// has a Public() string method.
type Authenticator interface {
	Authenticate(ctx context.Context, h RequestHeaders) (principal string, err error)
}

// RequestHeaders gives an Authenticator the request's headers.
type RequestHeaders interface {
	Header(name string) string
}

// BearerTokens is an Authenticator for "Authorization: Bearer <token>":
// it verifies the token and returns the principal it belongs to. A request
// without a bearer token is refused.
type BearerTokens func(ctx context.Context, token string) (principal string, err error)

// Authenticate implements Authenticator.
func (v BearerTokens) Authenticate(ctx context.Context, h RequestHeaders) (string, error) {
	return transport.BearerTokens(v).Authenticate(ctx, h)
}

// authenticator lets the transport ask an embedder's Authenticator.
type authenticator struct{ a Authenticator }

func (a authenticator) Authenticate(ctx context.Context, h transport.RequestHeaders) (string, error) {
	return a.a.Authenticate(ctx, h)
}

// endpointOptions is what the transport is told of o, and of the server.
func (s *Server) endpointOptions(o *HTTPOptions) *transport.HTTPOptions {
	t := &transport.HTTPOptions{
		ListenAddr:     o.ListenAddr,
		AllowedHosts:   o.AllowedHosts,
		AllowedOrigins: o.AllowedOrigins,
		MaxBodyBytes:   o.MaxBodyBytes,
		StreamQueue:    o.StreamQueue,
		WriteTimeout:   o.WriteTimeout,
		ReadTimeout:    o.ReadTimeout,
		KeepAlive:      o.KeepAlive,
		Retry:          o.Retry,
		Observer:       s.httpObserver(),
		Logger:         cmp.Or(o.Logger, s.log),
	}
	if o.Authenticator != nil {
		t.Authenticator = authenticator{o.Authenticator}
	}
	return t
}
