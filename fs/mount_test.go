package fs

import (
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Every ioctl, isatty's TCGETS first, is answered ENOTTY by the raw layer,
// whatever the node.
func TestIoctlIsENOTTY(t *testing.T) {
	r := &rawFS{}
	for _, cmd := range []uint32{syscall.TCGETS, syscall.TIOCGWINSZ, 0xc020660b /* FS_IOC_FIEMAP */} {
		in := &fuse.IoctlIn{Cmd: cmd}
		in.NodeId = 12345 // no such inode: the answer must not depend on one
		if got := r.Ioctl(nil, in, nil, &fuse.IoctlOut{}, nil); got != fuse.Status(syscall.ENOTTY) {
			t.Errorf("Ioctl(%#x) = %v, want ENOTTY", cmd, got)
		}
	}
}
