// Package cluster makes several mcp-actors processes one server: every
// session lives on one node (its owner) and every message for it, from
// any node, is routed there over NATS; what the session sends for a
// stream goes back to the node that holds the stream's HTTP connection.
//
//	client ──HTTP──▶ edge node: transport ──relay.Deliver──▶ owner here? ──yes──▶ session actor
//	                                                            └──no──▶ NATS node.<owner>.session ──▶ owner's session actor
//	owner's session actor ──relay.DeliverStream──▶ NATS node.<edge>.stream ──▶ edge: the client's stream
//
// Two types carry it: a Node is this process's membership (the NATS
// connection — to an embedded server by default — the JetStream buckets
// and this node's lease); its relay (Node.Relay, unexported) is the node's
// router (router.Router):
// routing, acknowledgement, chunking of large messages, forwarding of
// 2026-07-28 retries, takeover of sessions whose owner is gone, and the
// handover of a node that stops. Each concern has its files:
//
//	node.go, embedded.go, connection.go    the membership and its NATS server or connection
//	routesecret.go, routecert.go           how routes authenticate (a secret or mutual TLS), read again on change
//	lease.go, lease_read.go, clock.go      the lease that fences a node: it acts only while it holds it
//	readiness.go, replicas.go              when a node is ready; storage on a majority of its replicas
//	buckets.go, bounds.go, sizes.go        the JetStream stores, their bounds and sizes
//	directory.go, takeover.go, owners.go   who owns a session, moving it, watching owners
//	relay.go, async.go, inbound.go         routing a message to its owner and delivering it there
//	acks.go, running.go                    every routed request ends: acknowledged, answered or given an error
//	chunks.go, frames.go, streams.go       large messages in chunks; stream events back to the edge
//	modern.go                              2026-07-28 retries forwarded to the node of their continuation
//	handover.go                            a planned stop: hold, then release, the node's sessions
//	events.go, eventlog.go                 the SSE event log of resumable sessions
//	persist.go, journals.go, catalog.go    durable session state, 2026-07-28 journals, the replicated catalog
//	overview.go, topology.go, stats.go     what operators see: admin status, metrics
//	formats.go, subjects.go, options.go    wire formats and their versions, NATS subjects, options
//	inprocess.go                           several nodes in one process, for tests and the harness
//
// docs/cluster.md is the full account: ownership, fencing, what a client
// sees under each fault, durability; tests/faults/README.md lists each
// mechanism with the test that fails without it.
package cluster
