package interop_test

import (
	"bufio"
	"bytes"
	"context"
	json "encoding/json/v2"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/internal/serverbin"
	"github.com/mcp-actors/mcp-actors/internal/sse"
)

// Process-level faults of a three-node cluster: a node killed and started
// again (TestClusterRestartNode), a node cut off from the others' routes
// (TestClusterCutRoute). The client is the Go SDK client behind a
// round-robin balancer; what it was told succeeded must still hold after
// the fault.

const (
	// faultCall bounds every single client request of these tests (a tool
	// call, a list, a scrape): none may hang. A request for a session
	// whose node was just lost may wait, on the node that received it,
	// for that node's lease to lapse (faultLease), then be delivered.
	faultCall = 45 * time.Second
	// faultRecover bounds the wait for the cluster to serve a session again
	// after a fault: the lease lapses, JetStream elects new leaders, the
	// session is taken over.
	faultRecover = 2 * time.Minute
	// faultLease is the nodes' --lease-ttl. It is longer than a JetStream
	// leader election (NATS raft: 4 to 9 s): with a shorter lease, losing
	// the node that leads the lease bucket's stream makes every node's
	// lease lapse during the election, and every node gives up its
	// sessions (see the commit that added this file); that is not what
	// these tests test.
	faultLease = "15s"
	// isolatedAnswer bounds the answer of a node cut off from the others
	// for a session it does not own.
	isolatedAnswer = 10 * time.Second
)

// faultCluster is three `mcp-actors serve` processes (n1, n2, n3) joined
// by routes, each with its own --data-dir, so that a test can kill one and
// start it again with the same arguments: the same node ID, data dir and
// route address.
type faultCluster struct {
	t     *testing.T
	args  [][]string
	nodes []*httpServer
}

// startFaultCluster starts one node per argument list and waits until
// every node's /readyz says ready.
func startFaultCluster(t *testing.T, args [][]string) *faultCluster {
	t.Helper()
	return startFaultClusterOf(t, serverbin.Path(t), args)
}

// startFaultClusterOf is startFaultCluster with the binary bin (another
// release's: serverbin.AtCommit).
func startFaultClusterOf(t *testing.T, bin string, args [][]string) *faultCluster {
	t.Helper()
	c := &faultCluster{t: t, args: args}
	for _, a := range args {
		c.nodes = append(c.nodes, startBinary(t, bin, a...))
	}
	t.Cleanup(c.stopAll) // before each node's own stop
	ctx, cancel := context.WithTimeout(t.Context(), clusterReady)
	defer cancel()
	for _, n := range c.nodes {
		waitReady(t, ctx, n)
	}
	return c
}

// stopAll stops the cluster as an operator would: SIGTERM to every node
// still running, all at once; each must exit with status 0 within
// stopTimeout. One at a time, the last node left has no JetStream quorum,
// and its shutdown waits for a lease renewal that cannot succeed (up to
// half a lease: more than stopTimeout leaves with faultLease).
func (c *faultCluster) stopAll() {
	t := c.t
	var live []*httpServer
	for _, n := range c.nodes {
		select {
		case <-n.exited:
		default:
			live = append(live, n)
		}
	}
	for _, n := range live {
		assert.NoError(t, n.cmd.Process.Signal(syscall.SIGTERM), "sending SIGTERM")
	}
	deadline := time.Now().Add(stopTimeout)
	exited := func(n *httpServer) bool {
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
		select {
		case <-n.exited:
			return true
		case <-timer.C:
		}
		select { // exited as the deadline passed
		case <-n.exited:
			return true
		default:
			return false
		}
	}
	for _, n := range live {
		if exited(n) {
			assert.Equal(t, 0, n.cmd.ProcessState.ExitCode(), "exit status after SIGTERM (%s)", n.cmd.ProcessState)
		} else {
			_ = n.cmd.Process.Kill()
			<-n.exited
			assert.Fail(t, "a node did not exit within 15 s of SIGTERM; killed it", "%s", n.url)
		}
		n.killed.Store(true) // its own cleanup has nothing left to do
	}
}

