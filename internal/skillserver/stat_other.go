//go:build !linux

package skillserver

import (
	"io/fs"
	"syscall"
)

// keyOf returns what identifies one version of a file without reading it:
// size, mtime, device and inode (ctime is only used on Linux).
func keyOf(fi fs.FileInfo) fileKey {
	k := fileKey{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.dev, k.ino = uint64(st.Dev), uint64(st.Ino)
	}
	return k
}
