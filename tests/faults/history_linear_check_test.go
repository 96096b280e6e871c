package faults_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLinearizableHistories: histories of increments and reads that some
// order explains pass every check.
func TestLinearizableHistories(t *testing.T) {
	for _, tc := range []struct {
		name string
		ops  []op
	}{
		{"reads between increments", numbered([]op{
			get("a", "n1", 0, 0.5, "0"),
			call("a", "n2", 1, 1.5, "1"),
			get("a", "n3", 2, 2.5, "1"),
			call("a", "n1", 3, 3.5, "2"),
			get("a", "n2", 4, 4.5, "2"),
			get("a", "n3", 5, 5.5, "2"),
		})},
		{"a read at once with an increment sees the count before it", numbered([]op{
			call("a", "n1", 0, 2, "1"),
			get("a", "n2", 1, 1.5, "0"),
		})},
		{"a read at once with an increment sees the count after it", numbered([]op{
			call("a", "n1", 0, 2, "1"),
			get("a", "n2", 1, 1.5, "1"),
		})},
		{"an increment of unknown outcome shows in the next read", numbered([]op{
			call("a", "n1", 0, 0.5, "1"),
			call("a", "n2", 1, 1.5, "!"),
			get("a", "n3", 2, 2.5, "2"),
		})},
		// It ran late: after a read that did not see it, before the next
		// increment.
		{"an increment of unknown outcome shows later", numbered([]op{
			call("a", "n1", 0, 0.5, "1"),
			call("a", "n2", 1, 1.5, "!"),
			get("a", "n3", 2, 2.5, "1"),
			call("a", "n1", 3, 3.5, "3"),
			get("a", "n2", 4, 4.5, "3"),
		})},
		{"an increment of unknown outcome never counts", numbered([]op{
			call("a", "n1", 0, 0.5, "1"),
			call("a", "n2", 1, 1.5, "!"),
			call("a", "n3", 2, 2.5, "2"),
			get("a", "n1", 3, 3.5, "2"),
		})},
		{"a failed read tells nothing", numbered([]op{
			call("a", "n1", 0, 0.5, "1"),
			get("a", "n2", 1, 1.5, "!"),
			get("a", "n3", 3, 3.5, "x"),
			get("a", "n1", 4, 4.5, "1"),
		})},
		{"a refused increment never counts", numbered([]op{
			call("a", "n1", 0, 0.5, "1"),
			call("a", "n2", 1, 1.5, "x"),
			get("a", "n3", 2, 2.5, "1"),
			call("a", "n1", 3, 3.5, "2"),
		})},
		{"sessions count on their own", numbered(
			[]op{call("a", "n1", 0, 0.5, "1"), get("a", "n2", 1, 1.5, "1")},
			[]op{get("b", "n2", 0, 0.5, "0"), call("b", "n3", 1, 1.5, "1")},
		)},
		// A partition's worth of calls of unknown outcome, none of which
		// counted: the usual encoding (an increment returning at +∞) would
		// try 2^40 orders; the token one decides at once.
		{"many increments of unknown outcome", numbered(unknownThenRead(40))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Empty(t, check(tc.ops))
		})
	}
}

// TestLinearizableUnanswered: a call that nothing came back for is a
// violation of its own (every request ends), and for the counter an
// increment that may count, or a read that tells nothing.
func TestLinearizableUnanswered(t *testing.T) {
	vs := check(numbered([]op{
		call("a", "n1", 0, 0.5, "1"),
		call("a", "n2", 1, 1.5, "?"),
		get("a", "n3", 2, 2.5, "?"),
		get("a", "n1", 3, 3.5, "1"),
		call("a", "n2", 4, 4.5, ""),
		get("a", "n3", 5, 5.5, "2"),
		call("a", "n1", 6, 6.5, "4"),
	}))
	assert.Equal(t, []string{noAnswer, noAnswer, notEnded}, kinds(vs), "%v", vs)
}

