package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	json "encoding/json/v2"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/internal/loopback"
)

// TestServeRefusesBadFlags checks that serve refuses, before it listens,
// flags that cannot work, saying which.
func TestServeRefusesBadFlags(t *testing.T) {
	dir := t.TempDir()
	secretFile, emptyFile := filepath.Join(dir, "secret"), filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(secretFile, []byte("s3cret\n"), 0o600))
	require.NoError(t, os.WriteFile(emptyFile, []byte("\n"), 0o600))
	for _, tc := range []struct {
		args []string
		want string
	}{
		// Routes authenticate: the message names the ways.
		{[]string{"--cluster-listen", "127.0.0.1:0"}, "--cluster-secret-file"},
		{[]string{"--cluster-listen", "127.0.0.1:0"}, "--cluster-tls-cert, --cluster-tls-key and --cluster-ca"},
		{[]string{"--cluster-listen", "127.0.0.1:0", "--cluster-secret", "s", "--cluster-secret-file", secretFile}, "choose one"},
		{[]string{"--cluster-listen", "127.0.0.1:0", "--cluster-secret-file", emptyFile}, "is empty"},
		{[]string{"--cluster-listen", "127.0.0.1:0", "--cluster-tls-cert", "main.go"}, "--cluster-ca"},
		{[]string{"--jetstream-sync", "sometimes"}, "--jetstream-sync"},
		{[]string{"--jetstream-sync", "-1s"}, "--jetstream-sync"},
		{[]string{"--jetstream-sync", "always", "--nats-url", "nats://127.0.0.1:4222"}, "--jetstream-sync"},
		{[]string{"--path", "mcp"}, "--path"},
		{[]string{"--path", ""}, "--path"},
		{[]string{"--max-sessions", "-5"}, "--max-sessions"},
		{[]string{"--sessions-bytes", "0"}, "--sessions-bytes"},
		{[]string{"--journal-bytes", "-1"}, "--journal-bytes"},
		{[]string{"--lame-duck", "-1s"}, "--lame-duck"},
		{[]string{"--max-body", "0"}, "--max-body"},
		{[]string{"--shutdown-timeout", "0s"}, "--shutdown-timeout"},
		{[]string{"--session-ttl", "-1s"}, "--session-ttl"},
		{[]string{"--keepalive", "-1s"}, "--keepalive"},
		{[]string{"--request-state-ttl", "0s"}, "--request-state-ttl"},
		{[]string{"--max-parked", "-2"}, "--max-parked"},
		{[]string{"--tls-cert", "main.go"}, "--tls-key"},
		{[]string{"--event-delay", "-1ms"}, "--event-delay"},
		{[]string{"--lease-ttl", "0s"}, "--lease-ttl"},
		{[]string{"--cluster-advertise", "127.0.0.1:7000"}, "--cluster-advertise"},
		{[]string{"--node-id", "no/slash"}, "--node-id"},
		{[]string{"--cluster-name", "a b"}, "--cluster-name"},
		{[]string{"--cluster-listen", "127.0.0.1:0", "--cluster-secret", "s"}, "--data-dir"},
		{[]string{"--nats-url", "nats://127.0.0.1:4222", "--nats-connect-timeout", "0s"}, "--nats-connect-timeout"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := runBin(t, append([]string{"serve", "--listen", "127.0.0.1:0"}, tc.args...)...)
			assert.Equal(t, exitConfig, code)
			assert.Regexp(t, `^mcp-actors: [^\n]+\n$`, stderr, "one line")
			assert.Contains(t, stderr, tc.want, "the message names the flag")
		})
	}
}

// serveProc is `mcp-actors serve` on a loopback port.
type serveProc struct {
	*proc
	url string
}

// startServe runs serve with args on a free loopback port and waits for
// the URL it logs.
func startServe(t *testing.T, env []string, args ...string) *serveProc {
	t.Helper()
	p := start(t, env, append([]string{"serve", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir()}, args...)...)
	return waitServing(t, p)
}

