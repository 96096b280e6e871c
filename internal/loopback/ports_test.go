package loopback

import (
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPortsAreDistinctFreeAndBelowTheEphemeralRange(t *testing.T) {
	ports, err := Ports(20)
	require.NoError(t, err)
	require.Len(t, ports, 20)
	seen := map[int]bool{}
	for _, p := range ports {
		assert.False(t, seen[p], "port %d twice", p)
		seen[p] = true
		assert.GreaterOrEqual(t, p, low)
		assert.Less(t, p, ephemeralStart())
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		require.NoError(t, err, "port %d is free", p)
		require.NoError(t, ln.Close())
	}
}

func TestAddrIsLoopback(t *testing.T) {
	a, err := Addr()
	require.NoError(t, err)
	host, port, err := net.SplitHostPort(a)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", host)
	assert.NotEqual(t, "0", port)
}