// threeNodeArgs returns the serve arguments of three nodes routed to each
// other (nodeArgs), and their data directories.
func threeNodeArgs(t *testing.T) (args [][]string, dirs []string) {
	t.Helper()
	ports := freePorts(t, 3)
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
	}
	for i, p := range ports {
		dirs = append(dirs, t.TempDir())
		args = append(args, nodeArgs(i, dirs[i], fmt.Sprintf("127.0.0.1:%d", p), routes))
	}
	return args, dirs
}

// nodeArgs are node i's serve arguments: --node-id n<i+1>, its data dir,
// its route address, the routes it dials, the cluster secret, the lease.
// startServer puts a --data-dir of its own first; the later one wins.
func nodeArgs(i int, dataDir, listen string, routes []string) []string {
	return []string{"--node-id", fmt.Sprintf("n%d", i+1), "--data-dir", dataDir,
		"--cluster-listen", listen, "--routes", strings.Join(routes, ","),
		"--cluster-secret", "interop", "--lease-ttl", faultLease}
}

// restart starts node i again with its arguments, waits for its /readyz
// and returns it (its HTTP port is a new one).
func (c *faultCluster) restart(i int) *httpServer {
	c.t.Helper()
	n := startServer(c.t, c.args[i]...)
	c.nodes[i] = n
	ctx, cancel := context.WithTimeout(c.t.Context(), clusterReady)
	defer cancel()
	waitReady(c.t, ctx, n)
	return n
}

// waitAllReady waits until every node's /readyz answers 200.
func (c *faultCluster) waitAllReady() {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), clusterReady)
	defer cancel()
	for _, n := range c.nodes {
		waitReady(c.t, ctx, n)
	}
}

// hostOf is the host:port of node n's HTTP listener.
func hostOf(n *httpServer) string {
	u, _ := url.Parse(n.url)
	return u.Host
}

// faultRotation is a load balancer without sticky sessions: each HTTP
// request goes to the next node that is not marked down (as a
// health-checking balancer skips a node whose /readyz fails). The next
// request can be pinned to one node (to open a session there), a node
// can be replaced by its restarted process, and the POSTs each node
// answered with 2xx are counted.
type faultRotation struct {
	inner  http.RoundTripper
	mu     sync.Mutex
	hosts  []string
	down   []bool
	next   int
	pinned int            // the node the next request goes to; -1: none
	served map[string]int // host → POSTs answered 2xx
}

func newFaultRotation(inner http.RoundTripper, nodes []*httpServer) *faultRotation {
	r := &faultRotation{inner: inner, pinned: -1, served: map[string]int{}}
	for _, n := range nodes {
		r.hosts = append(r.hosts, hostOf(n))
		r.down = append(r.down, false)
	}
	return r
}

func (r *faultRotation) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	i := r.pinned
	r.pinned = -1
	if i < 0 {
		for range r.hosts {
			r.next = (r.next + 1) % len(r.hosts)
			if i = r.next; !r.down[i] {
				break
			}
		}
	}
	host := r.hosts[i]
	r.mu.Unlock()
	req = req.Clone(req.Context())
	req.URL.Host, req.Host = host, host
	resp, err := r.inner.RoundTrip(req)
	if err == nil && req.Method == http.MethodPost && resp.StatusCode/100 == 2 {
		r.mu.Lock()
		r.served[host]++
		r.mu.Unlock()
	}
	return resp, err
}

// pin sends the next request to node i.
func (r *faultRotation) pin(i int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pinned = i
}

// setDown takes node i out of the rotation (down) or puts it back.
func (r *faultRotation) setDown(i int, down bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down[i] = down
}

// replace puts node n, restarted, in place of node i and back in the
// rotation.
func (r *faultRotation) replace(i int, n *httpServer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hosts[i], r.down[i] = hostOf(n), false
}

// downs returns which nodes are out of the rotation.
func (r *faultRotation) downs() []bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.down)
}