// waitServing waits for the URL a serve process p logs.
func waitServing(t *testing.T, p *proc) *serveProc {
	t.Helper()
	re := regexp.MustCompile(`url"?[=:]"?(https?://[^\s"]+)`)
	deadline := time.Now().Add(exitTimeout)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(p.stderr.String()); m != nil {
			sp := &serveProc{proc: p, url: m[1]}
			t.Cleanup(func() {
				_ = p.cmd.Process.Signal(syscall.SIGTERM)
				assert.Equal(t, 0, p.wait(), "stderr:\n%s", p.stderr)
			})
			return sp
		}
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("serve exited: %v\n%s", err, p.stderr)
		case <-time.After(10 * time.Millisecond): // polling the log of a real process
		}
	}
	t.Fatalf("serve did not log its URL:\n%s", p.stderr)
	return nil
}

// initialize posts an initialize with client and returns the response.
func initialize(t *testing.T, client *http.Client, url string) *http.Response {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cli-test","version":"1"}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := client.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	return resp
}

// selfSigned writes a certificate for 127.0.0.1 and its key to dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "mcp-actors test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestServeTLS checks --tls-cert/--tls-key: HTTPS, with HTTP/2.
func TestServeTLS(t *testing.T) {
	cert, key, pool := selfSigned(t, t.TempDir())
	s := startServe(t, nil, "--tls-cert", cert, "--tls-key", key)
	require.True(t, strings.HasPrefix(s.url, "https://"), s.url)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	resp := initialize(t, &http.Client{Transport: tr, Timeout: exitTimeout}, s.url)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 2, resp.ProtoMajor, "HTTP/2 over TLS")
	assert.NotEmpty(t, resp.Header.Get("Mcp-Session-Id"))
}

// TestServeH2C checks --h2c: HTTP/2 without TLS, HTTP/1.1 still served.
func TestServeH2C(t *testing.T) {
	s := startServe(t, nil, "--h2c")
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	resp := initialize(t, &http.Client{Transport: tr, Timeout: exitTimeout}, s.url)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 2, resp.ProtoMajor, "h2c")

	resp = initialize(t, &http.Client{Timeout: exitTimeout}, s.url)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 1, resp.ProtoMajor)
}

// TestServeDebugLogs checks the access log at debug level (a line per
// request, one per refused request with its reason) in JSON, with
// durations as strings.
func TestServeDebugLogs(t *testing.T) {
	s := startServe(t, nil, "--log-level", "debug", "--log-format", "json")
	client := &http.Client{Timeout: exitTimeout}
	resp := initialize(t, client, s.url)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	session := resp.Header.Get("Mcp-Session-Id")

	req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"ping"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", "no-such-session")
	r2, err := client.Do(req)
	require.NoError(t, err)
	r2.Body.Close()

	ctx, cancel := context.WithTimeout(context.Background(), exitTimeout)
	defer cancel()
	var access, refused map[string]any
	for access == nil || refused == nil {
		for _, line := range strings.Split(s.stderr.String(), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) != nil {
				continue
			}
			switch rec["msg"] {
			case "http request":
				if rec["mcp_method"] == "initialize" {
					access = rec
				}
			case "http request refused":
				refused = rec
			}
		}
		if access != nil && refused != nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no access log lines:\n%s", s.stderr)
		case <-time.After(10 * time.Millisecond): // polling the log of a real process
		}
	}
	assert.Equal(t, "POST", access["method"])
	assert.Equal(t, session, access["session"])
	assert.EqualValues(t, 200, access["status"])
	d, ok := access["duration"].(string)
	require.True(t, ok, "the duration is a string: %v", access["duration"])
	_, err = time.ParseDuration(d)
	assert.NoError(t, err)
	assert.EqualValues(t, 404, refused["status"])
	assert.Equal(t, "session not found", refused["reason"])
}

