// Package clusterapi is what a Server and the cluster node it joins ask of
// each other. The root package holds a Node and the Relay it makes, and
// package cluster's *Node is one, without the root importing package
// cluster: a program that serves one node (stdio, or HTTP on its own)
// links neither NATS nor its server.
//
//	mcpactors.Server.JoinCluster(node Node) ──▶ node.Relay(local) ──▶ Relay: the server's router, stream sink,
//	                                                                    catalog state, durable writes, drain
package clusterapi

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/messages"
)

// Node is a node of a cluster, as a server joining it sees it.
type Node interface {
	// ID is the node's ID, unique in its cluster.
	ID() string
	// Standalone reports a node with no other node: nothing to route to,
	// nothing durable.
	Standalone() bool
	// StateKeys returns the keys every node seals request states with.
	StateKeys() (current, previous []byte)
	// OnRouteSecrets calls fn after the route secrets (and so the state
	// keys) changed.
	OnRouteSecrets(fn func())
	// Journals returns the store of the answers of 2026-07-28 rounds,
	// kept for ttl.
	Journals(ttl time.Duration) session.Store
	// CountSessions tells the node how many sessions the server holds.
	CountSessions(count func() int)
	// LeaseContext returns a context that ends when the node may no
	// longer act for its sessions.
	LeaseContext() context.Context
	// Relay makes the relay of the server's sessions, local, on this
	// node, its spans started on tp (nil: none).
	Relay(local *router.Local, tp trace.TracerProvider) (Relay, error)
}

// Relay carries a server's sessions across the cluster: it routes
// transports' messages to sessions on any node, and sessions' stream
// events to streams on any node.
type Relay interface {
	router.Router
	// Catalog state, replicated to every node.
	UpdateTool(ctx context.Context, name string, cur bool, next func(on bool) bool) (bool, error)
	BumpResource(ctx context.Context, uri string, local uint64) (uint64, error)
	WatchCatalog(w CatalogWatch)
	// 2026-07-28 requests served on the node that keeps their round.
	ForwardModern(ctx context.Context, node string, req *messages.ModernRequest) error
	ServeModern(serve func(ctx context.Context, req *messages.ModernRequest), maxAge time.Duration) error
	// URL elicitations completed on any node.
	OnCompletion(fn func(id, principal string)) error
	PublishCompletion(ctx context.Context, id, principal string) error
	// Sessions' durable state and event logs.
	Persist(id string, st *session.State, done func(error))
	SetRecordTTL(ttl time.Duration)
	MaxStateBytes() int
	LogEvent(id string, e session.LoggedEvent)
	// A session closed: handed over to another node, or ended.
	HandedOver(id string)
	Forget(id string)
	// Readiness and shutdown.
	Ready() error
	Started() bool
	Drain(grace time.Duration)
	HandsOver() bool
	Close()
	// Observability.
	RegisterMetrics(reg *prometheus.Registry)
}

// CatalogWatch is told the catalog's shared state: at first what it
// holds, then every change.
type CatalogWatch struct {
	// Tool is told whether the tool name is enabled.
	Tool func(name string, on bool)
	// Resource is told the version of resource uri.
	Resource func(uri string, version uint64)
}
