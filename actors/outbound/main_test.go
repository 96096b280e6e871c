package outbound_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: a caller
// stuck in Call, or a test actor that was never stopped.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
