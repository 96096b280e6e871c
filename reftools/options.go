package reftools

import "log/slog"

// Option configures Register.
type Option func(*options)

// options are what the Options of one Register call set.
type options struct {
	nodeID string       // "" when not set
	log    *slog.Logger // never nil once Register has applied the options
}

// WithNodeID names the node the reference set is served on: test_hold
// reports it with each run. Without it test_hold reports "" (a server
// on its own, stdio). mcp-actors serve passes its cluster node's ID.
func WithNodeID(id string) Option {
	return func(o *options) { o.nodeID = id }
}

// WithLogger is where test_hold logs its runs: give it the server's own
// logger (Options.Logger). Without it, or with nil, slog.Default(), which
// is also the server's when Options.Logger is nil.
func WithLogger(log *slog.Logger) Option {
	return func(o *options) {
		if log != nil {
			o.log = log
		}
	}
}
