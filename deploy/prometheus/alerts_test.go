// Package prometheus tests alerts.yaml with Prometheus's own rule
// evaluation (the rules and promql packages promtool's "test rules" runs
// on): recorded series are loaded into a test storage, the rule groups
// evaluated every 30 s as a Prometheus server would, and the alerts firing
// at the end compared with what should page. It is a module of its own so
// that the runtime's module does not depend on Prometheus; .ci/run tests
// it.
package prometheus

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// step is how often series are sampled and rules evaluated.
const step = 30 * time.Second

// firing loads series (promqltest's "load" notation, sampled every step),
// evaluates alerts.yaml every step from 0 to at, and returns the alerts
// firing then, each as its name and labels.
func firing(t *testing.T, series string, at time.Duration) []labels.Labels {
	t.Helper()
	ll, err := promqltest.NewLazyLoader("load 30s\n"+series, promqltest.LazyLoaderOpts{})
	require.NoError(t, err, "the series")
	t.Cleanup(func() { _ = ll.Close() })
	m := rules.NewManager(&rules.ManagerOptions{
		AppendableV2: ll.Storage(),
		Queryable:    ll.Storage(),
		QueryFunc:    rules.EngineQueryFunc(ll.QueryEngine(), ll.Storage()),
		Context:      ll.Context(),
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		NotifyFunc:   func(context.Context, string, ...*rules.Alert) {}, // no Alertmanager: what fires is read below
		ExternalURL:  &url.URL{},
	})
	groups, errs := m.LoadGroups(step, labels.EmptyLabels(), "", nil, false, "alerts.yaml")
	require.Empty(t, errs, "alerts.yaml loads")
	require.NotEmpty(t, groups)
	var out []labels.Labels
	for ts := time.Duration(0); ts <= at; ts += step {
		now := time.Unix(0, 0).UTC().Add(ts)
		ll.WithSamplesTill(now, func(err error) {
			require.NoError(t, err)
			for _, g := range groups {
				g.Eval(context.Background(), now)
			}
		})
	}
	for _, g := range groups {
		for _, r := range g.AlertingRules() {
			for _, a := range r.ActiveAlerts() {
				if a.State == rules.StateFiring {
					out = append(out, a.Labels)
				}
			}
		}
	}
	return out
}

// names returns the alert names of as, sorted.
func names(as []labels.Labels) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Get("alertname"))
	}
	slices.Sort(out)
	return out
}

// node returns the labels of node i's series, as a PodMonitor attaches them.
func node(i string) string {
	return `namespace="mcp",pod="mcp-actors-` + i + `",instance="10.0.0.` + i + `:9090",job="mcp/mcp-actors"`
}

// healthy is an idle three-node cluster's series for n samples: every node
// up, in quorum, acting, routed to two others, each leading one store (of
// two), its lease renewed, its counters flat, one release.
func healthy(n string) string {
	var b strings.Builder
	for i, lead := range []string{"sessions", "leases", ""} {
		id := string(rune('0' + i))
		l := node(id)
		for _, s := range []string{"sessions", "leases"} {
			v := "0"
			if s == lead {
				v = "1"
			}
			b.WriteString("  mcp_cluster_storage_leader{" + l + `,store="` + s + `"} ` + v + "x" + n + "\n")
		}
		for _, s := range []string{
			"up{" + l + "} 1x" + n,
			"mcp_cluster_storage_quorum{" + l + "} 1x" + n,
			"mcp_cluster_acting{" + l + "} 1x" + n,
			"mcp_cluster_peers{" + l + "} 2x" + n,
			"mcp_cluster_lease_age_seconds{" + l + "} 2x" + n,
			"mcp_cluster_lease_renewals_total{" + l + `,outcome="failed"} 0x` + n,
			"mcp_cluster_lease_renewals_total{" + l + `,outcome="ok"} 0+8x` + n,
			"mcp_cluster_write_failures_total{" + l + "} 0x" + n,
			"mcp_cluster_unacknowledged_requests_total{" + l + "} 0x" + n,
			"mcp_cluster_lost_answers_total{" + l + "} 0x" + n,
			"mcp_cluster_nats_errors_total{" + l + "} 0x" + n,
			"mcp_cluster_takeovers_total{" + l + "} 0x" + n,
			"mcp_cluster_route_rtt_seconds{" + l + `,peer="x"} 0.001x` + n,
			"mcp_sessions_live{" + l + "} 100x" + n,
			"mcp_sessions_max{" + l + "} 26416x" + n,
			"mcp_memory_held_bytes{" + l + "} 200000000x" + n,
			"mcp_memory_limit_bytes{" + l + "} 1932735283x" + n,
			"mcp_build_info{" + l + `,version="v0.2.0",goversion="go1.27.3"} 1x` + n,
			// A certificate renewed 30 days ahead of its 90: 60 days left, then
			// (renewed) 89.
			"mcp_tls_certificate_expiry_timestamp_seconds{" + l + "} 5184000x" + n,
			"mcp_cluster_tls_certificate_expiry_timestamp_seconds{" + l + "} 5184000x" + n,
			"mcp_cluster_store_bytes{" + l + `,store="sessions"} 1000000x` + n,
			"mcp_cluster_store_max_bytes{" + l + `,store="sessions"} 1073741824x` + n,
			"mcp_cluster_store_replica_lag{" + l + `,store="sessions"} 0x` + n,
			// The event log drops its oldest events at its bound: full is normal.
			"mcp_cluster_store_bytes{" + l + `,store="events"} 268435000x` + n,
			"mcp_cluster_store_max_bytes{" + l + `,store="events"} 268435456x` + n,
			"mcp_requests_total{" + l + `,method="tools/call",outcome="ok"} 0+60x` + n,
			"mcp_requests_total{" + l + `,method="tools/call",outcome="error"} 0+1x` + n,
			"mcp_http_requests_total{" + l + `,method="POST",code="200"} 0+60x` + n,
			"mcp_http_requests_total{" + l + `,method="POST",code="503"} 0x` + n,
		} {
			b.WriteString("  " + s + "\n")
		}
	}
	return b.String()
}

