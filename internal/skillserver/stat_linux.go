package skillserver

import (
	"io/fs"
	"syscall"
)

// keyOf returns what identifies one version of a file without reading it.
// Besides size and mtime (the brief's key) it carries ctime, device and
// inode: a rewrite that restores the mtime (`touch -r`, `cp -p`) still moves
// ctime, and a symlink re-pointed at another file changes the inode.
func keyOf(fi fs.FileInfo) fileKey {
	k := fileKey{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.ctime = st.Ctim.Nano()
		k.dev, k.ino = uint64(st.Dev), st.Ino
	}
	return k
}
