package interop_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clusterReady bounds the wait for a new three-node cluster to be ready: its
// JetStream elects a leader before the replicated buckets can be made.
const clusterReady = 90 * time.Second

// startCluster runs three `mcp-actors serve` processes joined by
// --routes (each listing all three, itself included) and waits until
// every node's /readyz says ready. The routes name the nodes by host name
// (localhost), as a deployment names them by DNS name; each node listens
// on an address (127.0.0.1).
func startCluster(t *testing.T, extra ...string) []*httpServer {
	t.Helper()
	var routes, names []string
	for _, p := range freePorts(t, 3) {
		routes = append(routes, fmt.Sprintf("127.0.0.1:%d", p))
		names = append(names, fmt.Sprintf("localhost:%d", p))
	}
	all := "nats-route://" + strings.Join(names, ",nats-route://")
	var nodes []*httpServer
	for i, r := range routes {
		args := append([]string{"--node-id", fmt.Sprintf("n%d", i+1), "--cluster-listen", r, "--routes", all,
			"--cluster-secret", "interop"}, extra...)
		nodes = append(nodes, startServer(t, args...))
	}
	ctx, cancel := context.WithTimeout(t.Context(), clusterReady)
	defer cancel()
	for _, n := range nodes {
		waitReady(t, ctx, n)
	}
	return nodes
}

// waitReady polls a node's /readyz (real I/O) until it answers 200.
func waitReady(t *testing.T, ctx context.Context, n *httpServer) {
	t.Helper()
	u, err := url.Parse(n.url)
	require.NoError(t, err)
	ready := "http://" + u.Host + "/readyz"
	require.Eventually(t, func() bool {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ready, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, clusterReady, 100*time.Millisecond, "node %s never became ready:\n%s", n.url, n.stderr)
}

// roundRobin sends each HTTP request (POST, GET, DELETE) to the next node
// in turn, as a load balancer without sticky sessions would.
type roundRobin struct {
	inner http.RoundTripper
	hosts []string
	next  atomic.Uint64
	down  sync.Map // host → struct{}: skipped
}

// markDown takes node n out of the rotation.
func (rr *roundRobin) markDown(n *httpServer) {
	u, _ := url.Parse(n.url)
	rr.down.Store(u.Host, struct{}{})
}

func newRoundRobin(inner http.RoundTripper, nodes []*httpServer) *roundRobin {
	rr := &roundRobin{inner: inner}
	for _, n := range nodes {
		u, _ := url.Parse(n.url)
		rr.hosts = append(rr.hosts, u.Host)
	}
	return rr
}

func (rr *roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	var host string
	for range len(rr.hosts) { // skip the nodes marked down, as a health-checking balancer would
		host = rr.hosts[rr.next.Add(1)%uint64(len(rr.hosts))]
		if _, down := rr.down.Load(host); !down {
			break
		}
	}
	req = req.Clone(req.Context())
	req.URL.Host, req.Host = host, host
	return rr.inner.RoundTrip(req)
}

// TestClusterReferenceTools runs the reference cases against three
// `mcp-actors serve` processes joined into one cluster, the SDK client's
// every request going to the next node: a session opened on one node is
// called on another, and the answers to elicitation, sampling and roots
// requests arrive on a third.
func TestClusterReferenceTools(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	nodes := startCluster(t)
	runClusterReferenceCases(t, nodes)
	assertClusterSignals(t, nodes)
}

// assertClusterSignals checks the cluster's signals after traffic that
// crossed nodes: every routed message's hop is timed (so the mean hop is
// hop seconds ÷ hops), each node reaches the storage's quorum, its lease
// was renewed within its TTL (15 s), and it knows its routes' round trip
// to both others.
func assertClusterSignals(t *testing.T, nodes []*httpServer) {
	t.Helper()
	var hops, hopSeconds float64
	for i, n := range nodes { // node i is n<i+1> (startCluster)
		hops += scrape(t, n, "mcp_cluster_hops_total")
		hopSeconds += scrape(t, n, "mcp_cluster_hop_seconds_total")
		assert.Equal(t, 1.0, scrape(t, n, "mcp_cluster_storage_quorum"), n.url)
		age := scrape(t, n, "mcp_cluster_lease_age_seconds")
		assert.True(t, age >= 0 && age < 15, "%s: lease age %v s", n.url, age)
		for j := range nodes {
			if j != i {
				peer := fmt.Sprintf("n%d", j+1)
				assert.GreaterOrEqual(t, scrape(t, n, `mcp_cluster_route_rtt_seconds{peer="`+peer+`"}`), 0.0, "%s: route to %s", n.url, peer)
			}
		}
	}
	assert.Positive(t, hops, "routed messages are timed")
	assert.Positive(t, hopSeconds)
}

// runClusterReferenceCases runs the reference cases, one subtest each,
// against nodes: every request of each SDK client session goes to the
// next node (roundRobin).
func runClusterReferenceCases(t *testing.T, nodes []*httpServer) {
	t.Helper()
	start := func(t *testing.T, opts *mcp.ClientOptions, roots ...*mcp.Root) *peer {
		t.Helper()
		p, _ := connectHTTP(t, nodes[0], func(rt http.RoundTripper) http.RoundTripper {
			return newRoundRobin(rt, nodes)
		}, opts, roots...)
		return p
	}
	for _, tc := range referenceCases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, start) })
	}
}

