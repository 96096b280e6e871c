package mcpactors

import (
	"context"
	"io"

	"github.com/mcp-actors/mcp-actors/actors/transport"
)

// ServeStdio serves one session over newline-delimited JSON on r and w (for
// a subprocess server: os.Stdin and os.Stdout). It returns nil at EOF on r
// and ctx.Err() when ctx ends; the session is closed either way.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	return transport.ServeStdio(ctx, r, w, s.router, &transport.StdioOptions{Logger: s.log, Modern: s.modern})
}
