package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestStartedAfter: a probe's answer proves the run started after the
// request only when its uptime is shorter than the time between sending
// the request and sending the probe (the responder measured later still).
func TestStartedAfter(t *testing.T) {
	sent := time.Now()
	asked := sent.Add(2 * time.Second)
	for _, c := range []struct {
		uptime time.Duration
		want   bool
	}{
		{uptime: 1950 * time.Millisecond, want: true}, // started 50 ms after the request, at the latest later
		{uptime: 2 * time.Second, want: false},        // may have started as the request was sent
		{uptime: time.Hour, want: false},              // the run the request was sent to
		{uptime: -1, want: false},                     // a node of the previous release: it does not say
		{uptime: 0, want: true},
	} {
		assert.Equal(t, c.want, startedAfter(c.uptime, asked, sent), "uptime %s", c.uptime)
	}
}
