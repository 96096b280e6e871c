package reftools_test

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	mcpactors "github.com/mcp-actors/mcp-actors"
	"github.com/mcp-actors/mcp-actors/harness"
)

// Golden transcripts of URL elicitation in both eras (testdata/url: a
// 2025-11-25 session; testdata/modern_url: 2026-07-28 over HTTP), and of
// 2026-07-28 across a three-node cluster (testdata/modern_cluster:
// subscriptions/listen fed from another node and ended by a drain, a URL
// elicitation completed on a third node). Their actions:
//
//	! complete X [N]   the page's callback on node N (default 1) says the
//	                   step is done: X is the elicitation ID, or the URL
//	                   the client was sent to (its id parameter)
//	! connected        needs_account stops answering -32042

// urlScenarioServer returns a server with the reference set and the URL
// tools (connect_account, needs_account), and the scenarios' actions.
func urlScenarioServer() (func(testing.TB) *mcpactors.Server, harness.Actions) {
	var done atomic.Bool
	newServer := func(tb testing.TB) *mcpactors.Server {
		done.Store(false)
		srv := newServer(tb)
		addURLTools(tb, srv, &done)
		return srv
	}
	return newServer, harness.Actions{
		"complete": completeAction,
		"connected": func([]*mcpactors.Server, []string) error {
			done.Store(true)
			return nil
		},
	}
}

// completeAction is "! complete X [N]".
func completeAction(servers []*mcpactors.Server, args []string) error {
	if len(args) == 0 || len(args) > 2 {
		return fmt.Errorf("want an elicitation ID or URL, and a node number")
	}
	id := args[0]
	if u, err := url.Parse(id); err == nil && u.Query().Has("id") {
		id = u.Query().Get("id")
	}
	i := 0
	if len(args) == 2 {
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 || n > len(servers) {
			return fmt.Errorf("no node %q", args[1])
		}
		i = n - 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return servers[i].CompleteElicitation(ctx, "", id)
}

func TestURLScenarios(t *testing.T) {
	newServer, acts := urlScenarioServer()
	harness.RunScenariosWith(t, "testdata/url/*.txtar", newServer, acts)
}

func TestModernURLScenarios(t *testing.T) {
	newServer, acts := urlScenarioServer()
	harness.RunModernScenariosWith(t, "testdata/modern_url/*.txtar", newServer, acts)
}

func TestModernScenariosOnACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	files, err := filepath.Glob("testdata/modern_cluster/*.txtar")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		// A cluster each: a scenario drains a node, or changes the catalog.
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			newServer, acts := urlScenarioServer()
			harness.NewCluster(t, 3, newServer).RunModernScenarios(t, file, acts)
		})
	}
}
