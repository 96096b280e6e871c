package dispatcher_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: a caller
// stuck in Call, or a test actor that was never stopped.
func TestMain(m *testing.M) {
	// Goroutines that run before any test (a library's, started when it
	// is loaded, such as panjf2000/ants's default pool) are not leaks.
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}
