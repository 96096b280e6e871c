//go:build race

package transport_test

// httpRaceEnabled reports whether the race detector is on.
const httpRaceEnabled = true
