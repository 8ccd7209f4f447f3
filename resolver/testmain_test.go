package resolver

import (
	"testing"

	"github.com/skillfs/skillfs/internal/testkit"
)

// TestMain runs the tests with a HOME and XDG directories of their own,
// never the user's (internal/testkit).
func TestMain(m *testing.M) {
	// The stall tests run in parallel and wait out their timeouts.
	testkit.WaitingParallel(4)
	testkit.Main(m)
}
