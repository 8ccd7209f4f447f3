//go:build unix

package transport

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// stopGrace is how long Close waits after closing the server's stdin
	// before SIGTERM. A server that exits on end of input (as the spec asks)
	// is usually gone within it; one that is slower gets SIGTERM, which is no
	// fault of its own and is not reported.
	stopGrace = 500 * time.Millisecond
	// maxStderrLine bounds one logged stderr line; the rest of a longer line
	// is discarded.
	maxStderrLine = 4 << 10
)

// termGrace is how long Close waits after SIGTERM before SIGKILL. A
// server killed by SIGTERM, or one that shuts down when it gets it, can
// still take a while to exit on a loaded machine; only one that is still
// running when SIGKILL reaches it is reported (it ignored SIGTERM or took
// longer than this to act on it). A mount's unmount does not wait for its
// servers to stop; its daemon's exit does. Tests set Options.termGrace.
const termGrace = 2 * time.Second

// Command returns a transport that runs cmd as a stdio MCP server: newline-
// delimited JSON-RPC over its stdin and stdout, bounded like [Stream]. Each
// stderr line is logged at Info under the key "stderr" (cut at 4 KiB); a
// caller that set cmd.Stderr keeps it instead. cmd.Stdin and cmd.Stdout must
// be nil. Connect may be called once.
//
// The server runs in a process group of its own, and that group does not
// outlive it: when the server exits, what it left running in the group is
// killed, so its stdout reaches end of file and Read returns io.EOF. Close
// closes the server's stdin, waits up to 0.5s for it to exit, then sends
// SIGTERM to the group, waits up to 2s more, then sends SIGKILL; a server
// that the SIGKILL killed is logged at Warn as one that ignored SIGTERM.
//
// A server that ends on its own (see ownExit) is handed to Options.OnExit
// with its exit status and the last lines of its stderr (exit.go), unless
// the caller took cmd.Stderr, in which case Exit.Stderr is empty.
func Command(cmd *exec.Cmd, opts Options) mcp.Transport {
	return &commandTransport{cmd: cmd, opts: opts}
}

type commandTransport struct {
	cmd  *exec.Cmd
	opts Options
	used atomic.Bool
}

func (t *commandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	name := filepath.Base(t.cmd.Path)
	if t.used.Swap(true) {
		return nil, fmt.Errorf("start %s: transport already used", name)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	if t.cmd.Stdin != nil || t.cmd.Stdout != nil {
		return nil, fmt.Errorf("start %s: cmd.Stdin and cmd.Stdout must be nil", name)
	}
	log := t.opts.logger()
	p := &process{cmd: t.cmd, name: name, log: log, onExit: t.opts.OnExit, onStderr: t.opts.OnStderr, termGrace: cmp.Or(t.opts.termGrace, termGrace), exited: make(chan struct{}), drained: make(chan struct{})}
	if err := p.start(); err != nil {
		return nil, err
	}
	conn := newLineConn(p.stdout, p.stdin, p.stop, t.opts)
	p.readDone = conn.readDone
	go p.wait(conn.readDone)
	return conn, nil
}

// process is a running stdio server.
type process struct {
	cmd       *exec.Cmd
	name      string
	log       *slog.Logger
	termGrace time.Duration

	stdin  *os.File // our end of the server's stdin
	stdout *os.File // our end of the server's stdout
	stderr *os.File // our end of the server's stderr, nil if the caller took it

	exited  chan struct{} // closed once the server has been reaped
	drained chan struct{} // closed once the stderr reader has ended
	stopped atomic.Bool   // Close began: an exit now is expected
	// readDone is closed when the server's stdout has ended. ended: it had
	// ended (or the server exited) before Close began; signalled: Close
	// sent the group SIGTERM or SIGKILL. They tell an exit that is the
	// server's own, and reported, from one Close caused (ownExit).
	readDone  <-chan struct{}
	ended     atomic.Bool
	signalled atomic.Bool
	onExit    func(Exit)
	onStderr  func(string) // Options.OnStderr, or nil
	tail      stderrTail   // the last lines of stderr, for onExit
}

func (p *process) start() (err error) {
	var toClose []*os.File // the child's ends, and ours on failure
	defer func() {
		for _, f := range toClose {
			f.Close()
		}
	}()
	pipe := func(ours **os.File, childReads bool) *os.File {
		r, w, perr := os.Pipe()
		if perr != nil {
			err = errors.Join(err, perr)
			return nil
		}
		if childReads {
			*ours = w
			toClose = append(toClose, r)
			return r
		}
		*ours = r
		toClose = append(toClose, w)
		return w
	}
	stdin := pipe(&p.stdin, true)
	stdout := pipe(&p.stdout, false)
	var stderr *os.File
	if p.cmd.Stderr == nil {
		stderr = pipe(&p.stderr, false)
	}
	if err == nil {
		p.cmd.Stdin, p.cmd.Stdout = stdin, stdout
		if stderr != nil {
			p.cmd.Stderr = stderr
		}
		setProcessGroup(p.cmd)
		err = p.cmd.Start()
	}
	if err != nil {
		for _, f := range []*os.File{p.stdin, p.stdout, p.stderr} {
			if f != nil {
				toClose = append(toClose, f)
			}
		}
		if notFound(p.cmd, err) {
			return &CommandNotFoundError{Command: p.cmd.Args[0], Err: err}
		}
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	if p.stderr != nil {
		go p.drainStderr()
	} else {
		close(p.drained)
	}
	return nil
}

func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// A session leader already leads its own group, and setpgid would fail
	// on it.
	if !cmd.SysProcAttr.Setsid {
		cmd.SysProcAttr.Setpgid = true
		cmd.SysProcAttr.Pgid = 0
	}
}

// signalGroup sends sig to the server's process group, whose id is the
// server's pid.
func (p *process) signalGroup(sig syscall.Signal) {
	err := syscall.Kill(-p.cmd.Process.Pid, sig)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		p.log.Warn("signal server process group", "op", "close", "signal", sig.String(), "err", err)
	}
}