// servedBy returns how many POSTs each node (by index) answered with 2xx.
func (r *faultRotation) servedBy() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]int, len(r.hosts))
	for i, h := range r.hosts {
		out[i] = r.served[h]
	}
	return out
}

// faultClient is one Go SDK client session behind its own faultRotation.
// Its elicitation handler accepts with the client's name; the URIs of the
// resources/updated notifications it gets are queued in updated.
type faultClient struct {
	t       *testing.T
	name    string
	rot     *faultRotation
	base    *http.Transport
	cs      *mcp.ClientSession
	updated chan string
	closed  bool
}

// connect opens a session whose initialize goes to node owner (which then
// owns it: its ID is "<node>.<random>"); later requests rotate over every
// node not marked down.
func (c *faultCluster) connect(name string, owner int) *faultClient {
	t := c.t
	t.Helper()
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.ResponseHeaderTimeout = faultCall // a backstop: no request waits for headers longer
	fc := &faultClient{t: t, name: name, base: base, rot: newFaultRotation(base, c.nodes), updated: make(chan string, 64)}
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case fc.updated <- req.Params.URI:
			default:
			}
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": name, "email": name + "@example.com"}}, nil
		},
	})
	// A node answers initialize 503 ("retry", with Retry-After) while it
	// cannot make a session durable: a moment after a partition heals its
	// storage may still be electing leaders. The client retries, as the
	// answer asks.
	var cs *mcp.ClientSession
	require.Eventually(t, func() bool {
		fc.rot.pin(owner)
		ctx, cancel := context.WithTimeout(t.Context(), faultCall)
		defer cancel()
		var err error
		cs, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.nodes[owner].url, HTTPClient: &http.Client{Transport: fc.rot}},
			&mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
		if err != nil && strings.Contains(err.Error(), http.StatusText(http.StatusServiceUnavailable)) {
			t.Logf("%s: connecting through n%d: %v; trying again", name, owner+1, err)
			return false
		}
		require.NoError(t, err, "%s: connecting through n%d", name, owner+1)
		return true
	}, faultRecover, 200*time.Millisecond, "%s: n%d kept refusing initialize with 503", name, owner+1)
	fc.cs = cs
	t.Cleanup(func() {
		if !fc.closed {
			_ = cs.Close()
		}
		base.CloseIdleConnections()
	})
	node, _, _ := strings.Cut(cs.ID(), ".")
	require.Equal(t, fmt.Sprintf("n%d", owner+1), node, "%s: the session ID %q names the node that opened it", name, cs.ID())
	return fc
}

// ctx is the context of one request: faultCall at most.
func (fc *faultClient) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(fc.t.Context(), faultCall)
}

// call calls a tool and returns its single text, or an error (a failed
// request, a tool error, an unexpected result).
func (fc *faultClient) call(name string, args map[string]any) (string, error) {
	ctx, cancel := fc.ctx()
	defer cancel()
	res, err := fc.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	var texts []string
	for _, c := range res.Content {
		if text, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, text.Text)
		}
	}
	if res.IsError || len(res.Content) != 1 || len(texts) != 1 {
		return "", fmt.Errorf("%s: a tool error or an unexpected result (isError %v): %q", name, res.IsError, texts)
	}
	return texts[0], nil
}

// echo calls test_echo and checks that the text comes back unchanged.
func (fc *faultClient) echo(text string) error {
	got, err := fc.call("test_echo", map[string]any{"text": text})
	if err == nil && got != text {
		err = fmt.Errorf("test_echo returned %q, want %q", got, text)
	}
	return err
}

// mustEcho requires an echo to succeed.
func (fc *faultClient) mustEcho(what string) {
	fc.t.Helper()
	require.NoError(fc.t, fc.echo(fc.name+" "+what), "%s: test_echo (%s)", fc.name, what)
}

