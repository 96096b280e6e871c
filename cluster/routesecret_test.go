package cluster_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	json "encoding/json/v2"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/cluster"
)

// TestRouteSecretRotation rotates the route secret of three running nodes
// by editing their secret files, in the three steps docs/operations.md
// gives: "old" → "old\nnew" (new accepted too) → "new\nold" (new
// presented: each node's routes dial again) → "new". After each step the
// nodes keep their routes to one another and a KV write on one is read
// on another; a route presenting new is refused before the first step and
// accepted from it; one presenting old is refused after the last. A node
// restarted after the rotation joins with the new secret alone, and the
// others dial it with the new secret (none is refused). A file
// emptied by mistake changes nothing (a warning). Neither secret appears
// in the log, NATS's own lines included.
func TestRouteSecretRotation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const oldSecret, newSecret = "0ld/s3cret:a", "n3w/s3cret@b" // escaped in a route URL
	dir := t.TempDir()
	addrs, routes := routeAddrs(t, 3)
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	files := make([]string, len(addrs))
	write := func(content string) {
		for _, f := range files {
			require.NoError(t, os.WriteFile(f, []byte(content), 0o600))
		}
	}
	start := func(i int) *cluster.Node {
		id := fmt.Sprintf("n%d", i+1)
		n, err := cluster.Start(ctx, cluster.Options{NodeID: id, ClusterName: "rotate", DataDir: filepath.Join(dir, id),
			ClusterListen: addrs[i], Routes: routes, SecretFile: files[i], Logger: log})
		require.NoError(t, err)
		return n
	}
	for i := range files {
		files[i] = filepath.Join(dir, fmt.Sprintf("secret-%d", i+1))
	}
	write(oldSecret + "\n")
	var nodes []*cluster.Node
	defer func() { closeAll(nodes) }()
	for i := range addrs {
		nodes = append(nodes, start(i))
	}
	whole := func(step string) {
		t.Helper()
		for _, n := range nodes {
			require.NoError(t, n.WaitReady(ctx), "%s: node %s", step, n.ID())
		}
		assertPeers(t, nodes[0], "n2", "n3")
		assertPeers(t, nodes[1], "n1", "n3")
		assertPeers(t, nodes[2], "n1", "n2")
		assertKV(t, ctx, nodes[0], nodes[2])
	}
	accepts := func(secret string, want bool, why string) {
		t.Helper()
		for _, a := range addrs {
			assert.Eventually(t, func() bool { return routeAccepts(t, a, secret) == want }, 10*time.Second, 100*time.Millisecond,
				"%s: %s", a, why)
		}
	}
	// The request state keys derived from the secrets: the same on every
	// node, following the file.
	keys := func() (current, previous []byte) {
		t.Helper()
		current, previous = nodes[0].StateKeys()
		for _, n := range nodes[1:] {
			c, p := n.StateKeys()
			assert.Equal(t, current, c, "%s derives the state key as n1 does", n.ID())
			assert.Equal(t, previous, p, "%s derives the previous state key as n1 does", n.ID())
		}
		return current, previous
	}
	whole("start")
	accepts(oldSecret, true, "the secret in use is accepted")
	accepts(newSecret, false, "the next one is not, yet")
	oldKey, none := keys()
	require.Len(t, oldKey, 32)
	assert.Nil(t, none)

	write(oldSecret + "\n" + newSecret + "\n")
	accepts(newSecret, true, "step 1: the next secret is accepted too")
	accepts(oldSecret, true, "step 1: and the one in use still")
	whole("step 1")
	current, newKey := keys()
	assert.Equal(t, oldKey, current, "step 1: states are still sealed with the old secret's key")
	require.Len(t, newKey, 32)
	assert.NotEqual(t, oldKey, newKey)

	write(newSecret + "\n" + oldSecret + "\n")
	require.Eventually(t, func() bool {
		return loggedByAll(logs, nodes, "the routes this node dials present the new secret")
	}, 10*time.Second, 50*time.Millisecond, "step 2: every node presents the new secret")
	accepts(oldSecret, true, "step 2: the old secret is still accepted (a node that has not read the file yet presents it)")
	whole("step 2")
	current, previous := keys()
	assert.Equal(t, newKey, current, "step 2: states are sealed with the new secret's key")
	assert.Equal(t, oldKey, previous, "and the old one's still open")

	write(newSecret + "\n")
	accepts(oldSecret, false, "step 3: the old secret is refused")
	accepts(newSecret, true, "step 3: the new one is accepted")
	whole("step 3")
	current, previous = keys()
	assert.Equal(t, newKey, current)
	assert.Nil(t, previous, "step 3: the old secret's key is gone")

	require.NoError(t, os.WriteFile(files[0], nil, 0o600))
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), "the route secret file changed but cannot be read")
	}, 10*time.Second, 50*time.Millisecond, "an emptied file is reported")
	assert.True(t, routeAccepts(t, addrs[0], newSecret), "and changes nothing")
	require.NoError(t, os.WriteFile(files[0], []byte(newSecret+"\n"), 0o600))

	// n3 restarted: n1 and n2 dial it again (its route address is in
	// their routes), presenting the secret they present now. Probes of
	// this test were refused before, counted here.
	refused := strings.Count(logs.String(), "authentication error")
	nodes[2].Close()
	nodes[2] = start(2)
	whole("n3 restarted with the new secret")
	assert.Never(t, func() bool { return strings.Count(logs.String(), "authentication error") > refused }, 3*time.Second, 50*time.Millisecond,
		"no route is refused: every node dials with the new secret")

	all := logs.String()
	assert.Contains(t, all, "Route connection created", "NATS's debug lines are in the log")
	for _, secret := range []string{oldSecret, newSecret} {
		assert.NotContains(t, all, secret)
		assert.NotContains(t, all, url.UserPassword("u", secret).String()[2:], "nor escaped")
	}
}