// TestClusterOwnerLoss kills the node that owns a session in the middle
// of it: once the node's lease has lapsed, the session goes on on another
// node, from its durable state (its resource subscription is kept), and
// the client's GET stream moves with it.
func TestClusterOwnerLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	nodes := startCluster(t)
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	rr := newRoundRobin(base, nodes)
	updated := make(chan string, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "owner-loss", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case updated <- req.Params.URI:
			default:
			}
		},
	})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: nodes[0].url, HTTPClient: &http.Client{Transport: rr}},
		&mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	require.NoError(t, err)
	defer cs.Close()
	require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://watched-resource"}))
	echo := func() error { return stillHere(ctx, cs) }
	require.NoError(t, echo())

	owner := nodes[nodeOf(t, nodes, cs.ID())]
	rr.markDown(owner)
	owner.kill()

	// Until the lease lapses the session's node is only late; then the
	// next message takes the session over.
	require.Eventually(t, func() bool {
		err := echo()
		if err != nil {
			t.Logf("echo: %v", err)
		}
		return err == nil
	}, time.Minute, 200*time.Millisecond,
		"the session never went on after its node died")

	// Its subscription survived: a change reaches the client, on a GET
	// stream the SDK has reopened (the old one ended with its node).
	require.Eventually(t, func() bool {
		if err := echo(); err != nil {
			return false
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_touch_watched"})
		if err != nil || res.IsError {
			return false
		}
		select {
		case uri := <-updated:
			return uri == "test://watched-resource"
		case <-time.After(2 * time.Second):
			return false
		}
	}, time.Minute, 100*time.Millisecond, "no resources/updated after the takeover")
}

// startProxy serves a round-robin reverse proxy over nodes on a loopback
// port, as a load balancer without sticky sessions, and returns its MCP
// URL. Event streams pass through as they come.
func startProxy(t *testing.T, nodes []*httpServer) string {
	t.Helper()
	url, _ := startBalancer(t, nodes)
	return url
}

