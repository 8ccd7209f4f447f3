//go:build !linux && !darwin

package control

import (
	"net"
	"os"
)

// peerCred cannot ask the kernel here; the socket's 0600 mode in a 0700
// directory is the only guard. The pid is unknown (-1).
func peerCred(net.Conn) (uid, pid int, err error) { return os.Getuid(), -1, nil }
