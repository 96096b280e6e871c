package mcpactors

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/cluster"
	"github.com/mcp-actors/mcp-actors/internal/loopback"
	"github.com/mcp-actors/mcp-actors/internal/sealed"
	"github.com/mcp-actors/mcp-actors/messages"
)

// TestStateKeysFollowTheSecretFile: a server joined to a node whose route
// secret comes from a file seals the 2026-07-28 requestState with the key
// derived from the secret it presents; when the file changes to a new
// secret (the old one still accepted), it seals with the new secret's key
// and still opens what the old one sealed, as every other node does
// (cluster.Node.StateKeys).
func TestStateKeysFollowTheSecretFile(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	file := filepath.Join(dir, "secret")
	require.NoError(t, os.WriteFile(file, []byte("old-s3cret\n"), 0o600))
	addr, err := loopback.Addr()
	require.NoError(t, err)
	node, err := cluster.Start(ctx, cluster.Options{NodeID: "n1", DataDir: filepath.Join(dir, "n1"), ClusterListen: addr,
		Routes: []string{"nats-route://" + addr}, SecretFile: file, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer node.Close()
	srv := NewServer(messages.Implementation{Name: "keys", Version: "1"}, &Options{Logger: slog.New(slog.DiscardHandler)})
	defer func() { _ = srv.Close(context.Background()) }()
	require.NoError(t, srv.JoinCluster(node))

	sl := srv.modernOpt.Sealer
	oldKey, _ := node.StateKeys()
	old, err := sealed.New(oldKey, nil)
	require.NoError(t, err)
	assert.Equal(t, old.KeyID(), sl.KeyID(), "sealed with the old secret's key")
	sealedBefore := sl.Seal([]byte("round 1"))

	require.NoError(t, os.WriteFile(file, []byte("new-s3cret\nold-s3cret\n"), 0o600))
	require.Eventually(t, func() bool { return sl.KeyID() != old.KeyID() }, 10*time.Second, 50*time.Millisecond,
		"the server seals with the new secret's key once the file says so")
	newKey, _ := node.StateKeys()
	fresh, err := sealed.New(newKey, nil)
	require.NoError(t, err)
	assert.Equal(t, fresh.KeyID(), sl.KeyID())
	got, err := sl.Open(sealedBefore)
	require.NoError(t, err, "what the old key sealed still opens")
	assert.Equal(t, "round 1", string(got))
}
