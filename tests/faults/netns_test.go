package faults_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// network is the network of a test's nodes: each node in a network
// namespace of its own, with two links.
//
//	root namespace                              namespace <prefix>n1
//	bridge <prefix>br ── <prefix>c1 ══veth══ cluster  10.213.y.11/24   routes, to the others' cluster links
//	10.214.y.1/30 ────── <prefix>h1 ══veth══ client   10.214.y.2/30    the HTTP listener, for the test's clients
//
// A fault takes a link down; nothing is closed and nothing is answered,
// so TCP peers see a black hole, never a reset:
//
//	isolate    the cluster link's bridge port is down: the node's routes go
//	           nowhere, its clients still reach it
//	blackhole  the client link's namespace end is down as well: nothing
//	           reaches the node (the root keeps its route to it, so the
//	           clients' packets are dropped, not sent out the default route)
//	heal       every link up again
//
// Every name starts with the test's prefix, mcpf<pid><n> (the test binary's
// pid and a count, in hex), and everything is removed at the end of the
// test; what a crashed test binary left behind is removed by the next one
// (removeStale). The root namespace routes only the client links' /30s,
// in a 10.214.y.0/24 that nothing else routes there (freeSubnet).
type network struct {
	t      *testing.T
	prefix string
	subnet int      // y in 10.213.y.0/24 (cluster links) and 10.214.y.0/24 (client links)
	ids    []string // the nodes, in order: node i's addresses derive from i
}

// Names inside each node's namespace.
const (
	clusterLink = "cluster"
	clientLink  = "client"
)

// ipTimeout bounds one ip command.
const ipTimeout = 10 * time.Second

// stalePattern matches the names a network creates: mcpf, the pid of the
// test binary that created it and a count, in hex.
var stalePattern = regexp.MustCompile(`^mcpf([0-9a-f]{6})[0-9a-f]{2}`)

// networks counts the networks (and probes) of this test binary.
var networks atomic.Uint32

// nextPrefix returns a prefix no other network of any test binary uses.
func nextPrefix() string {
	return fmt.Sprintf("mcpf%06x%02x", os.Getpid()&0xffffff, networks.Add(1)&0xff)
}

// netnsCheck is what netnsSupport found, once per test binary.
var netnsCheck = sync.OnceValues(func() ([]string, error) {
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("network namespaces are Linux's, this is %s", runtime.GOOS)
	}
	if uid := os.Geteuid(); uid != 0 {
		return nil, fmt.Errorf("not root (uid %d): creating network namespaces and links needs it", uid)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, errors.New("no ip (iproute2) on PATH")
	}
	removed, err := removeStale()
	if err != nil {
		return removed, fmt.Errorf("removing what an earlier test binary left: %w", err)
	}
	p := nextPrefix()
	err = ipAll(
		[]string{"netns", "add", p + "n0"},
		[]string{"link", "add", p + "br", "type", "bridge"},
		[]string{"link", "add", p + "c0", "type", "veth", "peer", "name", clusterLink, "netns", p + "n0"},
	)
	err = errors.Join(err, ipAll(
		[]string{"link", "del", p + "c0"},
		[]string{"link", "del", p + "br"},
		[]string{"netns", "del", p + "n0"},
	))
	if err != nil {
		return removed, fmt.Errorf("cannot create a network namespace, a bridge and a veth pair: %w", err)
	}
	return removed, nil
})

// netnsSupport reports why the tests cannot put nodes in network
// namespaces here (root, ip on PATH, a namespace, a bridge and a veth pair
// made and removed), or nil.
func netnsSupport() error {
	_, err := netnsCheck()
	return err
}

// staleReported is set once the stale names removed have been logged.
var staleReported atomic.Bool

// requireNetns skips t when network namespaces cannot be used here, and
// fails it instead when the environment variable CI is set: CI runs as
// root and must run these tests.
func requireNetns(t *testing.T) {
	t.Helper()
	removed, err := netnsCheck()
	if len(removed) > 0 && !staleReported.Swap(true) {
		t.Logf("removed what an earlier test binary left: %s", strings.Join(removed, ", "))
	}
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("CI is set, and this test needs network namespaces: %v", err)
	}
	t.Skipf("needs network namespaces (set CI to fail instead): %v", err)
}

