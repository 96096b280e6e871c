package interop_test

import (
	"bytes"
	"context"
	json "encoding/json/v2"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/internal/loopback"
	"github.com/mcp-actors/mcp-actors/internal/serverbin"
)

// The external NATS cluster's client credentials: every mcp-actors node
// carries them in its --nats-url.
const (
	natsUser     = "interop"
	natsPassword = "s3cret-nats-pw"
	// natsStartTimeout bounds the wait for a nats-server to answer its
	// health check and route to the others.
	natsStartTimeout = 30 * time.Second
)

// natsServerBinary builds the nats-server of the module's go.mod
// (github.com/nats-io/nats-server/v2), once per test binary, and returns
// its path. It is infrastructure, not code under test: no -race.
func natsServerBinary(t *testing.T) string {
	t.Helper()
	return serverbin.Build(t, "nats-server", "github.com/nats-io/nats-server/v2", false)
}

// lockedBuffer collects a process's output.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// natsServer is one nats-server process of the external cluster.
type natsServer struct {
	name    string
	client  string // nats://user:password@127.0.0.1:port
	monitor string // http://127.0.0.1:port
	out     *lockedBuffer
}

// freePorts returns n distinct loopback ports free right now, outside the
// ephemeral range (another test's connection cannot take one meanwhile, or
// while a node restarts on it).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports, err := loopback.Ports(n)
	require.NoError(t, err)
	return ports
}

// startNATSCluster runs three nats-server processes routed into one
// cluster, each with JetStream (its own store under t's temp dir) and a
// user and password for clients, and waits until each is healthy and
// routed to the other two. They are killed at the end of t, after the
// mcp-actors nodes started later (t.Cleanup runs last-in first-out).
func startNATSCluster(t *testing.T, hc *http.Client) []*natsServer {
	t.Helper()
	bin := natsServerBinary(t)
	ports := freePorts(t, 9)
	client, route, monitor := ports[0:3], ports[3:6], ports[6:9]
	var servers []*natsServer
	for i := range 3 {
		var routes []string
		for j := range 3 {
			if j != i {
				routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", route[j]))
			}
		}
		s := &natsServer{
			name:    fmt.Sprintf("ext-%d", i+1),
			client:  fmt.Sprintf("nats://%s:%s@127.0.0.1:%d", natsUser, natsPassword, client[i]),
			monitor: fmt.Sprintf("http://127.0.0.1:%d", monitor[i]),
			out:     &lockedBuffer{},
		}
		cmd := exec.Command(bin,
			"--server_name", s.name, "-a", "127.0.0.1", "-p", fmt.Sprint(client[i]), "-m", fmt.Sprint(monitor[i]),
			"-js", "-sd", t.TempDir(),
			"--cluster_name", "interop-ext", "--cluster", fmt.Sprintf("nats://127.0.0.1:%d", route[i]),
			"--routes", strings.Join(routes, ","),
			"--user", natsUser, "--pass", natsPassword)
		cmd.Stdout, cmd.Stderr = s.out, s.out
		require.NoError(t, cmd.Start(), "starting %s", s.name)
		exited := make(chan struct{})
		go func() {
			_ = cmd.Wait()
			close(exited)
		}()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-exited
			if t.Failed() {
				t.Logf("%s output:\n%s", s.name, s.out)
			}
		})
		servers = append(servers, s)
	}
	for _, s := range servers {
		require.Eventually(t, func() bool {
			var health struct {
				Status string `json:"status"`
			}
			if getJSON(t.Context(), hc, s.monitor+"/healthz?js-enabled-only=true", &health) != nil || health.Status != "ok" {
				return false
			}
			var routez struct {
				Routes []struct {
					RemoteName string `json:"remote_name"`
				} `json:"routes"`
			}
			if getJSON(t.Context(), hc, s.monitor+"/routez", &routez) != nil {
				return false
			}
			peers := map[string]bool{}
			for _, r := range routez.Routes {
				peers[r.RemoteName] = true
			}
			return len(peers) == 2
		}, natsStartTimeout, 100*time.Millisecond, "%s never became healthy and routed to the others:\n%s", s.name, s.out)
	}
	return servers
}