// wait reaps the server. readDone is closed when the connection's read loop
// has seen the end of the server's stdout.
func (p *process) wait(readDone <-chan struct{}) {
	err := p.cmd.Wait()
	// The leader is gone; whatever it left in its group (which may hold the
	// stdout pipe open) goes too. The group id cannot have been reused this
	// early: pids are handed out cyclically.
	p.signalGroup(syscall.SIGKILL)
	close(p.exited)
	if !p.stopped.Load() {
		p.log.Info("stdio server exited", "op", "read", "err", err)
	}
	if p.onExit != nil && p.ownExit() {
		go p.reportExit(time.Now())
	}
	// Something outside the group may still hold the pipe (a daemon that
	// called setsid). Give the reader time to drain what the server wrote,
	// then end the stream regardless so that Read returns io.EOF.
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case <-readDone:
	case <-t.C:
		p.stdout.Close()
	}
}

func (p *process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// ownExit says whether the server, now reaped, ended on its own: before
// Close began or when Close found it gone already (stop sets ended before
// stopped), or after Close began but not as Close asks a server to end —
// with a status other than 0, or by a signal Close did not send. (A
// server that dies as the client gives up on it, say a write to it failing
// first, can be seen to end only after Close began.)
func (p *process) ownExit() bool {
	if !p.stopped.Load() || p.ended.Load() {
		return true
	}
	ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok {
		return false
	}
	if ws.Signaled() {
		return !p.signalled.Load()
	}
	return ws.ExitStatus() != 0
}

// stop is the connection's close function.
func (p *process) stop() error {
	select {
	case <-p.readDone:
		p.ended.Store(true)
	case <-p.exited:
		p.ended.Store(true)
	default:
	}
	p.stopped.Store(true)
	p.stdin.Close()
	if !p.waitExit(stopGrace) {
		p.signalled.Store(true)
		p.signalGroup(syscall.SIGTERM)
		if !p.waitExit(p.termGrace) {
			p.signalGroup(syscall.SIGKILL)
			<-p.exited
			// How it ended tells a server that was still running (the
			// SIGKILL killed it) from one that was only slow to be gone:
			// a signal with the default action decides the exit status
			// when it is sent, and an exit is an exit.
			if killedBy(p.cmd.ProcessState, syscall.SIGKILL) {
				p.log.Warn("stdio server ignored SIGTERM; killed it", "op", "close", "pid", p.cmd.Process.Pid, "grace", p.termGrace)
			} else {
				p.log.Info("stdio server was slow to exit after SIGTERM", "op", "close", "pid", p.cmd.Process.Pid, "status", p.cmd.ProcessState.String())
			}
		}
	}
	// Unblock the read loop and the stderr reader even if a process outside
	// the group still holds the pipes. The server and its group are gone,
	// so the stderr reader is at most a few lines from the end: closing our
	// end under it would lose the last lines it wrote, often the reason it
	// exited. It gets stopGrace to read them.
	p.stdout.Close()
	if p.stderr != nil {
		t := time.NewTimer(stopGrace)
		select {
		case <-p.drained:
		case <-t.C:
		}
		t.Stop()
		p.stderr.Close()
	}
	<-p.drained
	return nil
}

// killedBy says whether the process that ended with st was killed by sig.
func killedBy(st *os.ProcessState, sig syscall.Signal) bool {
	ws, ok := st.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

func (p *process) drainStderr() {
	defer close(p.drained)
	br := bufio.NewReaderSize(p.stderr, maxStderrLine)
	long := false // in the discarded tail of a long line
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if !long {
				p.log.Info("stdio server stderr", "stderr", string(line)+"…")
				p.line(string(line) + "…")
			}
			long = true
			continue
		case long:
			long = false
		default:
			if s := string(trimEOL(line)); s != "" {
				p.log.Info("stdio server stderr", "stderr", s)
				p.line(s)
			}
		}
		if err != nil {
			return
		}
	}
}

// line keeps one line of stderr for the exit report and hands it to
// onStderr.
func (p *process) line(s string) {
	p.tail.add(s)
	if p.onStderr != nil {
		p.onStderr(s)
	}
}

// reportExit hands the server's exit, reaped at at, to onExit once what it
// wrote to stderr has been read (or after stopGrace, when something it
// left running still holds the pipe).
func (p *process) reportExit(at time.Time) {
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case <-p.drained:
	case <-t.C:
	}
	e := Exit{At: at, Code: p.cmd.ProcessState.ExitCode()}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Signal = ws.Signal()
	}
	e.Stderr, e.Dropped = p.tail.snapshot()
	p.onExit(e)
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// CommandNotFoundError is a stdio server whose command is not installed: not
// in $PATH, or no file at the path given. Its message is what a user needs
// to fix their config, without exec's wording.
type CommandNotFoundError struct {
	Command string // as configured
	Err     error
}

func (e *CommandNotFoundError) Error() string { return fmt.Sprintf("command %q not found", e.Command) }
func (e *CommandNotFoundError) Unwrap() error { return e.Err }

// notFound reports whether cmd could not start because its executable does
// not exist (rather than, say, a missing interpreter of a script that does).
func notFound(cmd *exec.Cmd, err error) bool {
	if len(cmd.Args) == 0 {
		return false
	}
	if errors.Is(err, exec.ErrNotFound) {
		return true
	}
	if !errors.Is(err, os.ErrNotExist) {
		return false
	}
	_, serr := os.Stat(cmd.Path)
	return errors.Is(serr, os.ErrNotExist)
}
