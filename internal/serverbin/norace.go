//go:build !race

package serverbin

// Race reports whether the tests run with -race; the server binary is then
// built with -race too.
const Race = false
