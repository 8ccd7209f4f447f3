// Package term says whether a file is a terminal.
package term

import (
	"os"

	"golang.org/x/sys/unix"
)

// IsTerminal says whether f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
