// Package reftools is the reference set of tools, resources, resource
// templates and prompts that mcp-actors serves with --reference-tools: what
// the official MCP conformance suite (@modelcontextprotocol/conformance
// 0.1.16) calls on a server, plus tools of our own for roots, cancellation,
// long-running work and catalog changes. The names, texts and behaviours are
// those of the project's docs/reference-tools.md (where in doubt, the suite's own
// scenario descriptions); interop tests and benchmarks rely on them.
//
// It doubles as the embedding example: everything here uses only the public
// API a Go developer embedding mcp-actors has.
//
//	srv := mcpactors.NewServer(messages.Implementation{Name: "demo", Version: "1.0.0"}, nil)
//	if err := reftools.Register(srv); err != nil { … }
//	err := srv.ServeStdio(ctx, os.Stdin, os.Stdout)
//
// Where to look for what:
//
//	tools_content.go   fixed results: text, image, audio, embedded resources, errors,
//	                   a raw JSON Schema 2020-12 input schema, a typed tool (AddTypedTool)
//	tools_client.go    calls back to the client: sampling, elicitation, roots
//	tools_timing.go    log messages and progress while a call runs, cancellation
//	tools_dynamic.go   changing the catalog and resources at runtime (list_changed,
//	                   resources/updated)
//	tools_session.go   per-session data that survives a change of node (a counter
//	                   and its read)
//	tools_hold.go      a handler run that reports, and logs, its node and times
//	options.go         Register's options: the node ID and logger test_hold uses
//	resources.go       resources and a resource template
//	prompts.go         prompts and argument completion
//
// Handlers get a *mcpactors.Session for their client's session: Log and
// Progress report while a call runs, CreateMessage, ElicitForm and ListRoots
// ask the client and block until it answers (or ctx ends). A handler's own
// failure is a result with isError set, not a JSON-RPC error.
package reftools
