package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	json "encoding/json/v2"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/cluster"
	"github.com/mcp-actors/mcp-actors/internal/loopback"
)

// TestClusterClosedToStrangers: three nodes joined by routes with a
// secret (logging at debug level) work, a KV write on one read on
// another; no NATS client is admitted on any node's client port or route
// port — anonymous, with a user and password or a token, as nats.go
// connects or as a raw CONNECT {} — and a stranger gets no subscription
// and no JetStream answer; a node with the wrong secret does not join;
// the secret is in no line of the log, NATS's own included.
func TestClusterClosedToStrangers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	const secret = "not/so:s3cret@all" // escaped in a route URL
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	nodes, err := cluster.StartLocal(ctx, 3, t.TempDir(), cluster.Options{ClusterName: "auth", Secret: secret, Logger: log})
	require.NoError(t, err)
	defer closeAll(nodes)
	assertPeers(t, nodes[0], "n2", "n3")
	assertKV(t, ctx, nodes[0], nodes[2])

	for _, n := range nodes {
		require.NotEmpty(t, n.ClientURL(), "a route port needs a client port")
		routeAddr := strings.TrimPrefix(n.RouteURL(), "nats-route://")
		assertRefusesClients(t, n.ClientURL())
		assertRefusesClients(t, "nats://"+routeAddr)
		for addr, route := range map[string]bool{strings.TrimPrefix(n.ClientURL(), "nats://"): false, routeAddr: true} {
			got := rawConnect(t, addr, route)
			assert.Contains(t, got, "-ERR 'Authorization Violation'", "%s: the stranger is told no", addr)
			assert.NotContains(t, got, "PONG", "%s: no PING is answered", addr)
			assert.NotContains(t, got, "MSG ", "%s: nothing is delivered", addr)
		}
	}

	// An intruder that knows the routes but not the secret.
	var routes []string
	for _, n := range nodes {
		routes = append(routes, n.RouteURL())
	}
	intruder, err := cluster.Start(ctx, cluster.Options{NodeID: "intruder", ClusterName: "auth", DataDir: t.TempDir(),
		ClusterListen: freeAddr(t), Routes: routes, Secret: "guess", Replicas: 1, Logger: log})
	require.NoError(t, err)
	defer intruder.Close()
	require.Eventually(t, func() bool {
		return loggedByAll(logs, nodes, "rid:", "authentication error")
	}, 20*time.Second, 20*time.Millisecond, "every node refuses the intruder's route")
	// A route is up only once the accepting side has checked it: the
	// nodes never list the intruder. (The intruder itself lists a node for
	// a moment each time it dials one, between the node's INFO and its
	// refusal, so its own list proves nothing.)
	assert.Never(t, func() bool {
		for _, n := range nodes {
			if slices.Contains(n.Peers(), "intruder") {
				return true
			}
		}
		return false
	}, time.Second, 20*time.Millisecond, "no node has a route to the intruder")

	all := logs.String()
	assert.Contains(t, all, "Route connection created", "NATS's debug lines are in the log")
	assert.NotContains(t, all, secret)
	assert.NotContains(t, all, url.UserPassword("u", secret).String()[2:], "nor escaped")
}

// TestClusterAdvertise: the route port tells other nodes the address
// given as ClusterAdvertise.
func TestClusterAdvertise(t *testing.T) {
	route := freeAddr(t)
	n, err := cluster.Start(t.Context(), cluster.Options{NodeID: "adv", DataDir: t.TempDir(), ClusterListen: route,
		Routes: []string{"nats-route://" + route}, Secret: "s3cret", ClusterAdvertise: "127.0.0.1:7777",
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer n.Close()
	info := rawConnect(t, route, true)
	assert.Contains(t, info, `"ip":"nats-route://127.0.0.1:7777/"`)
}

// TestStartOnATakenRoutePort: a node whose route port another process
// holds fails to start at once, saying so, rather than wait out the
// start's bound; StartLocal then starts again on other ports.
func TestStartOnATakenRoutePort(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer held.Close()
	route := held.Addr().String()
	start := time.Now()
	_, err = cluster.Start(t.Context(), cluster.Options{NodeID: "late", DataDir: t.TempDir(), ClusterListen: route,
		Routes: []string{"nats-route://" + route}, Secret: "s3cret", Logger: slog.New(slog.DiscardHandler)})
	require.ErrorIs(t, err, cluster.ErrServerStart)
	assert.ErrorContains(t, err, "address already in use")
	assert.Less(t, time.Since(start), 20*time.Second, "at once, not after the start's 30 s bound")
}

// TestRoutesMutualTLS: three nodes whose routes use mutual TLS alone (no
// secret) join and work; a node whose certificate another CA signed does
// not join, though it trusts the cluster's CA.
func TestRoutesMutualTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	ca := newCA(t, "cluster CA")
	caFile := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(caFile, ca.pem, 0o600))
	addrs, routes := routeAddrs(t, 3)
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	start := func(id, listen string, signer *testCA) (*cluster.Node, error) {
		cert, key := signer.issue(t, dir, id)
		return cluster.Start(ctx, cluster.Options{NodeID: id, ClusterName: "mtls", DataDir: filepath.Join(dir, id),
			ClusterListen: listen, Routes: routes, ClusterTLSCert: cert, ClusterTLSKey: key, ClusterCA: caFile, Logger: log})
	}
	var nodes []*cluster.Node
	defer func() { closeAll(nodes) }()
	for i, a := range addrs {
		n, err := start(fmt.Sprintf("n%d", i+1), a, ca)
		require.NoError(t, err)
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		require.NoError(t, n.WaitReady(ctx), "node %s", n.ID())
	}
	assertPeers(t, nodes[2], "n1", "n2")
	assertKV(t, ctx, nodes[1], nodes[0])

	rogue, err := start("rogue", freeAddr(t), newCA(t, "another CA"))
	require.NoError(t, err)
	defer rogue.Close()
	require.Eventually(t, func() bool {
		return loggedByAll(logs, nodes, "TLS route handshake error")
	}, 20*time.Second, 20*time.Millisecond, "every node refuses the rogue's certificate")
	assert.Empty(t, rogue.Peers(), "the rogue has no route")
	for _, n := range nodes {
		assert.NotContains(t, n.Peers(), "rogue")
	}
}

