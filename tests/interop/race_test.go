//go:build race

package interop_test

// raceEnabled reports whether the tests run with -race; the server binary is
// then built with -race too.
const raceEnabled = true
