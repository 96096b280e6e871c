// Command mcp-actors runs an MCP server built on mcp-actors.
//
//	mcp-actors serve [--listen ADDR] [--reference-tools] …   Streamable HTTP node
//	mcp-actors stdio [--reference-tools]                     one session over stdin and stdout
//	mcp-actors version                                       the release, and the formats it reads and writes
//	mcp-actors admin status|drain|remove-store --url URL     a node's admin path
//
// Logs go to stderr only, through log/slog (--log-level, --log-format);
// stdout carries nothing but MCP messages.
//
// Exit codes: 0 after a clean stop; 2 for bad flags or configuration; 1
// when a start-up stage or the running node fails. A failure prints one
// line on stderr, "mcp-actors: <flag or stage>: <reason>".
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/alecthomas/kong"

	"github.com/mcp-actors/mcp-actors/cluster"
)

// The exit codes (README, docs/operations.md).
const (
	exitOK      = 0
	exitRuntime = 1 // a start-up stage or the running node failed
	exitConfig  = 2 // bad flags or configuration
)

// cli is the command line: global flags and one field per command.
type cli struct {
	Log     logFlags         `embed:""`
	Version kong.VersionFlag `help:"Print the version and exit."`

	Serve      serveCmd   `cmd:"" help:"Run a node: MCP over Streamable HTTP, with /healthz, /readyz and /metrics."`
	Stdio      stdioCmd   `cmd:"" help:"Serve one MCP session over stdin and stdout."`
	VersionCmd versionCmd `cmd:"" name:"version" help:"Print the release and the wire formats it reads and writes."`
	Admin      adminCmd   `cmd:"" help:"Ask a node over its admin path (serve --admin-token-file): status, drain, remove-store."`
}

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

// run parses args, runs the chosen command and returns the exit code;
// a failure is one line on stderr.
func run(args []string, stderr io.Writer) int {
	var c cli
	k, err := kong.New(&c,
		kong.Name("mcp-actors"),
		kong.Description("A runtime for Model Context Protocol servers in which every session is an actor."),
		kong.Vars{"version": "mcp-actors " + release()},
		// No usage on errors: kong prints it to stdout, which an MCP client
		// would read. The error itself goes to stderr.
	)
	if err != nil {
		return fail(stderr, exitRuntime, err) // the command line's own definition: a bug
	}
	kctx, err := k.Parse(args)
	if err != nil {
		return fail(stderr, exitConfig, fmt.Errorf("%w (see mcp-actors --help)", err))
	}
	log := c.Log.logger(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	kctx.BindTo(ctx, (*context.Context)(nil))
	kctx.Bind(&c.Admin) // the admin subcommands' shared flags
	if err := kctx.Run(log); err != nil {
		code := exitRuntime
		var cfg configError
		if errors.As(err, &cfg) || errors.Is(err, cluster.ErrInvalidOptions) {
			code = exitConfig
		}
		return fail(stderr, code, err)
	}
	return exitOK
}

// fail writes err as one line on stderr and returns code.
func fail(stderr io.Writer, code int, err error) int {
	line := strings.Join(strings.Fields(err.Error()), " ")
	fmt.Fprintf(stderr, "mcp-actors: %s\n", line)
	return code
}

// configError marks a failure as the operator's configuration (exit 2)
// rather than the node's run.
type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }
func (e configError) Unwrap() error { return e.err }
