package harness

import (
	"sync"
	"time"

	"github.com/mcp-actors/mcp-actors/cluster"
)

// FaultClock is a cluster.Clock a test moves, to show what a node does
// when its time goes wrong: its wall clock stepped (NTP), both clocks
// running fast or slow (drift), the host suspended (the wall clock moves
// on, the monotonic reading does not), or the process frozen (both move
// on at once). Give it to a node with WithNodeOptions. Its methods are
// safe for concurrent use.
type FaultClock struct {
	base time.Time // the real origin

	mu   sync.Mutex
	at   time.Duration // real time since base at the last change
	mono time.Duration // the monotonic reading at the last change
	wall time.Duration // the wall reading at the last change, since base
	rate float64       // how fast both readings run against real time
}

var _ cluster.Clock = (*FaultClock)(nil)

// NewFaultClock returns a clock that reads as the real one until moved.
func NewFaultClock() *FaultClock { return &FaultClock{base: time.Now(), rate: 1} }

// Now implements cluster.Clock.
func (c *FaultClock) Now() (time.Duration, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.elapsed()
	return c.mono + d, c.base.Add(c.wall + d)
}

// elapsed is the clock's time since the last change. Under mu.
func (c *FaultClock) elapsed() time.Duration {
	return time.Duration(float64(time.Since(c.base)-c.at) * c.rate)
}

// settle makes the present the last change. Under mu.
func (c *FaultClock) settle() {
	d := c.elapsed()
	c.at, c.mono, c.wall = time.Since(c.base), c.mono+d, c.wall+d
}

// StepWall moves the wall clock by d (back when negative), leaving the
// monotonic reading: an NTP step, or what a host suspended for d reads
// once it resumes.
func (c *FaultClock) StepWall(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settle()
	c.wall += d
}

// Advance moves both readings on by d: what a process frozen for d (a
// pause) reads when it runs again.
func (c *FaultClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settle()
	c.mono += d
	c.wall += d
}

// SetRate makes both readings run at rate times real time from now on
// (1.01: 1 % fast; 0.99: 1 % slow).
func (c *FaultClock) SetRate(rate float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settle()
	c.rate = rate
}
