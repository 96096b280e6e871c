package cluster

import (
	"bytes"
	"log/slog"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServerOptions: what the options make of the embedded server's.
func TestServerOptions(t *testing.T) {
	t.Run("alone", func(t *testing.T) {
		so, err := Options{NodeID: "n1", SyncAlways: true}.serverOptions()
		require.NoError(t, err)
		assert.True(t, so.DontListen, "no client port")
		assert.IsType(t, &inProcessOnly{}, so.CustomClientAuthentication)
		assert.True(t, so.SyncAlways)
	})
	t.Run("routes", func(t *testing.T) {
		so, err := Options{NodeID: "n1", ClusterName: "c", ClusterListen: "127.0.0.1:6222", Secret: "s",
			Routes: []string{"nats-route://127.0.0.1:6223"}, ClusterAdvertise: "10.0.0.1:16222", SyncInterval: time.Second}.serverOptions()
		require.NoError(t, err)
		assert.False(t, so.DontListen)
		assert.Equal(t, "127.0.0.1", so.Host, "the client port is on loopback")
		assert.IsType(t, &inProcessOnly{}, so.CustomClientAuthentication, "and admits no one")
		assert.Equal(t, routeUser, so.Cluster.Username)
		assert.Equal(t, "s", so.Cluster.Password)
		assert.Equal(t, "10.0.0.1:16222", so.Cluster.Advertise)
		require.Len(t, so.Routes, 1)
		pw, _ := so.Routes[0].User.Password()
		assert.Equal(t, "s", pw, "routes present the secret")
		assert.Nil(t, so.Cluster.TLSConfig)
		assert.Equal(t, time.Second, so.SyncInterval)
		assert.False(t, so.SyncAlways)
	})
}

// TestNATSLoggerRedacts: the secret, as given and as escaped in a route
// URL, is redacted from every line the embedded server logs.
func TestNATSLoggerRedacts(t *testing.T) {
	const secret = "a/b:c@d"
	u, err := url.Parse("nats-route://127.0.0.1:6222")
	require.NoError(t, err)
	u.User = url.UserPassword(routeUser, secret)
	var out bytes.Buffer
	l := newNATSLogger(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})), []string{secret}, new(atomic.Bool))
	l.Errorf("route %s", u)
	l.Debugf("secret %s", secret)
	assert.Contains(t, out.String(), "nats: route nats-route://mcp-actors:[REDACTED]@127.0.0.1:6222")
	assert.Contains(t, out.String(), "nats: secret [REDACTED]")
	assert.NotContains(t, out.String(), secret)

	// A secret file read again names new secrets: hidden from then on.
	l.redact([]string{"n3w", secret})
	l.Debugf("now %s and %s", "n3w", secret)
	assert.Contains(t, out.String(), "nats: now [REDACTED] and [REDACTED]")
	assert.NotContains(t, out.String(), "n3w")
}

// TestNATSLoggerRouteDials: failing to dial a route is debug while the
// node starts (the others are not up yet), warn once it has been ready,
// never an error; other errors stay errors.
func TestNATSLoggerRouteDials(t *testing.T) {
	var out bytes.Buffer
	settled := new(atomic.Bool)
	l := newNATSLogger(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})), nil, settled)
	const dial = "Error trying to connect to route (attempt %v): %v"
	l.Errorf(dial, 1, "dial tcp 127.0.0.1:6222: connect: connection refused")
	assert.Contains(t, out.String(), "level=DEBUG")
	assert.NotContains(t, out.String(), "level=ERROR")
	out.Reset()
	settled.Store(true)
	l.Errorf(dial, 2, "dial tcp 127.0.0.1:6222: connect: connection refused")
	assert.Contains(t, out.String(), "level=WARN")
	out.Reset()
	l.Errorf("%s - rid:%d - Error flushing: %v", "127.0.0.1:56142", 10, "writev: broken pipe")
	assert.Contains(t, out.String(), "level=WARN")
	out.Reset()
	l.Errorf("JetStream out of resources")
	assert.Contains(t, out.String(), "level=ERROR")
}

// TestNATSLoggerStartWaits: the waits every start goes through are debug
// until the node is ready, warnings after.
func TestNATSLoggerStartWaits(t *testing.T) {
	var out bytes.Buffer
	settled := new(atomic.Bool)
	l := newNATSLogger(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})), nil, settled)
	l.Warnf("Waiting for routing to be established...")
	l.Warnf("JetStream has not established contact with a meta leader")
	l.Warnf("%s", "Metalayer blocking snapshot took 0.004s") // as NATS's rate-limited warnings come
	assert.NotContains(t, out.String(), "level=WARN")
	settled.Store(true)
	l.Warnf("JetStream has not established contact with a meta leader")
	assert.Contains(t, out.String(), "level=WARN")
}