// elicit runs test_elicitation: the server asks the client, the client's
// answer is POSTed (to the next node) and must reach the handler on the
// session's owner, whose result quotes it.
func (fc *faultClient) elicit() error {
	got, err := fc.call("test_elicitation", map[string]any{"message": "Who are you?"})
	if err != nil {
		return err
	}
	const prefix = "User response: action=accept, content="
	var content map[string]string
	if !strings.HasPrefix(got, prefix) || json.Unmarshal([]byte(strings.TrimPrefix(got, prefix)), &content) != nil ||
		content["username"] != fc.name || content["email"] != fc.name+"@example.com" || len(content) != 2 {
		return fmt.Errorf("test_elicitation returned %q, want the answer of %s", got, fc.name)
	}
	return nil
}

// eventually retries f every 200 ms until it succeeds, within
// faultRecover, logging each failure (what the client saw).
func (fc *faultClient) eventually(what string, f func() error) {
	fc.t.Helper()
	var failures int
	require.Eventually(fc.t, func() bool {
		err := f()
		if err != nil {
			failures++
			fc.t.Logf("%s: %s: %v", fc.name, what, err)
		}
		return err == nil
	}, faultRecover, 200*time.Millisecond, "%s: %s never succeeded", fc.name, what)
	if failures > 0 {
		fc.t.Logf("%s: %s succeeded after %d failed attempts", fc.name, what, failures)
	}
}

// acrossAll makes echo and elicitation requests until each of the nodes
// not marked down has answered at least two POSTs of this session more;
// every request must succeed.
func (fc *faultClient) acrossAll(what string) {
	fc.t.Helper()
	before := fc.rot.servedBy()
	down := fc.rot.downs()
	for i := 0; ; i++ {
		now := fc.rot.servedBy()
		done := true
		for n := range now {
			if !down[n] && now[n]-before[n] < 2 {
				done = false
			}
		}
		if done {
			return
		}
		require.Less(fc.t, i, 30, "%s: %s: the nodes answered %v POSTs of the session (from %v)", fc.name, what, now, before)
		if i%3 == 2 {
			require.NoError(fc.t, fc.elicit(), "%s: %s: elicitation #%d", fc.name, what, i)
		} else {
			fc.mustEcho(fmt.Sprintf("%s #%d", what, i))
		}
	}
}

// touched calls test_touch_watched until the client gets
// notifications/resources/updated for it: the session's subscription
// holds, wherever the session and its GET stream are.
func (fc *faultClient) touched(what string) {
	fc.t.Helper()
	fc.eventually(what+": resources/updated after test_touch_watched", func() error {
		for len(fc.updated) > 0 {
			<-fc.updated
		}
		if got, err := fc.call("test_touch_watched", nil); err != nil || got != "touched" {
			return fmt.Errorf("test_touch_watched: %q, %v", got, err)
		}
		select {
		case uri := <-fc.updated:
			if uri != "test://watched-resource" {
				return fmt.Errorf("resources/updated for %q", uri)
			}
			return nil
		case <-time.After(2 * time.Second):
			return errors.New("no resources/updated within 2 s")
		}
	})
}

// subscribe subscribes the session to test://watched-resource.
func (fc *faultClient) subscribe() {
	fc.t.Helper()
	ctx, cancel := fc.ctx()
	defer cancel()
	require.NoError(fc.t, fc.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://watched-resource"}), "%s: subscribing", fc.name)
}

// hasDynamic reports whether tools/list of the session — answered by its
// owner, from that node's view of the replicated catalog — lists
// test_dynamic.
func (fc *faultClient) hasDynamic() (bool, error) {
	ctx, cancel := fc.ctx()
	defer cancel()
	res, err := fc.cs.ListTools(ctx, nil)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(res.Tools, func(t *mcp.Tool) bool { return t.Name == "test_dynamic" }), nil
}

// dynamicIs waits until the session's owner lists test_dynamic exactly
// when want (catalog changes reach every node through its watch), and
// then, when it is listed, calls it.
func (fc *faultClient) dynamicIs(what string, want bool) {
	fc.t.Helper()
	fc.eventually(fmt.Sprintf("%s: test_dynamic listed = %v", what, want), func() error {
		got, err := fc.hasDynamic()
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("tools/list lists test_dynamic: %v", got)
		}
		return nil
	})
	if want {
		got, err := fc.call("test_dynamic", nil)
		require.NoError(fc.t, err, "%s: %s: test_dynamic", fc.name, what)
		require.Equal(fc.t, "dynamic", got, "%s: %s: test_dynamic", fc.name, what)
	}
}

