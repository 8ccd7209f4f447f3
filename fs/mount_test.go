package fs

import (
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Every ioctl, isatty's TCGETS first, is answered ENOTTY by the raw layer,
// whatever the node. The commands are Linux's numbers, written out so that
// the test builds (and vet runs) for darwin too.
func TestIoctlIsENOTTY(t *testing.T) {
	r := &rawFS{}
	for _, cmd := range []uint32{0x5401 /* TCGETS */, 0x5413 /* TIOCGWINSZ */, 0xc020660b /* FS_IOC_FIEMAP */} {
		in := &fuse.IoctlIn{Cmd: cmd}
		in.NodeId = 12345 // no such inode: the answer must not depend on one
		if got := r.Ioctl(nil, in, nil, &fuse.IoctlOut{}, nil); got != fuse.Status(syscall.ENOTTY) {
			t.Errorf("Ioctl(%#x) = %v, want ENOTTY", cmd, got)
		}
	}
}
