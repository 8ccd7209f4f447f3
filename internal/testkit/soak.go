package testkit

import (
	"flag"
	"os"
)

// soak is the -soak test flag of every package whose TestMain uses
// testkit.
var soak = flag.Bool("soak", false, "run soak-sized tests at their full size (also SKILLFS_SOAK=1)")

// Soak reports whether soak-sized tests run at their full size: with
// `go test -soak` in a package whose TestMain uses testkit, or with
// SKILLFS_SOAK=1 in the environment (`SKILLFS_SOAK=1 go test ./...`).
// Otherwise they run at a representative size that keeps every assertion
// meaningful, so that ./test.sh stays quick.
func Soak() bool {
	return *soak || os.Getenv("SKILLFS_SOAK") == "1"
}

// Size is full under Soak and representative otherwise.
func Size(representative, full int) int {
	if Soak() {
		return full
	}
	return representative
}