// toggle calls test_toggle_tool until one call is acknowledged and returns
// whether test_dynamic is on after it. A call that failed may or may not
// have been applied, but each acknowledged answer says the state after it:
// the last acknowledged one is what must hold afterwards.
func (fc *faultClient) toggle(what string) bool {
	fc.t.Helper()
	var on bool
	fc.eventually(what+": test_toggle_tool", func() error {
		got, err := fc.call("test_toggle_tool", nil)
		if err != nil {
			return err
		}
		switch got {
		case "added":
			on = true
		case "removed":
			on = false
		default:
			return fmt.Errorf("test_toggle_tool returned %q", got)
		}
		return nil
	})
	return on
}

// close ends the session (DELETE, through the next node): it must work.
func (fc *faultClient) close() {
	fc.t.Helper()
	fc.closed = true
	assert.NoError(fc.t, fc.cs.Close(), "%s: closing the session", fc.name)
}

// scrape reads node n's /metrics and returns the value of series (a name
// with its labels as exposed, e.g. `mcp_cluster_takeovers_total`).
func scrape(t *testing.T, n *httpServer, series string) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), faultCall)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+hostOf(n)+"/metrics", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "scraping %s", n.url)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "scraping %s", n.url)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if ok && name == series {
			v, err := strconv.ParseFloat(value, 64)
			require.NoError(t, err, "%s on %s", series, n.url)
			return v
		}
	}
	require.NoError(t, sc.Err())
	require.FailNow(t, "no such series", "%s on %s", series, n.url)
	return 0
}

const (
	takeoversMetric = "mcp_cluster_takeovers_total"
	routedOutMetric = `mcp_cluster_routed_messages_total{direction="out"}`
)

// TestClusterRestartNode kills -9 the node that owns a session and starts
// it again with the same --node-id, --data-dir and --cluster-listen.
//
// What the client sees: while the owner is dead (and out of the
// balancer's rotation), the session's next request is held by the
// survivor that received it until the owner's lease lapses (at most
// --lease-ttl after the kill); then that survivor takes the session over
// from its durable state and answers. (Had the lease not lapsed within a
// lease and a half, the client would get HTTP 503, "retry", and retry.)
// From then on everything works: tool calls, an elicitation whose answer
// is POSTed to another node than the call, the resource subscription, a
// catalog change. Once the node is back (its /readyz answers 200) and in
// the rotation, the session works through all three nodes: the restarted
// node does not take it back (it takes nothing over, and routes the
// session's messages to the survivor that owns it now), and a new session
// opened on it works across the nodes. Nothing acknowledged is lost: the
// session, its subscription, the catalog change acknowledged before the
// crash and the one acknowledged while the node was down, which the
// restarted node serves.
func TestClusterRestartNode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster and restarts a node")
	}
	args, _ := threeNodeArgs(t)
	c := startFaultCluster(t, args)

	const owner = 0 // n1
	a := c.connect("alice", owner)
	a.subscribe()
	a.acrossAll("before the crash")
	require.True(t, a.toggle("before the crash"), "the first toggle adds test_dynamic")
	a.touched("before the crash")

	// Kill -9 the owner; the balancer stops sending to it.
	a.rot.setDown(owner, true)
	c.nodes[owner].kill()
	killed := time.Now()

	// Until its lease lapses the owner is only late: the request waits
	// (or fails with 503 and is retried).
	a.eventually("the first request after the crash", func() error { return a.echo("after the crash") })
	t.Logf("the session answered again %s after its node was killed", time.Since(killed).Round(time.Millisecond))
	require.NoError(t, a.elicit(), "an elicitation round-trip after the takeover")
	a.acrossAll("after the takeover")
	a.touched("after the takeover")
	on := a.toggle("while n1 is down")
	a.dynamicIs("while n1 is down", on)
	survivors := scrape(t, c.nodes[1], takeoversMetric) + scrape(t, c.nodes[2], takeoversMetric)
	require.GreaterOrEqual(t, survivors, 1.0, "a survivor took the session over")

	// Start n1 again: same node ID, data dir, route address.
	restarted := c.restart(owner)
	a.rot.replace(owner, restarted)
	a.acrossAll("after the restart")
	for i := range 3 {
		require.NoError(t, a.elicit(), "elicitation #%d after the restart", i)
	}
	a.touched("after the restart")
	a.dynamicIs("after the restart", on)

	// The restarted node did not take the session back: it took nothing
	// over, it routed the session's messages to the owner, and the
	// survivors took it over no more often than before.
	assert.Zero(t, scrape(t, restarted, takeoversMetric), "takeovers on the restarted n1")
	assert.Positive(t, scrape(t, restarted, routedOutMetric), "messages the restarted n1 routed to the session's owner")
	assert.Equal(t, survivors, scrape(t, c.nodes[1], takeoversMetric)+scrape(t, c.nodes[2], takeoversMetric),
		"takeovers on the survivors since the restart")

	// A new session opened on the restarted node works across the nodes,
	// and its node serves the catalog as acknowledged.
	b := c.connect("bob", owner)
	b.subscribe()
	b.acrossAll("a new session on the restarted n1")
	b.dynamicIs("a new session on the restarted n1", on)
	b.touched("a new session on the restarted n1")
	assert.Zero(t, scrape(t, restarted, takeoversMetric), "takeovers on the restarted n1")

	b.close()
	a.close()
}