// TestServeClusterSecretFile: two nodes join, one reading the secret from
// --cluster-secret-file (with a trailing newline), the other from the
// environment; the secret is in neither's log at debug level, NATS's
// lines included, nor in `serve --help`.
func TestServeClusterSecretFile(t *testing.T) {
	const secret = "file-s3cret"
	file := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(file, []byte(secret+"\n"), 0o600))
	a, b := freeAddr(t), freeAddr(t)
	routes := "nats-route://" + a + ",nats-route://" + b
	n1 := startServe(t, nil, "--log-level", "debug", "--node-id", "f1", "--cluster-listen", a, "--routes", routes,
		"--cluster-secret-file", file)
	n2 := startServe(t, []string{"MCP_ACTORS_CLUSTER_SECRET=" + secret}, "--log-level", "debug", "--node-id", "f2",
		"--cluster-listen", b, "--routes", routes)
	for _, n := range []*serveProc{n1, n2} {
		readyz := strings.TrimSuffix(n.url, "/mcp") + "/readyz"
		require.Eventually(t, func() bool {
			resp, err := http.Get(readyz)
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}, 60*time.Second, 100*time.Millisecond, "the nodes join (their JetStream elects a leader)")
	}
	for _, n := range []*serveProc{n1, n2} {
		log := n.stderr.String()
		assert.Contains(t, log, "Route connection created", "NATS's debug lines are in the log")
		assert.NotContains(t, log, secret)
	}

	bin, err := binary()
	require.NoError(t, err)
	help := exec.Command(bin, "serve", "--help")
	help.Env = append(os.Environ(), "MCP_ACTORS_CLUSTER_SECRET="+secret)
	out, err := help.CombinedOutput()
	require.NoError(t, err)
	assert.Contains(t, string(out), "--cluster-secret-file")
	assert.NotContains(t, string(out), secret)
}

// freeAddr returns a loopback address with a port free right now, outside
// the ephemeral range (another test's connection cannot take it meanwhile).
func freeAddr(t *testing.T) string {
	t.Helper()
	a, err := loopback.Addr()
	require.NoError(t, err)
	return a
}

// TestServeStartFailures: a start-up stage that fails exits 1 with one
// line on stderr naming the stage (and the flag's value where it helps),
// never a credential.
func TestServeStartFailures(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedAddr := closed.Addr().String()
	require.NoError(t, closed.Close()) // nothing listens there now
	notADir := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notADir, nil, 0o600))

	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"HTTP port taken", []string{"--listen", taken.Addr().String()},
			[]string{"listening on " + taken.Addr().String()}},
		{"route port taken", []string{"--cluster-listen", taken.Addr().String(), "--cluster-secret", "s", "--data-dir", t.TempDir()},
			[]string{"starting the embedded NATS server and joining the cluster"}},
		{"data dir not a directory", []string{"--data-dir", filepath.Join(notADir, "sub")},
			[]string{"starting the embedded NATS server"}},
		{"NATS unreachable", []string{"--nats-url", "nats://alice:pa55word@" + closedAddr, "--nats-connect-timeout", "1s", "--state-key-file", stateKeyFile(t)},
			[]string{"connecting to NATS (--nats-url)", "nats://REDACTED@" + closedAddr, "--nats-connect-timeout"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"serve", "--listen", "127.0.0.1:0"}, tc.args...)
			code, stdout, stderr := runBin(t, args...)
			assert.Equal(t, exitRuntime, code, "stderr:\n%s", stderr)
			assert.Empty(t, stdout)
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			last := lines[len(lines)-1]
			assert.Regexp(t, `^mcp-actors: `, last, "the failure is the last line:\n%s", stderr)
			for _, w := range tc.want {
				assert.Contains(t, last, w)
			}
			assert.Equal(t, 1, strings.Count(stderr, "mcp-actors: "), "one failure line:\n%s", stderr)
			assert.NotContains(t, stderr, "level=ERROR", "the failure is said once, as the last line")
			assert.NotContains(t, stderr, "pa55word")
			assert.NotContains(t, stderr, "serving MCP", "nothing was served")
		})
	}
}

// stateKeyFile writes a request state key (base64) to a file of the test's
// and returns its path.
func stateKeyFile(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "state.key")
	require.NoError(t, os.WriteFile(f, []byte(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))+"\n"), 0o600))
	return f
}

func TestStateKeyFlags(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.key")
	require.NoError(t, os.WriteFile(bad, []byte("short"), 0o600))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--state-key-file", bad}, "--state-key-file"},
		{[]string{"--previous-state-key-file", stateKeyFile(t)}, "--previous-state-key-file needs --state-key-file"},
		{[]string{"--nats-url", "nats://127.0.0.1:4222"}, "--nats-url needs --state-key-file"},
	} {
		code, _, stderr := runBin(t, append([]string{"serve", "--listen", "127.0.0.1:0"}, tc.args...)...)
		assert.Equal(t, exitConfig, code, stderr)
		assert.Contains(t, stderr, tc.want)
	}
}