// getJSON GETs u and decodes its JSON body into v; a status other than
// 200 is an error.
func getJSON(ctx context.Context, hc *http.Client, u string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.UnmarshalRead(resp.Body, v)
}

// TestClusterExternalNATS runs three `mcp-actors serve` nodes on an
// existing NATS deployment (--nats-url): three nats-server processes built
// from the go.mod's module, routed into one JetStream cluster, clients
// authenticated by the user and password in the URL. The nodes start no
// NATS server of their own: their data directories stay empty and their
// connections are the external servers' clients. The reference cases pass
// through a round-robin over the nodes; then the node that owns a session
// is killed, and the session goes on on another node (a tool call, an
// elicitation round-trip), its directory entry in the external JetStream
// moving to the new owner.
func TestClusterExternalNATS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node NATS cluster and three mcp-actors nodes")
	}
	monitorTransport := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(monitorTransport.CloseIdleConnections)
	hc := &http.Client{Transport: monitorTransport}

	servers := startNATSCluster(t, hc)
	var urls []string
	for _, s := range servers {
		urls = append(urls, s.client)
	}
	const clusterName = "ext"
	var nodes []*httpServer
	var dataDirs []string
	// Every node seals requestState with the same key (no route secret
	// to derive one from on external NATS).
	keyFile := filepath.Join(t.TempDir(), "state.key")
	require.NoError(t, os.WriteFile(keyFile, bytes.Repeat([]byte("ab"), 32), 0o600))
	for i := range 3 {
		dir := t.TempDir()
		dataDirs = append(dataDirs, dir)
		// startServer gives --data-dir a directory of its own; the later
		// flag wins, so that this test can look into it.
		nodes = append(nodes, startServer(t, "--node-id", fmt.Sprintf("x%d", i+1), "--nats-url", strings.Join(urls, ","),
			"--cluster-name", clusterName, "--replicas", "3", "--lease-ttl", "1s", "--data-dir", dir, "--state-key-file", keyFile))
	}
	ctx, cancel := context.WithTimeout(t.Context(), clusterReady)
	for _, n := range nodes {
		waitReady(t, ctx, n)
	}
	cancel()

	t.Run("no_embedded_nats", func(t *testing.T) {
		// An embedded server would keep its JetStream store in --data-dir.
		for i, dir := range dataDirs {
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, entries, "node x%d wrote to its data directory: an embedded NATS server ran", i+1)
		}
		// Every node's NATS connection is a client of the external cluster.
		var clients []string
		for _, s := range servers {
			var connz struct {
				Connections []struct {
					Name string `json:"name"`
				} `json:"connections"`
			}
			require.NoError(t, getJSON(t.Context(), hc, s.monitor+"/connz?limit=1024", &connz))
			for _, c := range connz.Connections {
				clients = append(clients, c.Name)
			}
		}
		for i := range 3 {
			assert.Contains(t, clients, fmt.Sprintf("mcp-actors/x%d", i+1), "the external servers' clients")
		}
		// The URL's password is not logged.
		for i, n := range nodes {
			assert.NotContains(t, n.stderr.String(), natsPassword, "node x%d logged the NATS password", i+1)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		// No node of ours leads a store: no leader gauge, which would say
		// that none does (McpActorsStorageLeaderless would fire for ever);
		// the peers gauge says it cannot tell.
		for i, n := range nodes {
			body := getText(t, hc, strings.TrimSuffix(n.url, "/mcp")+"/metrics")
			assert.NotContains(t, body, "mcp_cluster_storage_leader", "node x%d", i+1)
			assert.Contains(t, body, "mcp_cluster_peers -1", "node x%d", i+1)
		}
	})

	t.Run("reference", func(t *testing.T) { runClusterReferenceCases(t, nodes) })

	t.Run("owner_loss", func(t *testing.T) { testExternalOwnerLoss(t, nodes, urls, clusterName) })
}

