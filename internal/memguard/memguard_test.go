package memguard_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/internal/memguard"
)

func TestGuard(t *testing.T) {
	var none *memguard.Guard
	assert.NoError(t, none.Check(), "a nil guard admits everything")
	assert.Nil(t, memguard.New(0))
	assert.Nil(t, memguard.New(-1))

	runtime.GC()
	g := memguard.New(1 << 40)
	require.NotNil(t, g)
	held := g.Held()
	assert.Positive(t, held, "the runtime holds memory")
	grown := make([][]byte, 0, 64)
	for range 64 {
		grown = append(grown, make([]byte, 1<<20))
	}
	runtime.GC()
	assert.GreaterOrEqual(t, g.Held(), held+48<<20, "64 MiB kept live count (%d MiB before)", held>>20)
	runtime.KeepAlive(grown)
	assert.NoError(t, g.Check(), "a terabyte's bound admits this test")

	tight := memguard.New(1)
	err := tight.Check()
	require.Error(t, err, "one byte's bound refuses")
	assert.Contains(t, err.Error(), "past its bound")
}
