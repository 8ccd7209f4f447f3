//go:build linux

package integration

import (
	"os"

	"github.com/skillfs/skillfs/integration/hostile"
)

// hostileMain runs the test binary as a hostile server when re-executed as
// one (hostile.Command, or a config entry naming this binary); it reports
// whether it did.
func hostileMain() bool {
	if os.Getenv(hostile.EnvServe) == "" {
		return false
	}
	os.Exit(hostile.Main())
	return true
}
