package main

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"

	"github.com/mcp-actors/mcp-actors/cluster"
)

// The memory budget's figures (docs/operations.md, "Memory"): what serve
// sizes --max-sessions by when it is not given.
const (
	// limitRatio is the share of the container's memory limit that
	// GOMEMLIMIT is set to: the rest is for what the Go runtime does not
	// count (thread stacks outside Go, the binary's pages).
	limitRatio = 0.9
	// sessionBytes is what an idle session costs at most, rounded up from
	// the measured figures (bench/: 43 KB of RSS for a legacy session
	// with its GET stream open on one node; the soak's figure in a
	// cluster).
	sessionBytes = 64 << 10
	// baseBytes is what a node holds with no session: the runtime, the
	// embedded NATS server's buffers and caches, the catalog.
	baseBytes = 128 << 20
	// heldShare is the share of GOMEMLIMIT the memory held (live objects,
	// stacks, fragmentation: memguard) may reach before new sessions are
	// refused: past it the collector runs nearly without pause, and a
	// little more kills the node.
	heldShare = 0.8
	// noLimitSessions is --max-sessions without a memory limit.
	noLimitSessions = 100_000
)

// memoryBudget is how a node sizes itself by its memory limit.
type memoryBudget struct {
	limit       int64  // GOMEMLIMIT in effect, 0: none
	source      string // where limit came from: "cgroup", "GOMEMLIMIT" or ""
	jetStream   int64  // the embedded JetStream's memory store, in the heap
	maxSessions int    // --max-sessions, or what the budget holds
	maxHeld     int64  // refuse new sessions past it (0: no check)
}

// setMemoryLimit sets GOMEMLIMIT to limitRatio of the cgroup's memory
// limit, unless the environment sets GOMEMLIMIT (then that stands), and
// returns the limit in effect (0: none) and where it came from.
func setMemoryLimit(log *slog.Logger) (int64, string) {
	if env := debug.SetMemoryLimit(-1); env != math.MaxInt64 {
		return env, "GOMEMLIMIT" // the runtime read the environment
	}
	limit, err := memlimit.Set(memlimit.WithRatio(limitRatio))
	switch {
	case err != nil && !errors.Is(err, memlimit.ErrNoCgroup) && !errors.Is(err, memlimit.ErrCgroupsNotSupported):
		log.Warn("reading the container's memory limit failed; GOMEMLIMIT is not set", "err", err)
		return 0, ""
	case err != nil || limit == math.MaxInt64:
		return 0, ""
	}
	return limit, "cgroup"
}

// newMemoryBudget sizes a node: with a memory limit, --max-sessions
// (when maxSessions is 0) is what the limit holds after the JetStream
// memory store and the base, one sessionBytes each, and the memory held may
// reach heldShare of the limit; without one, noLimitSessions and no check.
func newMemoryBudget(limit int64, source string, jetStream int64, maxSessions int) (memoryBudget, error) {
	b := memoryBudget{limit: limit, source: source, jetStream: jetStream, maxSessions: maxSessions}
	if limit <= 0 {
		if b.maxSessions == 0 {
			b.maxSessions = noLimitSessions
		}
		return b, nil
	}
	room := limit - jetStream - baseBytes
	if room < 100*sessionBytes {
		return b, fmt.Errorf("the memory limit (%s: %d MiB) leaves no room for sessions: the node needs %d MiB for itself and %d MiB for JetStream's memory store (--event-bytes, --no-event-files); raise the limit",
			source, limit>>20, baseBytes>>20, jetStream>>20)
	}
	b.maxHeld = int64(float64(limit) * heldShare)
	if b.maxSessions == 0 {
		b.maxSessions = int(room / sessionBytes)
	}
	return b, nil
}

// over returns a warning when --max-sessions was set past what the budget
// holds, "" otherwise.
func (b memoryBudget) over() string {
	if b.limit <= 0 {
		return ""
	}
	holds := int((b.limit - b.jetStream - baseBytes) / sessionBytes)
	if b.maxSessions <= holds {
		return ""
	}
	return fmt.Sprintf("--max-sessions %d is more than the memory limit holds (about %d); new sessions will be refused (503) when memory is near the limit", b.maxSessions, holds)
}

// attrs returns the start-up log line's attributes.
func (b memoryBudget) attrs() []any {
	if b.limit <= 0 {
		return []any{"memory_limit", "none", "max_sessions", b.maxSessions}
	}
	return []any{"memory_limit", fmt.Sprintf("%dMiB", b.limit>>20), "memory_limit_from", b.source,
		"max_sessions", b.maxSessions, "max_held_memory", fmt.Sprintf("%dMiB", b.maxHeld>>20)}
}

// jetStreamMemory is the embedded JetStream's memory store of these flags.
func (f *clusterFlags) jetStreamMemory() int64 {
	return cluster.Options{URLs: splitList(f.NATSURL), EventFiles: f.EventFiles, EventBytes: f.EventBytes}.JetStreamMemory()
}