// assertRefusesClients checks that a NATS client is refused at u:
// anonymous, with a user and password, and with a token.
func assertRefusesClients(t *testing.T, u string) {
	t.Helper()
	for name, opt := range map[string]nats.Option{
		"anonymous": func(*nats.Options) error { return nil },
		"user":      nats.UserInfo("mcp-actors", "guess"),
		"token":     nats.Token("guess"),
	} {
		nc, err := nats.Connect(u, opt, nats.Timeout(2*time.Second), nats.NoReconnect())
		if !assert.Error(t, err, "%s: a %s client is refused", u, name) {
			nc.Close()
		}
	}
}

// rawConnect connects to addr over TCP with no credentials and speaks as
// a client that subscribes to everything, asks JetStream for its streams
// and pings, or (route) as a route that names the cluster (read from the
// server's INFO), asks for every subject and pings. It returns what the
// server sent before it closed the connection.
func rawConnect(t *testing.T, addr string, route bool) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	r := bufio.NewReader(conn)
	info, err := r.ReadString('\n')
	require.NoError(t, err)
	var srv struct {
		Cluster string `json:"cluster"`
	}
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(strings.TrimPrefix(info, "INFO "))), &srv))
	say := "CONNECT {}\r\nSUB > 1\r\nPUB $JS.API.STREAM.NAMES _INBOX.probe 0\r\n\r\nPING\r\n"
	if route {
		say = fmt.Sprintf("CONNECT {\"cluster\":%q,\"name\":\"stranger\"}\r\nRS+ $G >\r\nPING\r\n", srv.Cluster)
	}
	_, err = io.WriteString(conn, say)
	require.NoError(t, err)
	rest, err := io.ReadAll(r)
	if errors.Is(err, syscall.ECONNRESET) {
		err = nil // closed with our bytes unread: closed all the same
	}
	require.NoError(t, err, "the server closes the connection (read so far: %q)", rest)
	return info + string(rest)
}

// assertPeers checks that n has routes to peers (and no other), once the
// routes a new cluster is still making are up.
func assertPeers(t *testing.T, n *cluster.Node, peers ...string) {
	t.Helper()
	assert.Eventually(t, func() bool { return slices.Equal(n.Peers(), peers) }, 10*time.Second, 20*time.Millisecond,
		"%s has routes to %v", n.ID(), peers)
}

// assertKV creates a bucket through a's connection, writes to it, and
// reads the write back through b's.
func assertKV(t *testing.T, ctx context.Context, a, b *cluster.Node) {
	t.Helper()
	jsa, err := jetstream.New(a.Conn())
	require.NoError(t, err)
	jsb, err := jetstream.New(b.Conn())
	require.NoError(t, err)
	kv, err := jsa.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "probe", Replicas: len(a.Peers()) + 1})
	require.NoError(t, err)
	_, err = kv.PutString(ctx, "k", "v")
	require.NoError(t, err)
	kvb, err := jsb.KeyValue(ctx, "probe")
	require.NoError(t, err)
	e, err := kvb.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, "v", string(e.Value()))
}

// loggedByAll reports whether each node logged a line with every one of
// parts.
func loggedByAll(logs *syncBuffer, nodes []*cluster.Node, parts ...string) bool {
	lines := strings.Split(logs.String(), "\n")
	for _, n := range nodes {
		found := false
		for _, l := range lines {
			if found = strings.Contains(l, "node="+n.ID()) && containsAll(l, parts); found {
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func closeAll(nodes []*cluster.Node) {
	for _, n := range nodes {
		n.Close()
	}
}

// freeAddr returns a loopback address with a port free right now, outside
// the ephemeral range (another test's connection cannot take it meanwhile).
func freeAddr(t *testing.T) string {
	t.Helper()
	a, err := loopback.Addr()
	require.NoError(t, err)
	return a
}

// routeAddrs returns n free route addresses and their route URLs, for a
// cluster of n nodes started one by one.
func routeAddrs(t *testing.T, n int) (addrs, routes []string) {
	t.Helper()
	for range n {
		a := freeAddr(t)
		addrs, routes = append(addrs, a), append(routes, "nats-route://"+a)
	}
	return addrs, routes
}

// testCA is a certificate authority made for a test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue writes to dir a certificate for 127.0.0.1 (server and client, as a
// route is both) signed by ca, valid for an hour, and its key; it returns
// their files.
func (ca *testCA) issue(t *testing.T, dir, name string) (certFile, keyFile string) {
	t.Helper()
	return ca.issueFor(t, dir, name, time.Hour)
}

// issueFor is issue with a certificate valid for validity.
func (ca *testCA) issueFor(t *testing.T, dir, name string, validity time.Duration) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(validity),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	return certFile, keyFile
}

// syncBuffer is a log the test reads while nodes write to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
