package metrics_test

import (
	json "encoding/json/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/mcp-actors/mcp-actors/actors/session"
	"github.com/mcp-actors/mcp-actors/metrics"
)

// The alert rules (deploy/prometheus) and the dashboard (deploy/grafana)
// are built from the metrics a node serves and the docs describe: every
// series they name is one a node registers, and every mcp_ metric among
// them is documented.

// exposed returns the names of the series a serve node exposes: the
// runtime's metrics, the cluster's, and the process and Go collectors'.
func exposed(t *testing.T) map[string]bool {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := metrics.New(reg, &metrics.Options{Sessions: sessions{open: 1, live: 1}, MaxSessions: 10,
		Memory: func() (uint64, uint64) { return 1, 2 }})
	m.RequestHandled(report("tools/call", "echo", session.OutcomeOK, time.Millisecond))
	m.HTTPRequest("POST", 200, time.Millisecond)
	metrics.RegisterCluster(reg, func() metrics.ClusterStats { return metrics.ClusterStats{} })
	// The root package registers this one when it serves TLS
	// (TestServeTLSReload reads it from a node).
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mcp_tls_certificate_expiry_timestamp_seconds"}, func() float64 { return 1 }))
	// And this one with route TLS (TestRouteCertificateReload reads what it serves).
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mcp_cluster_tls_certificate_expiry_timestamp_seconds"}, func() float64 { return 1 }))
	metrics.RegisterClusterStores(reg, func() []metrics.StoreSize {
		return []metrics.StoreSize{{Store: "sessions", Bytes: 1, MaxBytes: 2}}
	})
	metrics.RegisterClusterTopology(reg, []string{"sessions", "leases", "catalog", "events"}, func() metrics.ClusterTopology {
		return metrics.ClusterTopology{Peers: 2, Quorum: true, LeaseAge: time.Second, RouteRTT: map[string]time.Duration{"n2": time.Millisecond}}
	})
	families, err := reg.Gather()
	require.NoError(t, err)
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
		if f.GetType() == dto.MetricType_HISTOGRAM {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[f.GetName()+s] = true
			}
		}
	}
	return names
}

var seriesName = regexp.MustCompile(`\b(?:mcp|process|go)_[a-z0-9_]+\b`)

// scrapeHealth matches an expression on the up series Prometheus records
// for each target, which no node serves.
var scrapeHealth = regexp.MustCompile(`^up\{job=~"[^"]*mcp-actors[^"]*"\} == 0$`)

// checkExprs asserts that every series an expression names is exposed and,
// for the runtime's own, documented.
func checkExprs(t *testing.T, where string, exprs []string) {
	t.Helper()
	names := exposed(t)
	var docs strings.Builder
	for _, f := range []string{"../README.md", "../docs/cluster.md", "../docs/http.md", "../docs/operations.md"} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		docs.Write(b)
	}
	require.NotEmpty(t, exprs, where)
	for _, e := range exprs {
		found := seriesName.FindAllString(e, -1)
		if scrapeHealth.MatchString(e) {
			continue // Prometheus's own series of each scrape
		}
		assert.NotEmpty(t, found, "%s: %q names no series", where, e)
		for _, s := range found {
			assert.True(t, names[s], "%s: %s is not a metric a node exposes (%q)", where, s, e)
			base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(s, "_bucket"), "_sum"), "_count")
			if strings.HasPrefix(s, "mcp_") {
				assert.True(t, strings.Contains(docs.String(), base), "%s: %s is not documented", where, base)
			}
		}
	}
}

func TestAlertRules(t *testing.T) {
	b, err := os.ReadFile("../deploy/prometheus/alerts.yaml")
	require.NoError(t, err)
	var file struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	require.NoError(t, dec.Decode(&file))
	var exprs, alerts []string
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			require.NotEmpty(t, r.Alert, "group %s: a rule without a name", g.Name)
			assert.False(t, slices.Contains(alerts, r.Alert), "alert %s twice", r.Alert)
			alerts = append(alerts, r.Alert)
			assert.Contains(t, []string{"critical", "warning", "info"}, r.Labels["severity"], r.Alert)
			assert.NotEmpty(t, r.Annotations["summary"], r.Alert)
			assert.NotEmpty(t, r.Annotations["description"], r.Alert)
			if r.For != "" {
				_, err := time.ParseDuration(r.For)
				assert.NoError(t, err, r.Alert)
			}
			exprs = append(exprs, r.Expr)
		}
	}
	checkExprs(t, "alerts.yaml", exprs)
	ops, err := os.ReadFile("../docs/operations.md")
	require.NoError(t, err)
	for _, a := range alerts {
		assert.True(t, strings.Contains(string(ops), a), "docs/operations.md says what %s means", a)
	}
}

func TestDashboard(t *testing.T) {
	b, err := os.ReadFile("../deploy/grafana/mcp-actors.json")
	require.NoError(t, err)
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(b, &dash))
	var exprs []string
	for _, p := range dash.Panels {
		require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
		for _, q := range p.Targets {
			exprs = append(exprs, q.Expr)
		}
	}
	checkExprs(t, "mcp-actors.json", exprs)
}
