package testkit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// OpenPTY opens a pseudo-terminal pair without a dependency: /dev/ptmx,
// unlocked (TIOCSPTLCK), and the terminal /dev/pts/N it numbers
// (TIOCGPTN). The test keeps master; a child gets term as its stdin,
// stdout and stderr, and sees a terminal there.
func OpenPTY() (master, term *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("unlock pty: %w", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("pty number: %w", err)
	}
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("open /dev/pts/%d: %w", n, err)
	}
	return master, term, nil
}

// A Terminal is a command running on a pseudo-terminal: what it writes is
// gathered (the terminal's \r\n as \n), what the test types is written.
type Terminal struct {
	cmd    *exec.Cmd
	master *os.File
	mu     sync.Mutex
	out    bytes.Buffer
	read   chan struct{} // closed when the master reads EOF or EIO
	waited chan struct{}
	err    error
}

// StartOnTerminal starts cmd with a pseudo-terminal as its stdin, stdout
// and stderr, in a session of its own. The command is killed, if it still
// runs, and the terminal closed in t.Cleanup. It skips the test when no
// pseudo-terminal can be opened here.
func StartOnTerminal(t *testing.T, cmd *exec.Cmd) *Terminal {
	t.Helper()
	master, term, err := OpenPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term, term, term
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		master.Close()
		term.Close()
		t.Fatalf("start %v on a terminal: %v", cmd.Args, err)
	}
	term.Close() // the child holds it now
	tm := &Terminal{cmd: cmd, master: master, read: make(chan struct{}), waited: make(chan struct{})}
	go func() {
		defer close(tm.read)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() {
		tm.err = cmd.Wait()
		close(tm.waited)
	}()
	t.Cleanup(func() {
		select {
		case <-tm.waited:
		default:
			cmd.Process.Kill()
			<-tm.waited
		}
		master.Close()
	})
	return tm
}

// Output is what the command wrote so far, with \r\n as \n.
func (tm *Terminal) Output() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return strings.ReplaceAll(tm.out.String(), "\r\n", "\n")
}

// Expect waits until the output holds want, and fails the test if it does
// not within timeout (a hang) or the command exits first.
func (tm *Terminal) Expect(t *testing.T, want string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out := tm.Output()
		if strings.Contains(out, want) {
			return out
		}
		select {
		case <-tm.read:
			if out := tm.Output(); strings.Contains(out, want) {
				return out
			}
			t.Fatalf("%v ended without writing %q:\n%s", tm.cmd.Args, want, tm.Output())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v did not write %q within %s:\n%s", tm.cmd.Args, want, timeout, out)
		}
	}
}

// Type writes s to the terminal, as keys typed.
func (tm *Terminal) Type(t *testing.T, s string) {
	t.Helper()
	if _, err := tm.master.Write([]byte(s)); err != nil {
		t.Fatalf("type %q: %v", s, err)
	}
}

// Wait waits for the command to exit (failing the test after timeout: a
// hang) and returns its exit code and everything it wrote.
func (tm *Terminal) Wait(t *testing.T, timeout time.Duration) (int, string) {
	t.Helper()
	select {
	case <-tm.waited:
	case <-time.After(timeout):
		t.Fatalf("%v did not exit within %s:\n%s", tm.cmd.Args, timeout, tm.Output())
	}
	// What the command wrote before it exited is in the master's buffer.
	select {
	case <-tm.read:
	case <-time.After(5 * time.Second):
	}
	var ee *exec.ExitError
	switch {
	case tm.err == nil:
		return 0, tm.Output()
	case errors.As(tm.err, &ee):
		return ee.ExitCode(), tm.Output()
	}
	t.Fatalf("%v: %v", tm.cmd.Args, tm.err)
	return -1, ""
}
