package mcpactors_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// allowedImports is the table "What each package may import" of
// docs/design.md: for each package of the module, the packages of the
// module it may import. A package not listed may import anything but
// tests/ (cmd/mcp-actors, the tests themselves).
var allowedImports = map[string][]string{
	"messages":            {},
	"actors/dispatcher":   {"messages"},
	"actors/session":      {"actors/dispatcher", "internal/schema", "internal/sealed", "internal/tracing", "messages"},
	"actors/router":       {"actors/session", "messages"},
	"actors/transport":    {"actors/router", "internal/tracing", "messages"},
	"cluster":             {"actors/router", "actors/session", "internal/certfile", "internal/clusterapi", "internal/loopback", "internal/tracing", "messages", "metrics"},
	"metrics":             {"actors/session", "messages"},
	"internal/schema":     {},
	"internal/tracing":    {"messages"},
	"internal/loopback":   {},
	"internal/serverbin":  {},
	"internal/sealed":     {},
	"internal/memguard":   {},
	"internal/certfile":   {},
	"internal/sse":        {},
	"internal/access":     {"actors/router", "actors/session"},
	"internal/clusterapi": {"actors/router", "actors/session", "messages"},
	".": {"actors/dispatcher", "actors/session", "actors/router", "actors/transport", "metrics",
		"internal/access", "internal/clusterapi", "internal/schema", "internal/loopback", "internal/sealed", "internal/tracing", "internal/memguard", "internal/certfile", "messages"},
}

// TestImportRules keeps the import rules of docs/design.md true.
func TestImportRules(t *testing.T) {
	const module = "github.com/mcp-actors/mcp-actors"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	require.NoError(t, err, "go list")
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		if pkg == "" {
			pkg = "."
		}
		allowed, listed := allowedImports[pkg]
		for _, imp := range fields[1:] {
			dep, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			if strings.HasPrefix(dep, "tests/") || strings.HasPrefix(dep, "cmd/") {
				t.Errorf("%s imports %s: nothing imports cmd/ or tests/", pkg, dep)
			}
			if listed && !slices.Contains(allowed, dep) {
				t.Errorf("%s imports %s, which docs/design.md does not allow it", pkg, dep)
			}
		}
	}
}

// TestRootLinksNoNATS: a program built on the root package and messages
// alone — a stdio server, or HTTP on one node — links neither NATS's
// client nor its server: JoinCluster takes its node through
// internal/clusterapi, and only package cluster imports NATS.
func TestRootLinksNoNATS(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".", "./messages").Output()
	require.NoError(t, err, "go list -deps")
	var nats []string
	for line := range strings.Lines(string(out)) {
		if strings.HasPrefix(line, "github.com/nats-io/") {
			nats = append(nats, strings.TrimSpace(line))
		}
	}
	require.Empty(t, nats, "NATS packages the root package links")
}
