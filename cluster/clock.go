package cluster

import "time"

// Clock tells a node the time its lease is measured by. Now returns two
// readings taken at once: a monotonic one (any origin; it never steps, and
// on most systems it stops while the host is suspended) and the wall
// clock (it counts suspended time, and may be stepped). A node acts for
// its sessions only while both say its lease deadline has not passed
// (lease.go): the monotonic reading is immune to clock steps, the wall
// reading catches a suspend, after which the monotonic clock alone would
// let the node act on for as long as it was suspended.
//
// Options.Clock is nil but in tests, which give a fault clock to step,
// skew or suspend a node's time.
type Clock interface {
	Now() (mono time.Duration, wall time.Time)
}

// systemClock reads the process's clocks: time.Now carries both readings.
type systemClock struct{ base time.Time }

func (c systemClock) Now() (time.Duration, time.Time) {
	now := time.Now()
	return now.Sub(c.base), now
}

// instant is one reading of a node's clock.
type instant struct {
	mono time.Duration
	wall int64 // Unix ns
}

// now reads the node's clock.
func (n *Node) now() instant {
	mono, wall := n.clock.Now()
	return instant{mono: mono, wall: wall.UnixNano()}
}

// add returns i moved on by d on both clocks.
func (i instant) add(d time.Duration) instant {
	return instant{mono: i.mono + d, wall: i.wall + int64(d)}
}

// before reports whether i comes before j on both clocks: the lease's
// test, false as soon as either clock says j has come.
func (i instant) before(j instant) bool { return i.mono < j.mono && i.wall < j.wall }