// without drops the series of healthy whose text contains any of drop (to
// replace them).
func without(series string, drop ...string) string {
	var keep []string
	for line := range strings.Lines(series) {
		if !slices.ContainsFunc(drop, func(d string) bool { return strings.Contains(line, d) }) {
			keep = append(keep, strings.TrimRight(line, "\n"))
		}
	}
	return strings.Join(keep, "\n") + "\n"
}

// samples of an hour at step.
const hour = "120"

func TestIdleClusterPagesNobody(t *testing.T) {
	assert.Empty(t, names(firing(t, healthy(hour), time.Hour)))
}

// TestAlertsFire: each case's series should page: the alert fires, with
// the namespace and pod of the node it is about where it is about one.
func TestAlertsFire(t *testing.T) {
	n1 := node("1")
	for _, tc := range []struct {
		name, alert string
		replace     []string // series of healthy to drop
		series      string   // and what to put instead
		at          time.Duration
		perNode     bool // the alert names the node: namespace and pod kept
	}{
		{"quorum lost for a minute", "McpActorsNoQuorum", []string{"mcp_cluster_storage_quorum{" + n1},
			"  mcp_cluster_storage_quorum{" + n1 + "} 1x10 0x20\n", 15 * time.Minute, true},
		{"renewals failing for ten minutes", "McpActorsLeaseRenewalsFailing", []string{`lease_renewals_total{` + n1 + `,outcome="failed"}`},
			"  mcp_cluster_lease_renewals_total{" + n1 + `,outcome="failed"} 0x10 0+1x30` + "\n", 20 * time.Minute, true},
		{"writes failing for ten minutes", "McpActorsWriteFailures", []string{"mcp_cluster_write_failures_total{" + n1},
			"  mcp_cluster_write_failures_total{" + n1 + "} 0x10 0+3x30\n", 20 * time.Minute, true},
		{"unacknowledged for ten minutes", "McpActorsUnacknowledgedRequests", []string{"mcp_cluster_unacknowledged_requests_total{" + n1},
			"  mcp_cluster_unacknowledged_requests_total{" + n1 + "} 0x10 0+1x30\n", 20 * time.Minute, true},
		{"answers lost for ten minutes", "McpActorsLostAnswers", []string{"mcp_cluster_lost_answers_total{" + n1},
			"  mcp_cluster_lost_answers_total{" + n1 + "} 0x10 0+1x30\n", 20 * time.Minute, true},
		{"no leader for a store", "McpActorsStorageLeaderless", []string{`store="sessions"`},
			"  mcp_cluster_storage_leader{" + node("0") + `,store="sessions"} 1x10 0x20` + "\n" +
				"  mcp_cluster_storage_leader{" + node("1") + `,store="sessions"} 0x30` + "\n" +
				"  mcp_cluster_storage_leader{" + node("2") + `,store="sessions"} 0x30` + "\n", 15 * time.Minute, false},
		{"a node not scraped", "McpActorsTargetDown", []string{"up{" + n1},
			"  up{" + n1 + "} 1x10 0x20\n", 15 * time.Minute, true},
		{"two releases for an hour", "McpActorsVersionSkew", []string{"mcp_build_info{" + n1},
			"  mcp_build_info{" + n1 + `,version="v0.3.0",goversion="go1.27.3"} 1x` + hour + "\n", time.Hour, false},
		{"the session directory 90% full", "McpActorsStoreNearFull", []string{"mcp_cluster_store_bytes{" + n1 + `,store="sessions"}`},
			"  mcp_cluster_store_bytes{" + n1 + `,store="sessions"} 966367641x40` + "\n", 15 * time.Minute, true},
		{"a replica behind for ten minutes", "McpActorsReplicaLagging", []string{`mcp_cluster_store_replica_lag{` + n1 + `,store="sessions"}`},
			"  mcp_cluster_store_replica_lag{" + n1 + `,store="sessions"} 0x10 5000x30` + "\n", 20 * time.Minute, false},
		{"a certificate expiring in five days", "McpActorsCertificateExpiring", []string{"mcp_tls_certificate_expiry_timestamp_seconds{" + n1},
			"  mcp_tls_certificate_expiry_timestamp_seconds{" + n1 + "} 432000x" + hour + "\n", 61 * time.Minute, true},
		{"a route certificate expiring in five days", "McpActorsCertificateExpiring", []string{"mcp_cluster_tls_certificate_expiry_timestamp_seconds{" + n1},
			"  mcp_cluster_tls_certificate_expiry_timestamp_seconds{" + n1 + "} 432000x" + hour + "\n", 61 * time.Minute, true},
		{"sessions at 95% of the limit", "McpActorsSessionsNearLimit", []string{"mcp_sessions_live{" + n1},
			"  mcp_sessions_live{" + n1 + "} 25100x40\n", 15 * time.Minute, true},
		{"memory at 78% of the limit", "McpActorsMemoryNearLimit", []string{"mcp_memory_held_bytes{" + n1},
			"  mcp_memory_held_bytes{" + n1 + "} 1507533520x40\n", 15 * time.Minute, true},
		{"one request in ten an error", "McpActorsErrorRate", []string{`mcp_requests_total{` + n1 + `,method="tools/call",outcome="error"}`},
			"  mcp_requests_total{" + n1 + `,method="tools/call",outcome="error"} 0+6x40` + "\n", 15 * time.Minute, true},
		{"503s for ten minutes", "McpActorsHTTP5xx", []string{`mcp_http_requests_total{` + n1 + `,method="POST",code="503"}`},
			"  mcp_http_requests_total{" + n1 + `,method="POST",code="503"} 0+30x40` + "\n", 15 * time.Minute, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fired := firing(t, without(healthy(hour), tc.replace...)+tc.series, tc.at)
			require.Contains(t, names(fired), tc.alert)
			for _, a := range fired {
				if a.Get("alertname") != tc.alert {
					continue
				}
				assert.Equal(t, "mcp", a.Get("namespace"), "the namespace is kept: %s", a)
				if tc.perNode {
					assert.Equal(t, "mcp-actors-1", a.Get("pod"), "the pod is kept: %s", a)
				}
			}
		})
	}
}

