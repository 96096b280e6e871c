package faults_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStatefulSetLife plays what Kubernetes does with deploy/kubernetes
// against `serve` processes, each pod a node named as the StatefulSet
// names it, with the manifest's lame duck, drain, grace period, readiness
// probe and disruption budget:
//
//  1. a parallel start (podManagementPolicy: Parallel);
//  2. a rolling update, pods in reverse ordinal order, each next one only
//     once the last is ready again;
//  3. an eviction under the disruption budget: while the evicted pod is
//     away, an eviction of another is refused;
//  4. a machine drained: its pod evicted and rescheduled elsewhere, with a
//     new address (its route port behind the same name), its ID and volume;
//  5. scaled down by one and up again.
//
// Clients run throughout, sending only to the Service's endpoints (the
// pods ready and not terminating): legacy sessions calling test_counter
// and test_counter_get, and 2026-07-28 clients calling test_echo and
// test_elicitation (whose retry may reach another pod). What must hold:
// the Service is never empty; every call is answered — these are planned
// events, and a stopping node hands its sessions over before it stops
// answering, a call that reaches it meanwhile being forwarded, not
// refused; each pod exits within the grace period; and the history is
// clean (each session's counter linearizable).
func TestStatefulSetLife(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a StatefulSet's life against three serve processes")
	}
	m := readManifest(t)
	require.True(t, m.parallel, "the StatefulSet starts its pods in parallel: a node is ready only once it joined the others")
	var pods []string
	for i := range m.replicas {
		pods = append(pods, m.pod(i))
	}
	c := startNamedCluster(t, pods, 15*time.Second,
		"--lame-duck", m.lameDuck.String(), "--shutdown-timeout", m.drain.String())
	p := &player{t: t, m: m, c: c}
	p.svc = newService(t, m, c.nodes)
	for i := range c.nodes {
		require.True(t, p.svc.awaitReady(i), "%s is ready after the parallel start", m.pod(i))
	}
	h := &history{}
	cl := newClient(t, c, h)
	var sessions []*session
	for i := range c.nodes {
		sessions = append(sessions, openSessions(t, cl, fmt.Sprintf("s%d-", i), i, 2, callBound)...)
	}
	clients := startServiceClients(t, p.svc, cl, sessions, 2)
	p.progress(h, sessions, "after the start")

	for i := m.replicas - 1; i >= 0; i-- {
		p.stopPod(i)
		p.createPod(i)
		p.progress(h, sessions, "rolling update: "+m.pod(i)+" updated")
	}

	require.True(t, p.evict(1), "evicting %s: every other pod is ready", m.pod(1))
	assert.False(t, p.evict(0), "evicting %s while %s is away: the disruption budget refuses it", m.pod(0), m.pod(1))
	p.createPod(1)
	p.progress(h, sessions, "eviction: "+m.pod(1)+" back")

	require.True(t, p.evict(0), "draining %s's machine", m.pod(0))
	p.moveRoutes(0)
	p.createPod(0)
	p.progress(h, sessions, "drain: "+m.pod(0)+" rescheduled with a new address")

	last := m.replicas - 1
	p.stopPod(last)
	p.progress(h, sessions, fmt.Sprintf("scaled to %d", last))
	p.createPod(last)
	p.progress(h, sessions, fmt.Sprintf("scaled to %d", m.replicas))

	clients.stop()
	assert.Empty(t, p.svc.emptied(), "the Service always has an endpoint")
	for _, o := range h.snapshot() {
		assert.True(t, o.ok(), "every call is answered through planned events: %s", o)
	}
	requireClean(t, h)
}

// player plays Kubernetes's part: it stops and creates pods.
type player struct {
	t   *testing.T
	m   manifest
	c   *cluster
	svc *service
}

// stopPod deletes pod i as the kubelet does: SIGTERM; the Service drops
// it endpointDelay later; SIGKILL if it has not exited within the grace
// period (which fails the test).
func (p *player) stopPod(i int) {
	n := p.c.nodes[i]
	at := time.Now()
	require.True(p.t, n.signalStop(), "%s is running", n.id)
	hold(p.t, endpointDelay)
	p.svc.terminate(i)
	n.awaitExit(at.Add(p.m.grace))
	p.t.Logf("%s stopped in %s", n.id, time.Since(at).Round(time.Millisecond))
}

// createPod creates pod i again (the same ID and volume) and waits until
// the Service sends it clients.
func (p *player) createPod(i int) {
	n := p.c.nodes[i]
	at := time.Now()
	p.svc.created(i)
	n.restart()
	require.True(p.t, p.svc.awaitReady(i), "%s is ready again: %s", n.id, n)
	p.t.Logf("%s created again, ready in %s", n.id, time.Since(at).Round(time.Millisecond))
}

// evict evicts pod i if the disruption budget allows it (the pods
// healthy now, beyond replicas − maxUnavailable), and reports whether it
// did.
func (p *player) evict(i int) bool {
	if len(p.svc.endpoints())-(p.m.replicas-p.m.maxUnavailable) <= 0 {
		return false
	}
	p.stopPod(i)
	return true
}

// moveRoutes gives stopped pod i a new route port behind its route name
// (its proxy, which the others dial): a pod rescheduled on another machine
// has a new address under the same DNS name.
func (p *player) moveRoutes(i int) {
	n := p.c.nodes[i]
	k := slices.Index(n.args, "--cluster-listen")
	listen := fmt.Sprintf("127.0.0.1:%d", freePorts(p.t, 1)[0])
	n.args = slices.Clone(n.args)
	n.args[k+1] = listen
	p.c.proxies.retarget(n.id, listen)
}

// progress waits until every session has had two calls answered since
// now.
func (p *player) progress(h *history, sessions []*session, what string) {
	p.t.Helper()
	since := time.Now()
	_, ok := waitUntil(p.t.Context(), callBound, func() bool { return everyAnswered(h, sessions, since, 2) })
	require.True(p.t, ok, "the sessions count %s: %s", what, summary(h.snapshot()))
}

// startServiceClients starts the clients of the Service (clientLoops,
// maxServiceCalls steps each at most): each legacy session calls
// counterMix once per pace, and each 2026-07-28 client calls test_echo or
// test_elicitation once per slowPace, every call (and each round of one)
// to the Service's next endpoint. They stop at the end of t at the latest.
func startServiceClients(t *testing.T, svc *service, cl *client, sessions []*session, modern int) *clientLoops {
	w := &clientLoops{stopped: make(chan struct{}), sessions: map[string]string{}, steps: maxServiceCalls}
	t.Cleanup(w.stop)
	ctx := t.Context()
	for _, s := range sessions {
		next := loop{s: s}.picker()
		w.loop(ctx, pace, func(ctx context.Context, _ int) {
			if i, ok := svc.pick(); ok {
				tool, args := next()
				s.callWith(ctx, i, tool, args, callBound)
			}
		})
	}
	for k := range modern {
		r := rand.New(rand.NewPCG(uint64(k), 7))
		name := fmt.Sprintf("m%d", k+1)
		w.loop(ctx, slowPace, func(ctx context.Context, call int) {
			i, ok := svc.pick()
			j, ok2 := svc.pick()
			if !ok || !ok2 {
				return
			}
			id := fmt.Sprintf("%s-%d", name, call+1)
			if r.IntN(2) == 0 {
				cl.modernEcho(ctx, i, id, "echo "+id, callBound)
				return
			}
			cl.modernElicit(ctx, i, j, id, "u"+id, callBound)
		})
	}
	return w
}

// maxServiceCalls bounds each client's calls, whatever happens.
const maxServiceCalls = 10000
