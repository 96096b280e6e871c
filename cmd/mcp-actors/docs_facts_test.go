package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsAgree: facts the operator's documents once stated differently in
// different places, checked where each is stated, so that they cannot
// drift apart again: the upgrade policy, what --data-dir holds (and a
// backup gets), how long a new cluster takes to start, what a restart
// needs of the other nodes.
func TestDocsAgree(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", name))
		require.NoError(t, err)
		return strings.Join(strings.Fields(string(b)), " ") // one line: facts wrap
	}
	cluster, ops, readme, changelog := read("docs/cluster.md"), read("docs/operations.md"), read("README.md"), read("CHANGELOG.md")

	// The upgrade policy: adjacent minor releases, never "the same release".
	policy := regexp.MustCompile(`(?i)a release reads every (cluster )?format the previous minor release writes`)
	for name, doc := range map[string]string{"docs/cluster.md": cluster, "docs/operations.md": ops, "CHANGELOG.md": changelog} {
		assert.True(t, policy.MatchString(doc), "%s states the upgrade policy (%s)", name, policy)
	}
	for name, doc := range map[string]string{"docs/cluster.md": cluster, "docs/operations.md": ops, "README.md": readme} {
		assert.False(t, strings.Contains(strings.ToLower(doc), "must run the same release"), "%s contradicts the upgrade policy", name)
	}

	// What --data-dir holds: the event logs unless --no-event-files.
	backup := section(t, ops, "## Backup and restore")
	for _, fact := range []string{"the event logs (in files by default; with `--no-event-files` they are in memory", "journals", "leases"} {
		assert.True(t, strings.Contains(backup, fact), "the backup section names what --data-dir holds: %q", fact)
	}
	assert.Contains(t, eventFilesHelp(t), "in JetStream files (the default)", "--event-files' help agrees: files by default")

	// Start-up: the figure measured in docs/operations.md, quoted the same
	// in docs/cluster.md; no older figure left.
	measured := regexp.MustCompile(`ready \(all three ` + "`/readyz`" + ` 200\) in ([0-9.]+ to [0-9.]+ s)`).FindStringSubmatch(ops)
	require.NotNil(t, measured, "docs/operations.md states the measured start-up time")
	assert.True(t, strings.Contains(cluster, measured[1]), "docs/cluster.md quotes the measured start-up time, %s", measured[1])
	for name, doc := range map[string]string{"docs/cluster.md": cluster, "docs/operations.md": ops, "README.md": readme} {
		assert.False(t, strings.Contains(doc, "usually 2–5 s"), "%s: an old start-up figure", name)
	}

	// A restart needs a majority, a new cluster all: both documents say so.
	assert.True(t, strings.Contains(cluster, "runs on 2"), "docs/cluster.md's readiness states include the majority wait")
	assert.True(t, strings.Contains(ops, "A node lost for good"), "docs/operations.md has the lost-node procedure")
	assert.True(t, strings.Contains(ops, "remove-node"), "docs/operations.md names the admin command that removes a lost node")
}

// section returns the text of doc (flattened to one line) from heading to
// the next heading of the same level.
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, heading+" ")
	require.GreaterOrEqual(t, i, 0, "no section %q", heading)
	rest := doc[i+len(heading):]
	level := heading[:strings.Index(heading, " ")+1]
	if j := strings.Index(rest, " "+level); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// eventFilesHelp returns the --event-files flag's help text.
func eventFilesHelp(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("cluster.go")
	require.NoError(t, err)
	m := regexp.MustCompile(`name:"event-files" default:"true"[^\n]*help:"([^"]*)"`).FindSubmatch(b)
	require.NotNil(t, m, "the --event-files flag in cluster.go")
	return string(m[1])
}
