// Package mcpactors is the embedding API of mcp-actors, a runtime for Model
// Context Protocol servers in which every session is an actor.
//
// A Server is a catalog of tools, prompts, resources, resource templates and
// completions that can change at runtime, plus the actor system its
// sessions live in. A transport — ServeStdio, or the Streamable HTTP
// endpoint of HTTPHandler and Serve — spawns one session actor per client
// and sends it the client's messages; the actor runs the Server's handlers
// off its mailbox, each on a goroutine of its own.
//
//	client ──wire──▶ transport ──messages──▶ session actor ──handler goroutine──▶ the catalog ──▶ your ToolHandler
//	                                              ▲                                                      │
//	                                              └──────────── Session handle (Elicit, Log …) ◀─────────┘
//
// What an embedder uses is here and in package messages (the protocol's
// types):
//
//   - NewServer with Options (Limits bound each session; an Observer or a
//     Prometheus registry watches them), then AddTool (AddTypedTool for a
//     typed one), AddPrompt, AddResource, AddResourceTemplate,
//     AddCompletion, at any time.
//   - A handler gets a *Session: what the client declared, Log and
//     Progress to it, Elicit, ElicitURL, CreateMessage and ListRoots calls
//     to it, and the session's data store. A request of protocol
//     2026-07-28 has no session; the same handler serves it, and a call to
//     the client becomes a Multi Round-Trip Request.
//   - ServeStdio for a client that starts the server; Serve (or
//     HTTPHandler in a server of your own) with HTTPOptions for
//     Streamable HTTP, with an Authenticator to bind sessions to
//     principals.
//   - JoinCluster with a node of package cluster makes every session
//     reachable from every node of a NATS cluster: any node may receive a
//     client's next request, and a session outlives the loss of its node.
//
// Adding or removing an item sends the matching notifications/*/list_changed
// to every open session; NotifyResourceUpdated reaches the sessions
// subscribed to a resource.
package mcpactors
