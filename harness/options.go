package harness

import (
	"context"
	"time"

	"github.com/mcp-actors/mcp-actors/messages"
)

// RequestHandler answers a server-to-client request. The result is sent as
// the response; an error that is a *messages.Error is sent as it is, any
// other as -32603.
type RequestHandler func(ctx context.Context, req *messages.Message) (any, error)

// Option configures a harness client.
type Option func(*clientConfig)

type clientConfig struct {
	pick      func(n uint64, nodes int) int
	principal string
	version   string
	caps      messages.ClientCapabilities
	info      messages.Implementation
	timeout   time.Duration
	handlers  map[string]RequestHandler
}

func newConfig(opts []Option) clientConfig {
	cfg := clientConfig{
		version:  messages.LatestVersion,
		info:     messages.Implementation{Name: "harness-client", Version: "0.0.0"},
		timeout:  DefaultTimeout,
		handlers: map[string]RequestHandler{},
	}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// WithProtocolVersion sets the version sent in initialize.
func WithProtocolVersion(v string) Option { return func(c *clientConfig) { c.version = v } }

// WithCapabilities sets the capabilities sent in initialize, replacing those
// the With* answer options declared before it.
func WithCapabilities(caps messages.ClientCapabilities) Option {
	return func(c *clientConfig) { c.caps = caps }
}

// WithNodes chooses, in a cluster (NewCluster), the node through which the
// client sends its nth message (from 0); the session is opened through the
// node chosen for n = 0, which owns it. By default messages go round
// robin.
func WithNodes(pick func(n uint64, nodes int) int) Option {
	return func(c *clientConfig) { c.pick = pick }
}

// WithPrincipal opens the session as principal, as an authenticated
// transport would: every message the client sends carries it.
func WithPrincipal(p string) Option { return func(c *clientConfig) { c.principal = p } }

// WithClientInfo sets the client info sent in initialize.
func WithClientInfo(info messages.Implementation) Option {
	return func(c *clientConfig) { c.info = info }
}

// WithTimeout bounds each wait without a deadline (default DefaultTimeout).
func WithTimeout(d time.Duration) Option { return func(c *clientConfig) { c.timeout = d } }

// WithHandler answers server requests of method with h.
func WithHandler(method string, h RequestHandler) Option {
	return func(c *clientConfig) { c.handlers[method] = h }
}

// WithSampling declares sampling (with tools) and answers
// sampling/createMessage with fn.
func WithSampling(fn func(*messages.CreateMessageParams) (*messages.CreateMessageResult, error)) Option {
	return func(c *clientConfig) {
		c.caps.Sampling = &messages.SamplingCapabilities{Tools: &messages.Empty{}}
		c.handlers[messages.MethodCreateMessage] = func(_ context.Context, req *messages.Message) (any, error) {
			var p messages.CreateMessageParams
			if err := messages.DecodeParams(req.Params, &p); err != nil {
				return nil, err
			}
			return fn(&p)
		}
	}
}

// WithElicitation declares form and URL elicitation and answers
// elicitation/create with fn.
func WithElicitation(fn func(*messages.ElicitParams) (*messages.ElicitResult, error)) Option {
	return func(c *clientConfig) {
		c.caps.Elicitation = &messages.ElicitationCapabilities{Form: &messages.Empty{}, URL: &messages.Empty{}}
		c.handlers[messages.MethodElicit] = func(_ context.Context, req *messages.Message) (any, error) {
			var p messages.ElicitParams
			if err := messages.DecodeParams(req.Params, &p); err != nil {
				return nil, err
			}
			return fn(&p)
		}
	}
}

// WithRoots declares roots (with listChanged) and answers roots/list with
// whatever fn returns at the time.
func WithRoots(fn func() []*messages.Root) Option {
	return func(c *clientConfig) {
		c.caps.Roots = &messages.RootsCapabilities{ListChanged: true}
		c.handlers[messages.MethodListRoots] = func(context.Context, *messages.Message) (any, error) {
			roots := fn()
			if roots == nil {
				roots = []*messages.Root{}
			}
			return &messages.ListRootsResult{Roots: roots}, nil
		}
	}
}
