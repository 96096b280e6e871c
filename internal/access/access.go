// Package access hands the module's own packages (harness, the tests) what
// the root package keeps from embedders: a server's router and its live
// sessions. Package mcpactors sets the functions when it is loaded; they
// take the *mcpactors.Server as any, since this package cannot import it.
package access

import (
	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/actors/session"
)

var (
	// Router returns a server's router: how transports reach its sessions
	// and register their streams.
	Router func(server any) router.Router
	// Session returns the live session with the given ID on a server.
	Session func(server any, id string) (*session.Ref, bool)
)
