// Golden scenarios for the reference set.
//
// Each file in testdata/*.txtar is one protocol flow, played against a fresh
// server with the reference set registered, on one session, with no
// transport in between (the format is documented in harness/scenario.go). A
// file is a short description followed by a "transcript" file: "> " lines
// are what the client sends (byte for byte), "< " lines what the server must
// send back. Consecutive "< " lines form a group the server may send in any
// order; a comment line ("# then") between two "< " lines splits them into
// groups that must arrive in that order. In "< " lines, "$ANY" matches any
// value and "$NAME" binds a value at its first appearance (the ID of a
// server-to-client request, say) that later lines, "> " lines included,
// reuse; "$$" starts a literal "$".
//
// To add a scenario:
//
//  1. Create testdata/<flow>.txtar: a description, then "-- transcript --"
//     with the full handshake (initialize with the capabilities the flow
//     needs, then notifications/initialized) and the flow. For each group,
//     write as many "< " lines as the server will send; any JSON will do
//     for now, but put placeholders where values are volatile (for a server
//     request, `< {"id":"$S"}`, so that your answer can say "id":"$S").
//
//  2. Regenerate the expectations:
//
//     go test ./reftools/ -run Scenarios -update
//
//     Update rewrites only the "< " lines, from what the server sent,
//     keeping placeholders where the old lines had them and each group's
//     lines in the order they were written.
//
//  3. Read every generated line against the MCP specification and
//     docs/reference-tools.md: the golden file must encode correct behaviour, not
//     whatever the server did; a wrong line is a server bug to fix, not to
//     enshrine. Then run without -update, with -race, several times
//     (go test -race -count=3 ./reftools/): every group must be
//     deterministic, so never expect a message that can race another group
//     (progress against a cancellation, say) and never count messages that
//     depend on timing.
package reftools_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
	"github.com/mcp-actors/mcp-actors/messages"
	"github.com/mcp-actors/mcp-actors/reftools"
)

// TestScenarios plays the golden transcripts; go test -run Scenarios
// -update rewrites them (the harness's flag).
func TestScenarios(t *testing.T) {
	harness.RunScenarios(t, "testdata/*.txtar", newServer)
}

// TestScenariosOnACluster plays the same transcripts against a
// three-node in-process cluster, each client message going through the
// next node.
func TestScenariosOnACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	harness.NewCluster(t, 3, newServer).RunScenarios(t, "testdata/*.txtar")
}

// newServer returns a fresh server with the reference set registered.
func newServer(tb testing.TB) *mcpactors.Server {
	srv := mcpactors.NewServer(messages.Implementation{Name: "reftools-scenarios", Version: "0.0.0"}, nil)
	require.NoError(tb, reftools.Register(srv))
	return srv
}
