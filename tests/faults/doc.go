// Package faults is the cluster's fault campaign (issues 19 and 30): three
// `mcp-actors serve` processes on loopback, faults between them, and raw
// Streamable HTTP clients whose every request is recorded in a history
// that is checked, whole, after the run.
//
//	clients ──POST (round-robin, each call bounded)──▶ n1 n2 n3 ──▶ history ──▶ check
//	                                                    │  │  │
//	n1 ◀──route── proxy(n1) ◀── n2, n3                  routes: each node listens on
//	n2 ◀──route── proxy(n2) ◀── n1, n3                  --cluster-listen, advertises its
//	n3 ◀──route── proxy(n3) ◀── n1, n2                  proxy (--cluster-advertise) and
//	                                                    dials the proxies (--routes)
//
// Faults: a route proxy per node cuts, holds (a black hole: TCP open,
// nothing forwarded), holds one way, or delays what one node sends another
// (proxy_test.go), or drops chosen NATS messages, read from the route
// protocol that crosses it (routefilter_test.go); a process is paused (SIGSTOP) and resumed (SIGCONT), or
// killed and restarted with the same node ID (node_test.go).
//
// The black-hole tests run each node in a network namespace of its own
// instead (netcluster_test.go, netns_test.go: root, ip and namespaces
// needed; skipped without them, failed under CI=1), with two links: its
// cluster link to a bridge, which its routes cross with no proxy, and a
// client link to the root namespace, where the clients are. A fault takes
// a link down: packets are dropped, nothing is reset.
//
//	clients (root namespace) ──client links──▶ n1 n2 n3     each in its own namespace
//	                                           │  │  │
//	bridge (root namespace) ◀──cluster links───┴──┴──┘      isolate: a cluster link down;
//	                                                        blackhole: both links down; heal: all up
//
// What the history check holds every test to (history_test.go): each
// request is answered at most once and its stream carries only its own
// frames; every request ends — answered, or an error comes back — within
// its client's bound; the values of the reference set's test_counter
// never repeat or step back within a session (two owners, or a lost
// write), and a gap is explained by calls that failed for the client;
// the values test_counter and test_counter_get read in a session are
// linearizable (Porcupine, history_linear_test.go: a read below an
// acknowledged increment is a stale owner); of one session, no test_hold
// run on one node overlaps a run on another, whether its answer came back
// or only its node's log has it (history_hold_test.go). The clients mix
// reads into their increments (workload_test.go, counterMix).
//
// The tests, each stating in its doc comment what the client sees:
//
//	TestPartitionCut         n1 cut from its routes past its lease, healed, run on
//	TestPartitionOneWay      what n1 sends held (TCP open), healed, run on
//	TestPauseOwner           n1 SIGSTOPped past lease + failover bound, SIGCONT; failover time logged
//	TestPauseAboutTheMargin  n1 SIGSTOPped again and again for about its margin, and for about its lease less it
//	TestQuorumLoss           n2, n3 killed: n1 answers within a second, refuses sessions; they return
//	TestRestartStreamHolder  the node holding a long call's stream restarts: new clients get only their frames
//	TestDropRoutedRequest    a routed request dropped n2→n1: the POST ends with a JSON-RPC error in ~2 s; the next call is answered
//	TestDropStreamEvent      a stream event dropped n1→n2: a progress notification (answered), the final frame (must end)
//	TestDropOwnerToEdge      everything n1 sends n2's streams dropped once a long call is acknowledged: it ends in 6–8 s
//	TestLateAnswerIsNotDeliveredAgain  n2 paused while n1 routes it an increment, resumed once n1 waits for its lapse, then stopped: run once
//	TestReplicaLagReported   n3 SIGSTOPped while clients write: the sessions store's replica lag rises on n1's /metrics, then falls to 0
//	TestSlowRoutes           n1's routes slowed by a tenth of its margin, then by about its margin, then held (TCP open)
//	TestLeasesLostWhileOwnerRuns  four nodes, three replicas: the owner cut off while the three others restart, the leases with them
//	TestFloodUnknownSessions 10,000 made-up IDs of n1 sent to n2: each 404; n1's real sessions' p50/p99 against a control flood
//	TestModernPauseContinuationNode  a 2026-07-28 call waits on n1, n1 SIGSTOPped, the retry on n2: run again from the journal in ~2 s, not asked again
//	TestBlackHoleOwner       n1's cluster link down past lease + failover bound, its clients still calling it; healed, run on; failover time logged
//	TestBlackHoleHealAtLease the same, healed once taken over and a second past the lease
//	TestNemesis              random faults for a set time (kill, pause, partition, black hole, restart, storage-leader kill)
//	                         under every kind of client; every request ends, no violation; failover times logged
//	TestClockNemesis         the same with in-process nodes and fault clocks (steps, suspends, drift, jumps):
//	                         a node whose clock says its deadline came stops acting at once, and acts again after a renewal
//
// The nemesis (Jepsen's way, issue 30; nemesis_*_test.go, clock_*_test.go):
// clients on every node — legacy sessions calling test_counter,
// test_counter_get and test_hold (0.2 s) through every node in turn,
// legacy test_elicitation answered through another node than the one
// asked on, 2026-07-28 test_echo and test_elicitation whose retry goes to
// another node — all recorded in one history, while a nemesis draws one
// fault at a time from a seeded schedule it logs ("nemesis: 12.3s kill n2
// for 6.1s"), holds it 0.5 to 2.5 leases, heals it, waits until every
// node is ready and a lease more; at the end the whole history is
// checked, and "nemesis summary:" lines count the faults by kind and the
// requests by tool and outcome, and show how long each struck node's
// sessions took to be served elsewhere. Each runs for
// MCP_ACTORS_NEMESIS_DURATION (a Go duration; 2m and 1m by default) from
// MCP_ACTORS_NEMESIS_SEED (the time by default), logged first and named
// in every failure: to replay a failed campaign's schedule,
//
//	CI=1 MCP_ACTORS_NEMESIS_SEED=<seed> go test -race -count=1 -v -run '^TestNemesis$' -timeout 20m ./tests/faults
//
// and scripts/nemesis.sh DURATION [SEED] runs both for a long campaign.
//
// README.md lists each safety mechanism of the cluster with the test that
// fails without it.
//
// The harness's own tests (the proxy, the checker; the namespaces' links
// wherever namespaces can be made) always run. Nothing
// sleeps to synchronise: waits are on I/O, bounded; timed faults hold for
// their time with timers. The server binary is built once per test binary
// (with -race under -race) and every process is stopped in t.Cleanup.
package faults
