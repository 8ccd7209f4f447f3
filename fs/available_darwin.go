package fs

import "os"

// fuseDevice: macFUSE makes its devices (/dev/macfuseN) as it mounts; what
// must exist beforehand is its mount helper.
const fuseDevice = ""

// macFUSEHelpers are the mount helpers go-fuse runs, newest first.
var macFUSEHelpers = []string{
	"/Library/Filesystems/macfuse.fs/Contents/Resources/mount_macfuse",
	"/Library/Filesystems/osxfuse.fs/Contents/Resources/mount_osxfuse",
}

// available: macFUSE is installed when one of its mount helpers is.
func available(_ string, _ bool, _ func(string) (string, error)) error {
	for _, p := range macFUSEHelpers {
		if _, err := os.Stat(p); err == nil {
			return nil
		}
	}
	return &UnavailableError{
		Problem: "macFUSE is not installed (no " + macFUSEHelpers[0] + ")",
		Fix:     "Install macFUSE (brew install --cask macfuse, or https://macfuse.github.io), then allow its system extension in System Settings > Privacy & Security and restart.",
	}
}