// routeProxy forwards TCP connections from a loopback address to one
// node's route port, until Cut: then it closes every live connection and
// refuses (accepts and closes at once) new ones, until Restore.
//
// It listens on, and dials from, 127.0.0.2 while the nodes listen on
// 127.0.0.1: a NATS server builds the route URL it gossips for a peer from
// the address it sees that peer on and the peer's route port, so the URLs
// gossiped here (127.0.0.2:<route port>) lead nowhere, and every route
// goes through a proxy.
type routeProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]struct{}
	live   int // forwarded connections open
	wg     sync.WaitGroup
	closed bool
}

// proxyIP is the loopback address the route proxies use.
const proxyIP = "127.0.0.2"

// startRouteProxy forwards proxyIP:<random port> to target until the end
// of t.
func startRouteProxy(t *testing.T, target string) *routeProxy {
	t.Helper()
	ln, err := net.Listen("tcp", proxyIP+":0")
	require.NoError(t, err)
	p := &routeProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *routeProxy) addr() string { return p.ln.Addr().String() }

func (p *routeProxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut || p.closed {
			p.mu.Unlock()
			_ = in.Close()
			continue
		}
		p.conns[in] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.forward(in)
	}
}

// forward dials the target from proxyIP and copies both ways until either
// side closes (or Cut closes both).
func (p *routeProxy) forward(in net.Conn) {
	defer p.wg.Done()
	defer p.drop(in)
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(proxyIP)}}
	out, err := d.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer p.drop(out)
	p.mu.Lock()
	if p.cut || p.closed {
		p.mu.Unlock()
		return
	}
	p.conns[out] = struct{}{}
	p.live++
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.live--
		p.mu.Unlock()
	}()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		// One side ended: end both, as a crashed or cut path would.
		_ = dst.Close()
		_ = src.Close()
		done <- struct{}{}
	}
	go pipe(out, in)
	go pipe(in, out)
	<-done
	<-done
}

// drop closes c and forgets it.
func (p *routeProxy) drop(c net.Conn) {
	_ = c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// Cut closes every connection through the proxy and refuses new ones.
func (p *routeProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		_ = c.Close()
	}
}

// Restore lets new connections through again.
func (p *routeProxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

// liveConns is how many connections the proxy forwards now.
func (p *routeProxy) liveConns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.live
}

// close stops the proxy and waits for its goroutines.
func (p *routeProxy) close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	_ = p.ln.Close()
	p.wg.Wait()
}

