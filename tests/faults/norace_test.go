//go:build !race

package faults_test

// raceEnabled reports whether the tests run with -race; the server binary is
// then built with -race too.
const raceEnabled = false