// testExternalOwnerLoss opens a session through a round-robin over nodes,
// kills the node that owns it and checks that the session goes on: a tool
// call, an elicitation answered through another node, and the session's
// directory entry (read from the external JetStream) naming a new owner.
func testExternalOwnerLoss(t *testing.T, nodes []*httpServer, urls []string, clusterName string) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	rr := newRoundRobin(base, nodes)
	const username = "bob"
	c := mcp.NewClient(&mcp.Implementation{Name: "external-nats", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": username, "email": req.Params.Message}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: nodes[0].url, HTTPClient: &http.Client{Transport: rr}},
		&mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	require.NoError(t, err)
	defer cs.Close()

	echo := func() error { return stillHere(ctx, cs) }
	elicit := func(message string) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_elicitation", Arguments: map[string]any{"message": message}})
		if err != nil {
			return err
		}
		if res.IsError || len(res.Content) == 0 {
			return fmt.Errorf("bad result %+v", res)
		}
		text, ok := res.Content[0].(*mcp.TextContent)
		if !ok {
			return fmt.Errorf("content %T, want text", res.Content[0])
		}
		const prefix = "User response: action=accept, content="
		want := fmt.Sprintf(`{"username":%q,"email":%q}`, username, message)
		var got, exp any
		if !strings.HasPrefix(text.Text, prefix) ||
			json.Unmarshal([]byte(strings.TrimPrefix(text.Text, prefix)), &got) != nil ||
			json.Unmarshal([]byte(want), &exp) != nil || !jsonEqual(got, exp) {
			return fmt.Errorf("text %q, want %s%s", text.Text, prefix, want)
		}
		return nil
	}
	require.NoError(t, echo())
	require.NoError(t, elicit("before the loss"))

	// The session's directory entry lives in the external JetStream.
	nc, err := nats.Connect(strings.Join(urls, ","), nats.Name("interop-observer"))
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	kv, err := js.KeyValue(ctx, "mcpx_"+clusterName+"_sessions")
	require.NoError(t, err)
	type entry struct {
		Owner string `json:"owner"`
		Epoch uint64 `json:"epoch"`
	}
	directory := func() (entry, error) {
		var e entry
		getCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		kve, err := kv.Get(getCtx, cs.ID())
		if err != nil {
			return e, err
		}
		return e, json.Unmarshal(kve.Value(), &e)
	}

	ownerID, _, ok := strings.Cut(cs.ID(), ".")
	require.True(t, ok, "the session ID %q names its node", cs.ID())
	var before entry
	require.Eventually(t, func() bool { // written without waiting
		before, err = directory()
		return err == nil && before.Owner == ownerID
	}, 30*time.Second, 50*time.Millisecond, "no directory entry naming %s for %s (last: %+v, %v)", ownerID, cs.ID(), before, err)

	i := -1
	for j := range nodes {
		if fmt.Sprintf("x%d", j+1) == ownerID {
			i = j
		}
	}
	require.GreaterOrEqual(t, i, 0, "owner %s is none of the nodes", ownerID)
	rr.markDown(nodes[i])
	nodes[i].kill()

	// Until its lease lapses (1 s) the owner is only late; then the next
	// message takes the session over.
	require.Eventually(t, func() bool {
		err := echo()
		if err != nil {
			t.Logf("echo: %v", err)
		}
		return err == nil
	}, time.Minute, 200*time.Millisecond, "the session never went on after its node died")

	// A server-to-client request from the new owner, answered through the
	// round-robin (another node, or the owner itself).
	require.NoError(t, elicit("after the loss"))
	require.NoError(t, elicit("and once more"))

	var after entry
	require.Eventually(t, func() bool {
		after, err = directory()
		return err == nil && after.Owner != ownerID && after.Epoch > before.Epoch
	}, 30*time.Second, 50*time.Millisecond, "the directory entry never moved from %s (last: %+v, %v)", ownerID, after, err)
	assert.Contains(t, []string{"x1", "x2", "x3"}, after.Owner)
	require.NoError(t, echo())
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a, json.Deterministic(true))
	y, err2 := json.Marshal(b, json.Deterministic(true))
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// getText GETs u and returns the body of a 200.
func getText(t *testing.T, hc *http.Client, u string) string {
	t.Helper()
	resp, err := hc.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", u, b)
	return string(b)
}