// unknownThenRead is one answered increment, n that failed, a read of
// the first and another increment.
func unknownThenRead(n int) []op {
	out := []op{call("a", "n1", 0, 0.5, "1")}
	for i := range n {
		out = append(out, call("a", fmt.Sprintf("n%d", i%3+1), float64(i+1), float64(i+1)+0.5, "!"))
	}
	return append(out,
		get("a", "n1", float64(n+1), float64(n+1)+0.5, "1"),
		call("a", "n2", float64(n+2), float64(n+2)+0.5, "2"))
}

// TestNotLinearizableHistories: what no order explains fails, also where
// the arithmetic checks of test_counter alone see nothing.
func TestNotLinearizableHistories(t *testing.T) {
	for _, tc := range []struct {
		name string
		ops  []op
		want []string
	}{
		// An old owner answers a read after its lease: it has not seen
		// the increment its successor acknowledged.
		{"a stale read", numbered([]op{
			call("a", "n1", 0, 0.5, "1"),
			call("a", "n2", 1, 1.5, "2"),
			get("a", "n1", 2, 2.5, "1"),
		}), []string{notLinearizable}},
		{"a stale read at zero", numbered([]op{
			call("a", "n2", 1, 1.5, "1"),
			get("a", "n1", 2, 2.5, "0"),
		}), []string{notLinearizable}},
		{"reads step back", numbered([]op{
			call("a", "n1", 0, 0.5, "1"),
			call("a", "n2", 0.6, 5, "2"),
			get("a", "n3", 1, 1.5, "2"),
			get("a", "n1", 2, 2.5, "1"),
		}), []string{notLinearizable}},
		{"a read of a count never reached", numbered([]op{
			call("a", "n1", 0, 0.5, "1"),
			get("a", "n2", 1, 1.5, "2"),
		}), []string{notLinearizable}},
		// The arithmetic checks take any failed call for a gap: a refused
		// one never ran.
		{"a refused increment explains no gap", numbered(seq("a", "1", "x", "3")), []string{notLinearizable}},
		{"an increment of unknown outcome counts once", numbered([]op{
			call("a", "n1", 0, 0.5, "1"),
			call("a", "n2", 1, 1.5, "!"),
			get("a", "n3", 2, 2.5, "3"),
		}), []string{notLinearizable}},
		{"an increment of unknown outcome counts after it started", numbered([]op{
			call("a", "n1", 0, 0.5, "1"),
			get("a", "n2", 1, 1.5, "2"),
			call("a", "n3", 2, 2.5, "!"),
		}), []string{notLinearizable}},
		{"a read that is not a count", numbered([]op{
			call("a", "n1", 0, 0.5, "1"),
			get("a", "n2", 1, 1.5, "one"),
		}), []string{notLinearizable}},
		{"sessions are checked on their own", numbered(
			[]op{call("a", "n1", 0, 0.5, "1"), get("a", "n2", 1, 1.5, "1")},
			[]op{call("b", "n2", 0, 0.5, "1"), get("b", "n3", 1, 1.5, "0")},
		), []string{notLinearizable}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := check(tc.ops)
			assert.Equal(t, tc.want, kinds(vs), "%v", vs)
		})
	}
}

// TestNotLinearizableNamesTheRead: the violation names the last call an
// order explains and the read that cannot follow it, and pictures the
// history.
func TestNotLinearizableNamesTheRead(t *testing.T) {
	vs := check(numbered([]op{
		call("a", "n1", 0, 0.5, "1"),
		call("a", "n2", 1, 1.5, "2"),
		get("a", "n1", 2, 2.5, "1"),
	}))
	require.Equal(t, []string{notLinearizable}, kinds(vs))
	v := vs[0]
	require.Len(t, v.ops, 2, "%v", v)
	assert.Equal(t, []int{2, 3}, []int{v.ops[0].n, v.ops[1].n})
	assert.Contains(t, v.String(), `none lets test_counter_get → "1", the second, follow it`)
	assert.Contains(t, v.String(), `#3 a test_counter_get via n1`)

	require.NotNil(t, v.visualize)
	var page bytes.Buffer
	require.NoError(t, v.visualize(&page))
	assert.Contains(t, page.String(), "<html")
	assert.Contains(t, page.String(), "read → 1")

	said := visualize(t, v, 1)
	path, ok := strings.CutPrefix(said, "Porcupine's picture of it: ")
	require.True(t, ok, said)
	written, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, page.String(), string(written))
}
