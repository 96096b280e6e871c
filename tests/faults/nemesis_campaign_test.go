package faults_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// The environment of a nemesis campaign (TestNemesis, TestClockNemesis).
const (
	// durationEnv is how long the nemesis injects faults, a Go duration
	// ("2m", "1h"); each test has its default.
	durationEnv = "MCP_ACTORS_NEMESIS_DURATION"
	// seedEnv is the seed of everything a campaign draws (an int64): the
	// faults, their nodes and holds, the clients' choice of tool. Without
	// it the seed is the time; either way it is logged first.
	seedEnv = "MCP_ACTORS_NEMESIS_SEED"
)

// campaign is how one nemesis test runs: for how long, and from which
// seed. Every failure message of the test names the seed (rerun).
type campaign struct {
	t        *testing.T
	seed     int64
	duration time.Duration
}

// newCampaign reads the campaign's environment (skipping t under -short,
// failing it on a value it cannot read), logs the seed before anything
// else, and at the end of a failed t logs how to run it again.
func newCampaign(t *testing.T, defaultDuration time.Duration) campaign {
	t.Helper()
	if testing.Short() {
		t.Skip("a nemesis campaign runs for minutes")
	}
	c := campaign{t: t, seed: time.Now().UnixNano(), duration: defaultDuration}
	if v := os.Getenv(seedEnv); v != "" {
		seed, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: not an int64: %v", seedEnv, v, err)
		}
		c.seed = seed
	}
	t.Logf("nemesis: seed %d (%s)", c.seed, c.rerun())
	if v := os.Getenv(durationEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("%s=%q: not a positive Go duration (%v); %s", durationEnv, v, err, c.rerun())
		}
		c.duration = d
	}
	t.Logf("nemesis: faults for %s", c.duration)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("nemesis: FAILED with seed %d: %s %s=%s", c.seed, c.rerun(), durationEnv, c.duration)
		}
	})
	return c
}

// rerun says how to run the campaign again with its seed.
func (c campaign) rerun() string { return fmt.Sprintf("rerun with %s=%d", seedEnv, c.seed) }

// rand returns a source of the campaign's draws: stream picks one of
// several independent sequences (the nemesis's, each client's), so that
// what one draws does not shift what another does.
func (c campaign) rand(stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(c.seed), stream))
}

// holdFor draws a fault's hold: between 0.5 and 2.5 leases.
func holdFor(r *rand.Rand, lease time.Duration) time.Duration {
	return time.Duration(float64(lease) * (0.5 + 2*r.Float64())).Round(time.Millisecond)
}

// errorf fails the campaign's test with a message that names its seed.
func (c campaign) errorf(format string, args ...any) {
	c.t.Helper()
	c.t.Errorf("%s (%s)", fmt.Sprintf(format, args...), c.rerun())
}

// fatalf is errorf, and ends the test.
func (c campaign) fatalf(format string, args ...any) {
	c.t.Helper()
	c.t.Fatalf("%s (%s)", fmt.Sprintf(format, args...), c.rerun())
}
