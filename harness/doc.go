// Package harness drives mcp-actors sessions at the message level, with no
// transport in between: a test starts a server in-process, opens sessions,
// sends requests and notifications, answers server-to-client requests with
// scripted handlers, and reads what the server sent, in order.
//
//	test ──Call/Notify──▶ Client ──HandleRequest/…──▶ session actor ──▶ your handlers
//	  ▲                     │ ◀────── frames (one sink per request + standalone)
//	  └── Transcript/Wait ──┘ ──scripted answers (sampling, elicitation, roots)──▶ DeliverResponse
//
// RunScenarios plays golden transcripts (testdata/*.txtar): the client's
// messages and the server's expected messages, with placeholders for
// volatile values, and actions between them ("! name arg…": Actions);
// RunModernScenarios and Cluster.RunModernScenarios play those of protocol
// 2026-07-28 over HTTP, on one server or across a cluster. See scenario.go
// for the format.
package harness
