package vfs

import (
	"testing"

	"github.com/skillfs/skillfs/internal/testkit"
)

// TestMain runs the tests with a HOME and XDG directories of their own,
// never the user's (internal/testkit). The parallel tests wait for a
// re-list (testRelistGap in vfs_test.go) and for the server more than they compute: they
// run all at once.
func TestMain(m *testing.M) {
	testkit.WaitingParallel(8)
	testkit.Main(m)
}