// rawCall POSTs one tools/call of test_echo for session id straight to
// node n (no balancer), bounded by timeout, and returns the HTTP status
// and the body.
func rawCall(t *testing.T, n *httpServer, id string, timeout time.Duration) (int, string, error) {
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	return postJSON(ctx, n, id, `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"test_echo","arguments":{"text":"isolated"}}}`)
}

// postJSON posts one JSON-RPC message of session id to node n, on a
// connection of its own, bounded by ctx and faultCall, and returns the
// status and body.
func postJSON(ctx context.Context, n *httpServer, id, body string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, faultCall)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	req.Header.Set("Mcp-Session-Id", id)
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	resp, err := (&http.Client{Transport: base}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// toolText returns the text of the single-text result of a tools/call
// answer (a JSON body, or the SSE event that carries it).
func toolText(body string) (string, error) {
	data := body
	for _, ev := range sse.Parse([]byte(body)) {
		if bytes.Contains(ev.Data, []byte(`"result"`)) {
			data = string(ev.Data)
		}
	}
	var res struct {
		Result *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(data), &res); err != nil {
		return "", fmt.Errorf("%w: %.300s", err, body)
	}
	if res.Result == nil || res.Result.IsError || len(res.Result.Content) != 1 {
		return "", fmt.Errorf("not a single-text result: %.300s", body)
	}
	return res.Result.Content[0].Text, nil
}

// readyz returns node n's /readyz status and body.
func readyz(t *testing.T, n *httpServer) (int, string) {
	ctx, cancel := context.WithTimeout(t.Context(), faultCall)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+hostOf(n)+"/readyz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestClusterCutRoute runs three nodes whose NATS routes all pass through
// in-test TCP proxies, one per ordered pair of nodes (node a dials node b
// through proxy[a][b]), cuts every route to and from n3, and restores them
// once n3's sessions have moved: the cut lasts longer than a lease, so n3
// gives its sessions up and a healthy node takes them over.
//
// What the client sees, its balancer taking n3 out of the rotation as
// soon as it is cut (n3's /readyz answers 503, "no route to another
// node"):
//   - a session owned by a healthy node (alice, on n1) goes on through n1
//     and n2 without a single failed request;
//   - a session owned by n3 (bob): its requests wait on the healthy node
//     that received them until n3's lease lapses (or fail with HTTP 503,
//     retry), then that node takes bob over from its durable state (its
//     subscription is kept) and everything works;
//   - a request sent to n3 itself for a session it does not own is
//     answered within isolatedAnswer with HTTP 503 or a JSON-RPC error:
//     nothing hangs;
//   - a catalog change acknowledged during the cut is served by n3 once
//     the routes are back.
//
// Once the routes are restored and every node's /readyz answers 200 again,
// both sessions and a new session opened on n3 work through all three
// nodes, nothing moved again, and n3 took nothing over.
func TestClusterCutRoute(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster and cuts its routes")
	}
	if ln, err := net.Listen("tcp", proxyIP+":0"); err != nil {
		t.Skipf("the route proxies need %s on loopback: %v", proxyIP, err)
	} else {
		require.NoError(t, ln.Close())
	}
	ports := freePorts(t, 3)
	// proxies[a][b] carries the routes node a dials to node b.
	proxies := make([][]*routeProxy, 3)
	for a := range 3 {
		proxies[a] = make([]*routeProxy, 3)
		for b := range 3 {
			if a != b {
				proxies[a][b] = startRouteProxy(t, fmt.Sprintf("127.0.0.1:%d", ports[b]))
			}
		}
	}
	var args [][]string
	for a := range 3 {
		var routes []string
		for b := range 3 {
			if a != b {
				routes = append(routes, "nats-route://"+proxies[a][b].addr())
			}
		}
		args = append(args, nodeArgs(a, t.TempDir(), fmt.Sprintf("127.0.0.1:%d", ports[a]), routes))
	}
	c := startFaultCluster(t, args)
	// Every pair of nodes is joined through its proxies.
	for a := range 3 {
		for b := a + 1; b < 3; b++ {
			require.Positive(t, proxies[a][b].liveConns()+proxies[b][a].liveConns(), "routes between n%d and n%d", a+1, b+1)
		}
	}

	const isolated = 2 // n3
	alice := c.connect("alice", 0)
	bob := c.connect("bob", isolated)
	for _, fc := range []*faultClient{alice, bob} {
		fc.subscribe()
		fc.acrossAll("before the cut")
	}
	require.True(t, alice.toggle("before the cut"), "the first toggle adds test_dynamic")

	// Cut every route to and from n3; the balancer takes n3 out.
	cut := func(cut bool) {
		for other := range 3 {
			if other == isolated {
				continue
			}
			for _, p := range []*routeProxy{proxies[isolated][other], proxies[other][isolated]} {
				if cut {
					p.Cut()
				} else {
					p.Restore()
				}
			}
		}
	}
	for _, fc := range []*faultClient{alice, bob} {
		fc.rot.setDown(isolated, true)
	}
	cut(true)
	require.Eventually(t, func() bool {
		code, _ := readyz(t, c.nodes[isolated])
		return code == http.StatusServiceUnavailable
	}, faultRecover, 100*time.Millisecond, "n3 still ready with its routes cut")
	code, why := readyz(t, c.nodes[isolated])
	t.Logf("n3 cut off: /readyz %d %s", code, why)

	// alice, owned by healthy n1, works through n1 and n2 throughout.
	alice.acrossAll("during the cut")
	// A request to n3 for alice: a clear refusal, no hang.
	start := time.Now()
	status, body, err := rawCall(t, c.nodes[isolated], alice.cs.ID(), isolatedAnswer)
	t.Logf("n3 answered a request for alice in %s: %d %s (%v)", time.Since(start), status, strings.TrimSpace(body), err)
	assert.NoError(t, err, "a request to n3 for a session it does not own must be answered, not hang")
	if err != nil {
		// reported above
	} else if status == http.StatusOK {
		assert.Contains(t, body, `"error"`, "n3 answered 200 for a session it cannot reach: it must be a JSON-RPC error")
	} else {
		assert.Equal(t, http.StatusServiceUnavailable, status, "n3's answer for a session it cannot reach: %s", body)
	}

	// bob, owned by n3: transient failures until n3's lease lapses, then a
	// healthy node takes it over, subscription included.
	bob.eventually("bob's first request after the cut", func() error { return bob.echo("after the cut") })
	bob.acrossAll("during the cut")
	bob.touched("during the cut")
	takeovers := scrape(t, c.nodes[0], takeoversMetric) + scrape(t, c.nodes[1], takeoversMetric)
	require.GreaterOrEqual(t, takeovers, 1.0, "a healthy node took bob over")
	on := alice.toggle("during the cut")
	alice.dynamicIs("during the cut", on)
	alice.acrossAll("during the cut, after bob moved")

	// Restore the routes; wait until every node is ready again.
	cut(false)
	c.waitAllReady()
	for _, fc := range []*faultClient{alice, bob} {
		fc.rot.setDown(isolated, false)
	}
	for _, fc := range []*faultClient{alice, bob} {
		fc.acrossAll("after the cut")
		fc.touched("after the cut")
		fc.dynamicIs("after the cut", on)
	}
	require.NoError(t, bob.elicit(), "bob: an elicitation after the cut")
	assert.Equal(t, takeovers, scrape(t, c.nodes[0], takeoversMetric)+scrape(t, c.nodes[1], takeoversMetric),
		"takeovers on n1 and n2 since the routes came back")
	assert.Zero(t, scrape(t, c.nodes[isolated], takeoversMetric), "takeovers on n3")

	// A new session on n3 works across the nodes; n3 serves the catalog
	// change acknowledged while it was cut off.
	carol := c.connect("carol", isolated)
	carol.subscribe()
	carol.acrossAll("a new session on n3")
	carol.dynamicIs("a new session on n3", on)
	carol.touched("a new session on n3")

	carol.close()
	bob.close()
	alice.close()
}