// routeAccepts reports whether the route port at addr accepts a route
// that presents secret: it answers the route's PING after its CONNECT,
// rather than an authorization error.
func routeAccepts(t *testing.T, addr, secret string) bool {
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
	connect, err := json.Marshal(map[string]any{"cluster": srv.Cluster, "name": fmt.Sprintf("probe-%d", time.Now().UnixNano()),
		"user": "mcp-actors", "pass": secret})
	require.NoError(t, err)
	_, err = io.WriteString(conn, "CONNECT "+string(connect)+"\r\nPING\r\n")
	require.NoError(t, err)
	for {
		line, err := r.ReadString('\n')
		switch {
		case err != nil, strings.HasPrefix(line, "-ERR"):
			return false
		case strings.HasPrefix(line, "PONG"):
			return true
		}
	}
}

// TestRouteCertificateReload: three nodes whose routes use mutual TLS;
// n1's certificate files are replaced in place (a renewal); a route
// handshake with n1 then gets the new certificate, the node's expiry
// follows it, and n2, restarted, joins n1 again (n1 presents and verifies
// with the new certificate, the CA unchanged).
func TestRouteCertificateReload(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	ca := newCA(t, "cluster CA")
	caFile := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(caFile, ca.pem, 0o600))
	addrs, routes := routeAddrs(t, 3)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	start := func(i int) *cluster.Node {
		id := fmt.Sprintf("n%d", i+1)
		cert, key := filepath.Join(dir, id+".pem"), filepath.Join(dir, id+"-key.pem")
		if _, err := os.Stat(cert); err != nil {
			cert, key = ca.issue(t, dir, id)
		}
		n, err := cluster.Start(ctx, cluster.Options{NodeID: id, ClusterName: "mtls", DataDir: filepath.Join(dir, id),
			ClusterListen: addrs[i], Routes: routes, ClusterTLSCert: cert, ClusterTLSKey: key, ClusterCA: caFile, Logger: log})
		require.NoError(t, err)
		return n
	}
	var nodes []*cluster.Node
	defer func() { closeAll(nodes) }()
	for i := range addrs {
		nodes = append(nodes, start(i))
	}
	for _, n := range nodes {
		require.NoError(t, n.WaitReady(ctx), "node %s", n.ID())
	}
	assertPeers(t, nodes[0], "n2", "n3")
	assertKV(t, ctx, nodes[1], nodes[0]) // its bucket made while every node is up

	probeCert, probeKey := ca.issue(t, dir, "probe")
	before := routeCertificate(t, addrs[0], caFile, probeCert, probeKey)
	expiry := nodes[0].RouteCertificateExpiry()
	assert.Equal(t, before.NotAfter.Unix(), expiry.Unix(), "the node's expiry is its certificate's")

	ca.issueFor(t, dir, "n1", 2*time.Hour) // in place, as cert-manager renews it
	var after *x509.Certificate
	require.Eventually(t, func() bool {
		after = routeCertificate(t, addrs[0], caFile, probeCert, probeKey)
		return after.SerialNumber.Cmp(before.SerialNumber) != 0
	}, 10*time.Second, 100*time.Millisecond, "a new route handshake gets the renewed certificate")
	assert.Equal(t, after.NotAfter.Unix(), nodes[0].RouteCertificateExpiry().Unix(), "the node's expiry follows the renewed certificate")
	assert.Greater(t, after.NotAfter.Sub(expiry), 30*time.Minute, "the renewal's, not the first one's")

	nodes[1].Close()
	nodes[1] = start(1)
	require.NoError(t, nodes[1].WaitReady(ctx))
	assertPeers(t, nodes[1], "n1", "n3")
	assertKV(t, ctx, nodes[1], nodes[0])
}

// routeCertificate returns the certificate the route port at addr serves
// to a route presenting certFile: it starts TLS at once, as a dialing node
// does (a TLS route's handshake comes before the INFO).
func routeCertificate(t *testing.T, addr, caFile, certFile, keyFile string) *x509.Certificate {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(caFile)
	require.NoError(t, err)
	require.True(t, pool.AppendCertsFromPEM(caPEM))
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	require.NoError(t, err)
	tc := tls.Client(conn, &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
	require.NoError(t, tc.Handshake())
	return tc.ConnectionState().PeerCertificates[0]
}
