package control

import (
	"errors"
	"net"

	"golang.org/x/sys/unix"
)

// peerCred is the uid (getpeereid's LOCAL_PEERCRED) and pid
// (LOCAL_PEERPID) of the process at the other end of a unix socket.
func peerCred(c net.Conn) (uid, pid int, err error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return -1, -1, errors.New("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return -1, -1, err
	}
	var cred *unix.Xucred
	var cerr error
	pid = -1
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if p, err := unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID); err == nil {
			pid = p
		}
	}); err != nil {
		return -1, -1, err
	}
	if cerr != nil {
		return -1, -1, cerr
	}
	return int(cred.Uid), pid, nil
}
