package transport_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Goroutines that run before any test (a library's, started when it
	// is loaded, such as panjf2000/ants's default pool) are not leaks.
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}
