// Command mcp-actors runs an MCP server built on mcp-actors.
//
//	mcp-actors serve [--listen ADDR] [--reference-tools] …   Streamable HTTP node
//	mcp-actors stdio [--reference-tools]                     one session over stdin and stdout
//	mcp-actors --version
//
// Logs go to stderr only, through log/slog (--log-level, --log-format);
// stdout carries nothing but MCP messages.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kong"
)

// version is the build's version; set it with
// -ldflags "-X main.version=v1.2.3".
var version = "dev"

// cli is the command line: global flags and one field per command.
type cli struct {
	Log     logFlags         `embed:""`
	Version kong.VersionFlag `help:"Print the version and exit."`

	Serve serveCmd `cmd:"" help:"Run a node: MCP over Streamable HTTP, with /healthz, /readyz and /metrics."`
	Stdio stdioCmd `cmd:"" help:"Serve one MCP session over stdin and stdout."`
}

func main() { os.Exit(run(os.Args[1:])) }

// run parses args, runs the chosen command and returns the exit code. A
// command line it cannot parse exits the process with kong's usage error.
func run(args []string) int {
	var c cli
	k := kong.Must(&c,
		kong.Name("mcp-actors"),
		kong.Description("A runtime for Model Context Protocol servers in which every session is an actor."),
		kong.Vars{"version": "mcp-actors " + version},
		// No usage on errors: kong prints it to stdout, which an MCP client
		// would read. The error itself goes to stderr.
	)
	kctx, err := k.Parse(args)
	k.FatalIfErrorf(err)

	log := c.Log.logger(os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	kctx.BindTo(ctx, (*context.Context)(nil))
	if err := kctx.Run(log); err != nil {
		log.Error("mcp-actors failed", "command", kctx.Command(), "err", err)
		return 1
	}
	return 0
}