// startBalancer is startProxy, and returns as well a function that takes
// node i out of the rotation, as a health-checking balancer would.
func startBalancer(t *testing.T, nodes []*httpServer) (string, func(i int)) {
	t.Helper()
	var targets []*url.URL
	for _, n := range nodes {
		u, err := url.Parse(n.url)
		require.NoError(t, err)
		targets = append(targets, u)
	}
	var next atomic.Uint64
	var down sync.Map // index → struct{}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			var target *url.URL
			for range targets {
				i := int(next.Add(1) % uint64(len(targets)))
				if target = targets[i]; func() bool { _, d := down.Load(i); return !d }() {
					break
				}
			}
			pr.SetURL(target)
			pr.Out.URL.Path = target.Path
			pr.Out.Host = pr.In.Host // a loopback host: every node accepts it
		},
		FlushInterval: -1,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	// The request body is read whole first: ReverseProxy streams it to the
	// node, and net/http's HTTP/1 server discards what is left of it once
	// the response's head is flushed (no full duplex); the proxy's
	// transport, still reading the body to its end, would fail and cut
	// the node's event stream off.
	buffered := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		proxy.ServeHTTP(w, r)
	})
	hs := &http.Server{Handler: buffered, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "http://" + ln.Addr().String() + "/mcp", func(i int) { down.Store(i, struct{}{}) }
}

// TestClusterTypeScriptClient runs the TypeScript SDK client's checks
// through a round-robin proxy over three nodes.
func TestClusterTypeScriptClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	nodeJS(t, "@modelcontextprotocol", "sdk", "package.json")
	nodes := startCluster(t)
	runTSClient(t, nodes[0], startProxy(t, nodes))
}

// TestClusterTypeScriptFailover runs the TypeScript SDK client's checks
// through the round-robin proxy over three nodes, and in the middle kills
// the node that owns its session (the proxy stops sending it requests, as
// a health-checking balancer would). What the client sees: its next
// request waits for the lost node's lease to lapse, and is answered by the
// node that took the session over — or, when the storage is still
// electing leaders (seen once, with tests/faults loading the 2 cores), is
// answered with an error that asks for it again, and the client sends it
// again; an elicitation round trip works; the standalone stream, if the
// lost node held it, breaks and is reopened.
func TestClusterTypeScriptFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	nodeJS(t, "@modelcontextprotocol", "sdk", "package.json")
	nodes := startCluster(t)
	proxy, markDown := startBalancer(t, nodes)
	var killed atomic.Int64
	killed.Store(-1)
	kill := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _ := io.ReadAll(r.Body)
		owner := nodeOf(t, nodes, string(id))
		markDown(owner)
		nodes[owner].kill()
		killed.Store(int64(owner))
		_, _ = io.WriteString(w, "killed "+nodes[owner].url)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := &http.Server{Handler: kill, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })

	runTSClientWith(t, func() *httpServer { return nodes[(killed.Load()+1)%3] }, proxy,
		[]string{"MCP_INTEROP_FAILOVER=http://" + ln.Addr().String() + "/kill"}, "failover")
	assert.NotEqual(t, int64(-1), killed.Load(), "the client never asked for the kill")
}

// TestClusterConformance runs the official conformance suite through a
// round-robin proxy over three nodes: every request of its sessions lands
// on the next node.
func TestClusterConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	node, root := nodeJS(t, "@modelcontextprotocol", "conformance", "dist", "index.js")
	nodes := startCluster(t)
	proxied := startProxy(t, nodes)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	out := t.TempDir()
	cmd := exec.CommandContext(ctx, node, filepath.Join(root, "conformance", "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"),
		"server", "--url", proxied, "--suite", "all", "-o", out)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	summary := stdout.String()
	if i := strings.Index(summary, "=== SUMMARY ==="); i >= 0 {
		summary = summary[i:]
	}
	total := regexp.MustCompile(`Total: (\d+) passed, (\d+) failed`).FindStringSubmatch(summary)
	require.NotNil(t, total, "the suite reported no total (%v):\n%s", err, stdout.String())
	assert.Equal(t, "0", total[2], "failed checks:\n%s", summary)
	assert.Equal(t, "47", total[1], "passed checks:\n%s", summary)
	t.Logf("conformance through the round-robin proxy: %s", total[0])
}

// stillHere calls test_echo on session cs: an error unless it answers.
func stillHere(ctx context.Context, cs *mcp.ClientSession) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_echo", Arguments: map[string]any{"text": "still here"}})
	if err != nil {
		return err
	}
	if res.IsError || len(res.Content) == 0 {
		return fmt.Errorf("bad result %+v", res)
	}
	return nil
}
