package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemoryBudget(t *testing.T) {
	const mib = 1 << 20
	b, err := newMemoryBudget(0, "", 64*mib, 0)
	require.NoError(t, err)
	assert.Equal(t, noLimitSessions, b.maxSessions, "no limit: the old default")
	assert.Zero(t, b.maxHeld, "no limit: no check")
	assert.Empty(t, b.over())

	// The StatefulSet's 2 GiB: GOMEMLIMIT 1843 MiB, event logs on files.
	b, err = newMemoryBudget(1843*mib, "cgroup", 64*mib, 0)
	require.NoError(t, err)
	assert.Equal(t, (1843-64-128)*mib/sessionBytes, b.maxSessions)
	limit := int64(1843 * mib)
	assert.Equal(t, int64(float64(limit)*heldShare), b.maxHeld)
	assert.Empty(t, b.over())

	// Event logs in memory take their --event-bytes off the sessions.
	mem, err := newMemoryBudget(1843*mib, "cgroup", (256+64)*mib, 0)
	require.NoError(t, err)
	assert.Equal(t, (1843-320-128)*mib/sessionBytes, mem.maxSessions)

	// A --max-sessions past the budget is kept, with a warning.
	b, err = newMemoryBudget(1843*mib, "cgroup", 64*mib, 100_000)
	require.NoError(t, err)
	assert.Equal(t, 100_000, b.maxSessions)
	assert.Contains(t, b.over(), "more than the memory limit holds")

	_, err = newMemoryBudget(180*mib, "GOMEMLIMIT", 64*mib, 0)
	require.Error(t, err, "a limit below the node's own needs")
	assert.Contains(t, err.Error(), "raise the limit")
}

// TestServeMemoryLimitFromEnvironment: GOMEMLIMIT sizes --max-sessions
// when the flag is not given; too small a limit is refused at start.
func TestServeMemoryLimitFromEnvironment(t *testing.T) {
	sp := startServe(t, []string{"GOMEMLIMIT=512MiB"})
	want := (512 - 64 - 128) << 20 / sessionBytes
	assert.Contains(t, sp.stderr.String(), fmt.Sprintf("memory_limit=512MiB memory_limit_from=GOMEMLIMIT max_sessions=%d max_held_memory=409MiB", want))

	code, _, stderr := runBinEnv(t, []string{"GOMEMLIMIT=150MiB"}, "serve", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir())
	assert.Equal(t, exitConfig, code)
	assert.Contains(t, stderr, "leaves no room for sessions")
}

// memoryCgroup makes a memory cgroup under this process's own with a
// limit of limit bytes and returns the file a process joins it by
// (cgroup.procs); it skips the test where that cannot be done (not root,
// no memory controller). The cgroup is removed when the test ends.
func memoryCgroup(t *testing.T, limit int64) string {
	t.Helper()
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		t.Skipf("no cgroups here: %v", err)
	}
	defer f.Close()
	var dir, limitFile string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			dir, limitFile = filepath.Join("/sys/fs/cgroup/memory", parts[2]), "memory.limit_in_bytes"
		case parts[0] == "0" && dir == "":
			if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
				dir, limitFile = filepath.Join("/sys/fs/cgroup", parts[2]), "memory.max"
			}
		}
	}
	if dir == "" {
		t.Skip("no memory cgroup controller here")
	}
	child := filepath.Join(dir, fmt.Sprintf("mcp-actors-test-%d", os.Getpid()))
	if err := os.Mkdir(child, 0o755); err != nil {
		t.Skipf("cannot make a memory cgroup (%v): run as root to test the container's limit", err)
	}
	t.Cleanup(func() { _ = os.Remove(child) }) // after the process has exited: cleanups run last-in first-out
	if err := os.WriteFile(filepath.Join(child, limitFile), []byte(fmt.Sprint(limit)), 0o644); err != nil {
		t.Skipf("cannot limit a memory cgroup: %v", err)
	}
	return filepath.Join(child, "cgroup.procs")
}

