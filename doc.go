// Package mcpactors is the embedding API of mcp-actors, a runtime for Model
// Context Protocol servers in which every session is an actor.
//
// A Server is a catalog of tools, prompts, resources, resource templates and
// completions that can change at runtime, plus the actor system its
// sessions live in. Transports (ServeStdio here; Streamable HTTP in
// actors/transport) spawn one session actor per client and send it the
// client's messages; the actor runs the Server's handlers off its mailbox.
//
//	client ──wire──▶ transport ──messages──▶ session actor ──handler goroutine──▶ the catalog ──▶ your ToolHandler
//	                                              ▲                                                      │
//	                                              └──────────── Session handle (Elicit, Log …) ◀─────────┘
//
// Adding or removing an item sends the matching notifications/*/list_changed
// to every open session; NotifyResourceUpdated reaches the sessions
// subscribed to a resource.
package mcpactors
