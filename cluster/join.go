package cluster

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-actors/mcp-actors/actors/router"
	"github.com/mcp-actors/mcp-actors/internal/clusterapi"
	"github.com/mcp-actors/mcp-actors/metrics"
)

// What a server that joins the cluster (mcpactors.Server.JoinCluster)
// asks of its node and relay: internal/clusterapi says it, so that the
// root package does not import this one.
var (
	_ clusterapi.Node  = (*Node)(nil)
	_ clusterapi.Relay = (*relay)(nil)
)

// Relay makes the relay of a server's sessions, local, on this node, its
// spans started on tp (nil: none) (newRelay): mcpactors.Server.JoinCluster
// calls it.
func (n *Node) Relay(local *router.Local, tp trace.TracerProvider) (clusterapi.Relay, error) {
	r, err := newRelay(n, local, tp)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// RegisterMetrics registers the cluster's metrics in reg: the relay's
// counters, the stores' sizes, the node's view of the cluster, and the
// route certificate's expiry when routes use TLS.
func (r *relay) RegisterMetrics(reg *prometheus.Registry) {
	n := r.node
	metrics.RegisterCluster(reg, r.Stats)
	metrics.RegisterClusterStores(reg, func() []metrics.StoreSize {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		var out []metrics.StoreSize
		for _, st := range n.StoreSizes(ctx) {
			out = append(out, metrics.StoreSize{Store: st.Store, Bytes: st.Bytes, MaxBytes: st.MaxBytes, ReplicaLag: st.ReplicaLag})
		}
		return out
	})
	stores := Stores()
	if n.External() {
		stores = nil // no node of ours leads a store: no mcp_cluster_storage_leader, which would say none does
	}
	metrics.RegisterClusterTopology(reg, stores, func() metrics.ClusterTopology {
		tp := n.Topology()
		leads := make(map[string]bool, len(tp.Leads))
		for _, st := range tp.Leads {
			leads[st] = true
		}
		return metrics.ClusterTopology{Peers: tp.Peers, Leads: leads, LeaseAge: tp.LeaseAge, Quorum: tp.Quorum, RouteRTT: tp.RouteRTT}
	})
	if !n.RouteCertificateExpiry().IsZero() {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mcp_cluster_tls_certificate_expiry_timestamp_seconds",
			Help: "When the route certificate (--cluster-tls-cert) expires (Unix time); its files are read again when they change.",
		}, func() float64 { return float64(n.RouteCertificateExpiry().Unix()) }))
	}
}