// newNetwork makes the namespaces and links of nodes ids; they are removed
// at the end of t.
func newNetwork(t *testing.T, ids []string) *network {
	t.Helper()
	requireNetns(t)
	nw := &network{t: t, prefix: nextPrefix(), ids: ids}
	require.LessOrEqual(t, len(ids), 9, "at most nine nodes: interface names are short")
	t.Cleanup(nw.remove)
	unlock, err := lockSubnets()
	require.NoError(t, err)
	defer unlock() // once the client links are routed: the next network sees them
	nw.subnet, err = freeSubnet(os.Getpid() + int(networks.Load()))
	require.NoError(t, err)

	cmds := [][]string{{"link", "add", nw.bridge(), "type", "bridge"}, {"link", "set", nw.bridge(), "up"}}
	for i, id := range ids {
		ns := nw.namespace(id)
		cmds = append(cmds,
			[]string{"netns", "add", ns},
			[]string{"-n", ns, "link", "set", "lo", "up"},
			[]string{"link", "add", nw.clusterPort(id), "type", "veth", "peer", "name", clusterLink, "netns", ns},
			[]string{"link", "set", nw.clusterPort(id), "master", nw.bridge(), "up"},
			[]string{"-n", ns, "addr", "add", nw.clusterAddr(id) + "/24", "dev", clusterLink},
			[]string{"-n", ns, "link", "set", clusterLink, "up"},
			[]string{"link", "add", nw.clientPort(id), "type", "veth", "peer", "name", clientLink, "netns", ns},
			[]string{"addr", "add", fmt.Sprintf("10.214.%d.%d/30", nw.subnet, 4*i+1), "dev", nw.clientPort(id)},
			[]string{"link", "set", nw.clientPort(id), "up"},
			[]string{"-n", ns, "addr", "add", nw.clientAddr(id) + "/30", "dev", clientLink},
			[]string{"-n", ns, "link", "set", clientLink, "up"},
		)
	}
	require.NoError(t, ipAll(cmds...), "making the network %s", nw.prefix)
	t.Logf("network %s: cluster links 10.213.%d.0/24, client links 10.214.%d.0/24", nw.prefix, nw.subnet, nw.subnet)
	return nw
}

// index is node id's place in the network.
func (nw *network) index(id string) int {
	i := slices.Index(nw.ids, id)
	if i < 0 {
		nw.t.Fatalf("no node %s in the network", id)
	}
	return i
}

// namespace is node id's network namespace.
func (nw *network) namespace(id string) string { return nw.prefix + id }

// bridge is the cluster links' bridge, in the root namespace.
func (nw *network) bridge() string { return nw.prefix + "br" }

// clusterPort is the bridge's end of node id's cluster link.
func (nw *network) clusterPort(id string) string {
	return nw.prefix + "c" + strconv.Itoa(nw.index(id)+1)
}

// clientPort is the root namespace's end of node id's client link.
func (nw *network) clientPort(id string) string {
	return nw.prefix + "h" + strconv.Itoa(nw.index(id)+1)
}

// clusterAddr is node id's address on the cluster link.
func (nw *network) clusterAddr(id string) string {
	return fmt.Sprintf("10.213.%d.%d", nw.subnet, 11+nw.index(id))
}

// clientAddr is node id's address on its client link.
func (nw *network) clientAddr(id string) string {
	return fmt.Sprintf("10.214.%d.%d", nw.subnet, 4*nw.index(id)+2)
}

// isolate takes node id's cluster link down at the bridge: what it sends
// its peers and what they send it is dropped; its clients still reach it.
func (nw *network) isolate(id string) {
	nw.t.Helper()
	require.NoError(nw.t, ip("link", "set", nw.clusterPort(id), "down"))
	nw.t.Logf("net: isolate %s (cluster link down)", id)
}

// blackhole takes both of node id's links down: nothing reaches it.
func (nw *network) blackhole(id string) {
	nw.t.Helper()
	require.NoError(nw.t, ipAll(
		[]string{"link", "set", nw.clusterPort(id), "down"},
		[]string{"-n", nw.namespace(id), "link", "set", clientLink, "down"},
	))
	nw.t.Logf("net: black-hole %s (cluster and client links down)", id)
}

// heal brings every link up.
func (nw *network) heal() {
	nw.t.Helper()
	var cmds [][]string
	for _, id := range nw.ids {
		cmds = append(cmds,
			[]string{"link", "set", nw.clusterPort(id), "up"},
			[]string{"-n", nw.namespace(id), "link", "set", clientLink, "up"})
	}
	assert.NoError(nw.t, ipAll(cmds...), "healing the network %s", nw.prefix)
	nw.t.Logf("net: heal (every link up)")
}

// remove deletes the links, the namespaces and the bridge (each veth pair
// goes with its root end). Whatever is not there is skipped: a test that
// failed while making the network removes what it made.
func (nw *network) remove() {
	have, err := ownNames(nw.prefix)
	if !assert.NoError(nw.t, err) {
		return
	}
	var cmds [][]string
	for _, id := range nw.ids {
		for _, port := range []string{nw.clusterPort(id), nw.clientPort(id)} {
			if have[port] {
				cmds = append(cmds, []string{"link", "del", port})
			}
		}
		if ns := nw.namespace(id); have[ns] {
			cmds = append(cmds, []string{"netns", "del", ns})
		}
	}
	if have[nw.bridge()] {
		cmds = append(cmds, []string{"link", "del", nw.bridge()})
	}
	assert.NoError(nw.t, ipAll(cmds...), "removing the network %s", nw.prefix)
}