// TestServeRefusesSessionsBeforeItsMemoryLimit: a node in a container
// (a memory cgroup) of 320 MiB takes GOMEMLIMIT from it (288 MiB), and,
// with --max-sessions far past what that holds, refuses new sessions with
// 503 "memory is near its limit" once it holds 80% of it — rather than be
// OOM-killed, which it is without the check (about 7,500 sessions with
// their GET streams in 320 MiB, measured). Clients open sessions, each
// with its GET stream held open, 16 at a time, until one is refused (at
// most 30,000, for at most 3 minutes); then the node still answers its
// probes and an open session's request, and the process has not exited.
func TestServeRefusesSessionsBeforeItsMemoryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a node's memory")
	}
	procs := memoryCgroup(t, 320<<20)
	p := startWrapped(t, nil, []string{"sh", "-c", `echo $$ > "$0" && exec "$@"`, procs},
		"serve", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--max-sessions", "1000000")
	sp := waitServing(t, p)
	require.Contains(t, sp.stderr.String(), "memory_limit=288MiB memory_limit_from=cgroup")
	base := strings.TrimSuffix(sp.url, "/mcp")
	waitStatus(t, base+"/readyz", http.StatusOK, "the node becomes ready")

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var (
		mu       sync.Mutex
		streams  []*http.Response
		first    string
		opened   atomic.Int64
		refused  atomic.Bool
		problems []string
	)
	t.Cleanup(func() {
		for _, r := range streams {
			_ = r.Body.Close()
		}
	})
	deadline := time.Now().Add(3 * time.Minute)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for !refused.Load() && opened.Load() < 30_000 && time.Now().Before(deadline) {
				sid, stream, problem := openWithStream(client, sp.url)
				mu.Lock()
				switch {
				case problem == "memory":
					refused.Store(true)
				case problem != "":
					problems = append(problems, problem)
					refused.Store(true) // stop: the check below says what went wrong
				default:
					streams = append(streams, stream)
					if first == "" {
						first = sid
					}
					opened.Add(1)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("%d sessions open, each with its GET stream, when the node refused one", opened.Load())
	require.Empty(t, problems, "every session opened, or refused for memory")
	require.True(t, refused.Load(), "a session was refused for memory (opened %d)", opened.Load())
	select {
	case err := <-p.done:
		p.done <- err
		t.Fatalf("the node exited (OOM-killed?): %v\n%s", err, p.stderr)
	default:
	}
	status, _ := adminDo(t, http.MethodGet, base+"/healthz", "")
	assert.Equal(t, http.StatusOK, status)
	status, _, body := mcpPost(t, sp.url, first, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	assert.Equal(t, http.StatusOK, status, "an open session is served: %s", body)
}

// openWithStream opens a session at url, sends initialized and opens its
// GET stream, which it returns open. problem is "memory" for a refusal for
// memory, a description for anything else unexpected, "" on success.
func openWithStream(client *http.Client, url string) (sid string, stream *http.Response, problem string) {
	post := func(sid, body string) (*http.Response, error) {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		return client.Do(req)
	}
	resp, err := post("", initializeBody)
	if err != nil {
		return "", nil, "initialize: " + err.Error()
	}
	b := new(strings.Builder)
	_, _ = bufio.NewReader(resp.Body).WriteTo(b)
	_ = resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(b.String(), "memory is near its limit") {
		return "", nil, "memory"
	}
	if resp.StatusCode != http.StatusOK {
		return "", nil, fmt.Sprintf("initialize: %d %s", resp.StatusCode, b)
	}
	sid = resp.Header.Get("Mcp-Session-Id")
	if resp, err = post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return "", nil, "initialized: " + err.Error()
	}
	_ = resp.Body.Close()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return "", nil, err.Error()
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if stream, err = client.Do(req); err != nil {
		return "", nil, "GET: " + err.Error()
	}
	if stream.StatusCode != http.StatusOK {
		_ = stream.Body.Close()
		return "", nil, fmt.Sprintf("GET: %d", stream.StatusCode)
	}
	return sid, stream, ""
}
