package transport_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcp-actors/mcp-actors/actors/transport"
)

// TestMain runs the tests; with MCP_ACTORS_TEST_HOLD=now every GET stream
// is held (taken over from net/http) as soon as it has started, rather
// than once it has been quiet for a while, so that CI runs the GET tests
// on both paths.
func TestMain(m *testing.M) {
	if os.Getenv("MCP_ACTORS_TEST_HOLD") == "now" {
		transport.SetHoldAfter(0)
	}
	goleak.VerifyTestMain(m)
}
