//go:build linux

package integration

import (
	"os"

	"github.com/skillfs/skillfs/integration/hostile"
	"github.com/skillfs/skillfs/internal/testkit"
)

// hostileMain runs the test binary as a hostile server when re-executed as
// one (hostile.Command, or a config entry naming this binary); it reports
// whether it did.
func hostileMain() bool {
	if os.Getenv(hostile.EnvServe) == "" {
		return false
	}
	testkit.TuneGC()
	os.Exit(hostile.Main())
	return true
}
