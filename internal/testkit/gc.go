package testkit

import (
	"os"
	"runtime/debug"
)

// testGCPercent is the garbage collector's target for a test process:
// collect when the heap has grown to five times what survived the last
// collection, not twice. Test processes are short and make MiBs of
// garbage (fixtures, JSON of big files, hostile servers' answers); on a
// machine where a fresh page costs 15-20 µs, collecting less often is a
// large part of what the suite spends. Only test processes are tuned: the
// skillfs binary and the servers tests start keep Go's default, so what a
// test measures of them is what users get.
const testGCPercent = 400

// TuneGC sets the garbage collector of this test process to
// testGCPercent, unless GOGC is set (a person profiling the tests decides).
// Isolate calls it; a test binary re-executed as a helper process calls it
// itself.
func TuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(testGCPercent)
	}
}
