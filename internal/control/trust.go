package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// What the client trusts. A registration, or the socket it names, is the
// user's own only when all of these hold, checked without following a
// symbolic link and relative to a descriptor of the directory checked:
//   - the directory is a real directory (not a link), owned by the user and
//     writable by no one else;
//   - the registration is a regular file in it, owned by the user and
//     writable by no one else;
//   - the socket it names is <name>.sock beside it, a socket, owned by the
//     user;
//   - the process that answers on the socket runs as the user (SO_PEERCRED,
//     getpeereid on darwin) and, where the kernel says, is the registered
//     pid.
// Anything else is skipped, with the reason, and never removed: only a
// registration that passed the file checks, and its socket, are removed
// when their daemon is gone.

// A Skip is a directory, registration or socket Find did not trust.
type Skip struct {
	Path   string
	Reason string
}

func (s Skip) String() string { return s.Path + ": " + s.Reason }

// maxRegistration bounds a registration file (a few hundred bytes).
const maxRegistration = 64 << 10

// notOurs says why a file's owner or mode is not the user's alone, or "".
func notOurs(st *unix.Stat_t) string {
	if uid := os.Getuid(); int(st.Uid) != uid {
		return fmt.Sprintf("owned by uid %d, not by you (uid %d)", st.Uid, uid)
	}
	if m := uint32(st.Mode) & 0o7777; m&0o022 != 0 {
		return fmt.Sprintf("writable by group or others (mode %04o)", m)
	}
	return ""
}

// openOurDir opens dir if it is the user's: a directory, not a link, owned
// by the user and writable by no one else. A dir that does not exist is
// (nil, nil).
func openOurDir(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, nil
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR):
		if fi, lerr := os.Lstat(dir); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return nil, errors.New("a symbolic link, not a directory of yours")
		}
		return nil, errors.New("not a directory")
	case err != nil:
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if why := notOurs(&st); why != "" {
		unix.Close(fd)
		return nil, errors.New(why)
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// readRegistration reads the registration name in the directory d, if it
// is the user's file and names the socket beside it.
func readRegistration(d *os.File, name string) (registration, error) {
	var r registration
	fd, err := unix.Openat(int(d.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return r, errors.New("a symbolic link")
	} else if err != nil {
		return r, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return r, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return r, errors.New("not a regular file")
	}
	if why := notOurs(&st); why != "" {
		return r, errors.New(why)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRegistration+1))
	if err != nil {
		return r, err
	}
	if len(b) > maxRegistration {
		return r, fmt.Errorf("over %d bytes", maxRegistration)
	}
	if json.Unmarshal(b, &r) != nil || r.Socket == "" || r.Mountpoint == "" {
		return r, errors.New("not a skillfs registration")
	}
	if want := filepath.Join(d.Name(), socketName(name)); r.Socket != want {
		return r, fmt.Errorf("names the socket %s, not %s beside it", r.Socket, want)
	}
	return r, nil
}

func socketName(reg string) string { return strings.TrimSuffix(reg, ".json") + ".sock" }

// errGone is a socket that is not there.
var errGone = errors.New("no socket")

// checkSocket checks that the socket name in d is a socket of the user's.
func checkSocket(d *os.File, name string) error {
	var st unix.Stat_t
	err := unix.Fstatat(int(d.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		return errGone
	case err != nil:
		return err
	case st.Mode&unix.S_IFMT != unix.S_IFSOCK:
		return errors.New("not a socket")
	}
	if uid := os.Getuid(); int(st.Uid) != uid {
		return fmt.Errorf("owned by uid %d, not by you (uid %d)", st.Uid, uid)
	}
	return nil
}

// dialOurs connects to socket and checks that the process answering runs
// as the user and, when pid > 0 and the kernel says, is pid.
func dialOurs(ctx context.Context, socket string, pid int) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, err
	}
	if err := checkPeer(c, pid); err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: %w", socket, err)
	}
	return c, nil
}

// errPeer marks a socket answered by a process that is not the user's
// daemon.
var errPeer = errors.New("not your skillfs")

func checkPeer(c net.Conn, pid int) error {
	uid, ppid, err := peerCred(c)
	if err != nil {
		return fmt.Errorf("%w: cannot tell who answers: %v", errPeer, err)
	}
	if me := os.Getuid(); uid != me {
		return fmt.Errorf("%w: answered by a process of uid %d, not by you (uid %d)", errPeer, uid, me)
	}
	if pid > 0 && ppid > 0 && ppid != pid {
		return fmt.Errorf("%w: answered by pid %d, not by the mount's pid %d", errPeer, ppid, pid)
	}
	return nil
}

// scanDir reads the registrations in dir: those whose daemons answer,
// what it skipped and why. Registrations of daemons that are gone are
// removed, with their sockets, when they passed the checks.
func scanDir(dir string) ([]registration, []Skip) {
	d, err := openOurDir(dir)
	if err != nil {
		return nil, []Skip{{dir, err.Error()}}
	}
	if d == nil {
		return nil, nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	slices.Sort(names)
	var out []registration
	var skips []Skip
	for _, name := range names {
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		r, err := readRegistration(d, name)
		if errors.Is(err, fs.ErrNotExist) {
			// Its daemon stopped since the directory was read: nothing
			// to trust, nothing to report.
			continue
		}
		if err != nil {
			skips = append(skips, Skip{path, err.Error()})
			continue
		}
		sock := socketName(name)
		switch err := checkSocket(d, sock); {
		case errors.Is(err, errGone):
			unix.Unlinkat(int(d.Fd()), name, 0)
			continue
		case err != nil:
			skips = append(skips, Skip{r.Socket, err.Error()})
			continue
		}
		switch l, err := answers(r); l {
		case alive:
			out = append(out, r)
		case gone:
			unix.Unlinkat(int(d.Fd()), sock, 0)
			unix.Unlinkat(int(d.Fd()), name, 0)
		case refused:
			skips = append(skips, Skip{r.Socket, err.Error()})
		}
	}
	return out, skips
}

type liveness int

const (
	alive liveness = iota
	gone
	unsure  // the socket is there but did not answer: left alone
	refused // answered by someone else: left alone
)

// answers reports whether a registered daemon is still there.
func answers(r registration) (liveness, error) {
	if r.PID > 0 {
		if err := syscall.Kill(r.PID, 0); errors.Is(err, syscall.ESRCH) {
			return gone, nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", r.Socket)
	switch {
	case err == nil:
		defer c.Close()
		if err := checkPeer(c, r.PID); err != nil {
			return refused, err
		}
		return alive, nil
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, os.ErrNotExist):
		return gone, nil
	}
	return unsure, err
}