// TestRoutineEventsPageNobody: what production does every day fires
// nothing but the info-level takeover note.
func TestRoutineEventsPageNobody(t *testing.T) {
	n1, n0, n2 := node("1"), node("0"), node("2")
	for _, tc := range []struct {
		name    string
		replace []string
		series  string
		at      time.Duration
		allow   []string // info alerts that may fire
	}{
		{"a storage election: failed renewals, writes, unacknowledged requests, a leader moving",
			[]string{`outcome="failed"`, "write_failures", "unacknowledged", `store="leases"`, "mcp_cluster_storage_quorum{" + n1},
			"  mcp_cluster_lease_renewals_total{" + n0 + `,outcome="failed"} 0x20` + "\n" +
				"  mcp_cluster_lease_renewals_total{" + n1 + `,outcome="failed"} 0x10 1 2 2x18` + "\n" +
				"  mcp_cluster_lease_renewals_total{" + n2 + `,outcome="failed"} 0x10 1 2 2x18` + "\n" +
				"  mcp_cluster_write_failures_total{" + n0 + "} 0x20\n" +
				"  mcp_cluster_write_failures_total{" + n1 + "} 0x10 4 4x19\n" +
				"  mcp_cluster_write_failures_total{" + n2 + "} 0x10 2 2x19\n" +
				"  mcp_cluster_unacknowledged_requests_total{" + n0 + "} 0x20\n" +
				"  mcp_cluster_unacknowledged_requests_total{" + n1 + "} 0x10 3 3x19\n" +
				"  mcp_cluster_unacknowledged_requests_total{" + n2 + "} 0x20\n" +
				"  mcp_cluster_storage_quorum{" + n1 + "} 1x10 0 1x19\n" +
				"  mcp_cluster_storage_leader{" + n0 + `,store="leases"} 0x20` + "\n" +
				"  mcp_cluster_storage_leader{" + n1 + `,store="leases"} 1x10 0 0 0x18` + "\n" +
				"  mcp_cluster_storage_leader{" + n2 + `,store="leases"} 0x10 0 1 1x18` + "\n",
			10 * time.Minute, nil},
		{"a rolling upgrade: two releases for ten minutes, each node restarted once",
			[]string{"mcp_build_info", "up{", "takeovers"},
			"  mcp_build_info{" + n0 + `,version="v0.2.0",goversion="go1.27.3"} 1x10 _x30` + "\n" +
				"  mcp_build_info{" + n0 + `,version="v0.3.0",goversion="go1.27.3"} _x10 1x30` + "\n" +
				"  mcp_build_info{" + n1 + `,version="v0.2.0",goversion="go1.27.3"} 1x20 _x20` + "\n" +
				"  mcp_build_info{" + n1 + `,version="v0.3.0",goversion="go1.27.3"} _x20 1x20` + "\n" +
				"  mcp_build_info{" + n2 + `,version="v0.2.0",goversion="go1.27.3"} 1x30 _x10` + "\n" +
				"  mcp_build_info{" + n2 + `,version="v0.3.0",goversion="go1.27.3"} _x30 1x10` + "\n" +
				"  up{" + n0 + "} 1x9 0 1x30\n" + "  up{" + n1 + "} 1x19 0 1x20\n" + "  up{" + n2 + "} 1x29 0 1x10\n" +
				"  mcp_cluster_takeovers_total{" + n0 + "} 0x40\n" + "  mcp_cluster_takeovers_total{" + n1 + "} 0x40\n" +
				"  mcp_cluster_takeovers_total{" + n2 + "} 0x40\n",
			20 * time.Minute, nil},
		{"an external NATS deployment: no leader gauge, peers unknown",
			[]string{"mcp_cluster_storage_leader", "mcp_cluster_peers"},
			"  mcp_cluster_peers{" + n0 + "} -1x" + hour + "\n" + "  mcp_cluster_peers{" + n1 + "} -1x" + hour + "\n" +
				"  mcp_cluster_peers{" + n2 + "} -1x" + hour + "\n",
			time.Hour, nil},
		{"a node restarted: its replicas catch up in a minute and a half", []string{"mcp_cluster_store_replica_lag"},
			"  mcp_cluster_store_replica_lag{" + n0 + `,store="sessions"} 0x10 80000 40000 9000 0x27` + "\n" +
				"  mcp_cluster_store_replica_lag{" + n1 + `,store="sessions"} 0x10 80000 40000 9000 0x27` + "\n" +
				"  mcp_cluster_store_replica_lag{" + n2 + `,store="sessions"} 0x40` + "\n",
			6*time.Minute + 30*time.Second, nil}, // its last moment behind
		{"no memory limit", []string{"mcp_memory_limit_bytes"},
			"  mcp_memory_limit_bytes{" + n0 + "} 0x40\n" + "  mcp_memory_limit_bytes{" + n1 + "} 0x40\n" +
				"  mcp_memory_limit_bytes{" + n2 + "} 0x40\n",
			15 * time.Minute, nil},
		{"a node lost: its sessions taken over", []string{"takeovers"},
			"  mcp_cluster_takeovers_total{" + n0 + "} 0x10 40x30\n" + "  mcp_cluster_takeovers_total{" + n1 + "} 0x40\n" +
				"  mcp_cluster_takeovers_total{" + n2 + "} 0x10 35x30\n",
			6 * time.Minute, []string{"McpActorsTakeovers"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fired := names(firing(t, without(healthy(hour), tc.replace...)+tc.series, tc.at))
			fired = slices.DeleteFunc(fired, func(n string) bool { return slices.Contains(tc.allow, n) })
			assert.Empty(t, fired)
		})
	}
}