// ip runs `ip args…`, bounded by ipTimeout.
func ip(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), ipTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// ipOutput runs `ip args…`, bounded by ipTimeout, and returns what it
// printed.
func ipOutput(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), ipTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", args...).Output()
	if err != nil {
		return "", fmt.Errorf("ip %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

// ipAll runs the commands in order, stopping at the first that fails.
func ipAll(cmds ...[]string) error {
	for _, args := range cmds {
		if err := ip(args...); err != nil {
			return err
		}
	}
	return nil
}

// ownNames returns the namespaces and root-namespace links whose names
// start with prefix.
func ownNames(prefix string) (map[string]bool, error) {
	namespaces, err := ipOutput("netns", "list")
	if err != nil {
		return nil, err
	}
	links, err := ipOutput("-o", "link", "show")
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for line := range strings.Lines(namespaces) {
		// "name" or "name (id: N)"
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], prefix) {
			out[f[0]] = true
		}
	}
	for line := range strings.Lines(links) {
		// "N: name@peer: <FLAGS> …" or "N: name: <FLAGS> …"
		if f := strings.Fields(line); len(f) > 1 {
			name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
			if strings.HasPrefix(name, prefix) {
				out[name] = true
			}
		}
	}
	return out, nil
}

// removeStale removes the namespaces and links a test binary that is no
// longer running left behind (it crashed, or was killed on a timeout),
// and those named for this binary's pid (a pid used again): first the
// processes still in such a namespace — nodes that binary started — are
// killed, then the names deleted. It returns what it removed.
func removeStale() ([]string, error) {
	names, err := ownNames("mcpf")
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(names)) {
		m := stalePattern.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		pid, _ := strconv.ParseInt(m[1], 16, 64)
		if int(pid) != os.Getpid()&0xffffff {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
				continue // its test binary runs
			}
		}
		if err := removeName(name); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, name)
	}
	return removed, errors.Join(errs...)
}

// removeName deletes a stale namespace (killing what still runs in it)
// or root-namespace link. A link gone meanwhile (the other end of a pair
// just deleted) is not an error.
func removeName(name string) error {
	pids, err := ipOutput("netns", "pids", name)
	if err != nil { // not a namespace: a link
		if err := ip("link", "del", name); err != nil {
			if _, lerr := ipOutput("link", "show", name); lerr != nil {
				return nil
			}
			return err
		}
		return nil
	}
	for _, f := range strings.Fields(pids) {
		if pid, err := strconv.Atoi(f); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return ip("netns", "del", name)
}

// subnetLock is held while a test binary picks its subnet and routes its
// client links, so that two test binaries never pick the same one.
const subnetLock = "/run/mcp-actors-faults-netns.lock"

// lockSubnets takes subnetLock, waiting for it 30 s at most, and returns
// its release.
func lockSubnets() (func(), error) {
	f, err := os.OpenFile(subnetLock, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	_, locked := waitUntil(context.Background(), 30*time.Second, func() bool {
		return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
	})
	if !locked {
		f.Close()
		return nil, fmt.Errorf("%s: held by another test binary for 30 s", subnetLock)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// freeSubnet returns a y, starting from seed, such that the root namespace
// has no address or route within 10.213.y.0/24 or 10.214.y.0/24 (another
// network's client links among them), nor a route of /16 or narrower that
// covers them.
func freeSubnet(seed int) (int, error) {
	addrs, err := ipOutput("-4", "-o", "addr", "show")
	if err != nil {
		return 0, err
	}
	routes, err := ipOutput("-4", "route", "show", "table", "all")
	if err != nil {
		return 0, err
	}
	var used []*net.IPNet
	for _, f := range strings.Fields(addrs + " " + routes) {
		if _, n, err := net.ParseCIDR(f); err == nil {
			if ones, _ := n.Mask.Size(); ones >= 16 {
				used = append(used, n)
			}
		} else if a := net.ParseIP(f); a != nil && a.To4() != nil {
			used = append(used, &net.IPNet{IP: a.To4(), Mask: net.CIDRMask(32, 32)})
		}
	}
	for k := range 256 {
		y := (seed + k) % 256
		clash := false
		for _, u := range used {
			for _, second := range []int{213, 214} {
				ours := &net.IPNet{IP: net.IPv4(10, byte(second), byte(y), 0).To4(), Mask: net.CIDRMask(24, 32)}
				if ours.Contains(u.IP) || u.Contains(ours.IP) {
					clash = true
				}
			}
		}
		if !clash {
			return y, nil
		}
	}
	return 0, errors.New("no free 10.213.y.0/24 and 10.214.y.0/24 in the root namespace")
}
