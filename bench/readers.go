//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// The readers agents are written in, beside the raw syscalls of the other
// warm rows. Each kind runs as one long-lived subprocess that loops over
// the same file list internally and times itself, so that interpreter
// start-up is not what is measured; the bench sends it a root per pass
// and the passes alternate between the mount, tmpfs and (for Python) the
// go-fuse loopback, as every other row does.

// pythonReader reads each file as `open(p, 'rb').read()` does: on this
// Python (before 3.14) open() asks isatty(), an ioctl(TCGETS) that the
// kernel forwards to a FUSE daemon on every open.
const pythonReader = `
import sys, time
paths = [p for p in open(sys.argv[1]).read().split('\n') if p]
for line in sys.stdin:
    root = line.rstrip('\n')
    ps = [root + '/' + p for p in paths]
    n = 0
    try:
        t = time.perf_counter_ns()
        for p in ps:
            n += len(open(p, 'rb').read())
        t = time.perf_counter_ns() - t
    except OSError as e:
        print('err', e, flush=True)
        continue
    print('ok', t, n, flush=True)
`

// nodeReader reads each file with fs.readFileSync.
const nodeReader = `
const fs = require('fs');
const paths = fs.readFileSync(process.argv[1], 'utf8').split('\n').filter(Boolean);
require('readline').createInterface({input: process.stdin}).on('line', root => {
  const ps = paths.map(p => root + '/' + p);
  let n = 0;
  try {
    const t = process.hrtime.bigint();
    for (const p of ps) n += fs.readFileSync(p).length;
    process.stdout.write('ok ' + (process.hrtime.bigint() - t) + ' ' + n + '\n');
  } catch (e) {
    process.stdout.write('err ' + String(e.message).replace(/\n/g, ' ') + '\n');
  }
});
`

// A readerProc is one reader subprocess.
type readerProc struct {
	name string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	stop func()
}

// startReader starts interp with script over the file list in listFile.
func startReader(cl *cleaner, name, interp, flag, script, listFile string, log io.Writer) (*readerProc, error) {
	r := &readerProc{name: name}
	r.cmd = exec.Command(interp, flag, script, listFile)
	r.cmd.SysProcAttr = childAttrs(syscall.SIGKILL)
	r.cmd.Stderr = log
	var err error
	if r.in, err = r.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	r.out = bufio.NewScanner(stdout)
	done := make(chan struct{})
	go func() { r.cmd.Wait(); close(done) }()
	r.stop = cl.add(func() {
		r.in.Close()
		stopProcess(r.cmd, done, syscall.SIGKILL, 5*time.Second)
	})
	return r, nil
}

// pass reads every file of the list under root once and returns the
// reader's own time for it and the bytes it read.
func (r *readerProc) pass(root string) (time.Duration, int64, error) {
	if _, err := fmt.Fprintln(r.in, root); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", r.name, err)
	}
	if !r.out.Scan() {
		return 0, 0, fmt.Errorf("%s exited: %v (see the daemon log)", r.name, r.out.Err())
	}
	f := strings.Fields(r.out.Text())
	if len(f) != 3 || f[0] != "ok" {
		return 0, 0, fmt.Errorf("%s under %s: %s", r.name, root, r.out.Text())
	}
	ns, err1 := strconv.ParseInt(f[1], 10, 64)
	n, err2 := strconv.ParseInt(f[2], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, fmt.Errorf("%s: odd answer %q", r.name, r.out.Text())
	}
	return time.Duration(ns), n, nil
}

// A loopbackProc is bench/loopback serving a directory: go-fuse and the
// kernel with nothing of skillfs, the floor of a FUSE round trip.
type loopbackProc struct {
	Dir  string
	stop func()
}

func startLoopback(ctx context.Context, cl *cleaner, bin, src, mnt string, log io.Writer) (*loopbackProc, error) {
	cmd := exec.Command(bin, src, mnt)
	cmd.SysProcAttr = childAttrs(syscall.SIGTERM)
	cmd.Stderr = log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start loopback: %w", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	l := &loopbackProc{Dir: mnt}
	l.stop = cl.add(func() {
		stopProcess(cmd, done, syscall.SIGTERM, 10*time.Second)
		if isMounted(mnt) {
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
	if _, err := waitLine(ctx, stdout, log, "loopback: mounted", time.Minute); err != nil {
		l.stop()
		return nil, fmt.Errorf("loopback mount %s: %w", mnt, err)
	}
	return l, nil
}

// buildLoopback builds bench/loopback from the module at root into dir.
func buildLoopback(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "loopback")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./bench/loopback")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./bench/loopback in %s: %w\n%s", root, err, out)
	}
	return bin, nil
}

// roundTrips is how many requests one repetition of a round-trip row makes.
const roundTrips = 1000

// ioctlLoop asks isatty's question (TCGETS) of one open file n times; a
// regular file answers ENOTTY, and on FUSE every one is a round trip to
// the daemon.
func ioctlLoop(path string, n int) error {
	fd, err := openRead(path)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var termios [64]byte // larger than struct termios
	for range n {
		_, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TCGETS, uintptr(unsafe.Pointer(&termios[0])))
		if e != syscall.ENOTTY {
			return fmt.Errorf("ioctl(TCGETS) %s: %v, want ENOTTY", path, e)
		}
	}
	return nil
}

// absentXattr is an attribute no side has: the kernel caches no answer for
// it, so on FUSE every getxattr is a round trip.
const absentXattr = "user.skillfs-bench.absent"

func getxattrLoop(path string, n int) error {
	var buf [64]byte
	for range n {
		_, err := syscall.Getxattr(path, absentXattr, buf[:])
		if err != syscall.ENODATA {
			return fmt.Errorf("getxattr %s %s: %v, want ENODATA", path, absentXattr, err)
		}
	}
	return nil
}

// rotateReps runs every fn reps times, rotating which goes first in each
// repetition so that drift weighs on all alike, and returns their times.
func rotateReps(ctx context.Context, reps int, fns ...func() (time.Duration, error)) ([][]time.Duration, error) {
	out := make([][]time.Duration, len(fns))
	for i := range reps {
		for j := range fns {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			k := (i + j) % len(fns)
			d, err := fns[k]()
			if err != nil {
				return out, err
			}
			out[k] = append(out[k], d)
		}
	}
	return out, nil
}

// readers measures the readers agents use, and the FUSE round trip they
// pay, on the small files of the warm rows: against tmpfs and, where it
// says what skillfs adds over FUSE itself, against the go-fuse loopback
// over the same tmpfs copy.
func (s *scenario) readers(ctx context.Context, sample []int) {
	if ctx.Err() != nil {
		// Interrupted: the work directory is being removed; create
		// nothing in it.
		return
	}
	files := s.tree.Files
	mroot := filepath.Join(s.mnt, label)
	sroot := s.shm.Root
	var lroot, lbSkip string
	if s.b.loopback == "" {
		lbSkip = s.b.loopbackErr
	} else {
		mnt := filepath.Join(s.dir, "loopback")
		if err := os.Mkdir(mnt, 0o755); err != nil {
			lbSkip = err.Error()
		} else if lb, err := startLoopback(ctx, s.b.cl, s.b.loopback, sroot, mnt, s.log); err != nil {
			s.note("%v", err)
			lbSkip = "the loopback did not mount"
		} else {
			defer lb.stop()
			lroot = mnt
		}
	}

	var list strings.Builder
	for _, i := range sample {
		list.WriteString(files[i].Path + "\n")
	}
	listFile := filepath.Join(s.dir, "readers.txt")
	if err := os.WriteFile(listFile, []byte(list.String()), 0o600); err != nil {
		s.note("%v", err)
		return
	}

	reps := s.b.opts.Reps
	py := "warm Python open(p, 'rb').read(), small file (per file)"
	s.scriptReader(ctx, py, "python3", "-c", pythonReader, listFile, len(sample), reps, mroot, sroot, lroot, lbSkip)
	s.scriptReader(ctx, "warm Node fs.readFileSync, small file (per file)", "node", "-e", nodeReader, listFile, len(sample), reps, mroot, sroot, "", "")

	if _, err := exec.LookPath("rg"); err != nil {
		r := s.row("rg over the whole tree", KindTime)
		r.Baseline, r.N, r.Skip = "tmpfs", reps, "rg is not installed"
		s.rows = append(s.rows, r)
	} else {
		s.treeOp(ctx, "rg over the whole tree", reps, Target{}, true, "rg", "--no-config", "-uu", Needle)
	}

	probe := files[sample[0]]
	s.roundTrip(ctx, "ioctl(TCGETS) on an open file, isatty's question (per call)", reps, probe, lroot, lbSkip,
		func(p string) error { return ioctlLoop(p, roundTrips) })
	s.roundTrip(ctx, "getxattr of an absent attribute, uncached (per call)", reps, probe, lroot, lbSkip,
		func(p string) error { return getxattrLoop(p, roundTrips) })
}

// scriptReader times one reader kind over the mount, tmpfs and, when
// lroot is set, the loopback, and adds a row against each baseline.
func (s *scenario) scriptReader(ctx context.Context, what, interp, flag, script, listFile string, perRep, reps int, mroot, sroot, lroot, lbSkip string) {
	vsTmpfs := s.row(what, KindTime)
	vsTmpfs.Baseline, vsTmpfs.N = "tmpfs", reps
	vsLoop := vsTmpfs
	vsLoop.Baseline = "go-fuse loopback over tmpfs"
	withLoop := lroot != "" || lbSkip != ""
	defer func() {
		s.rows = append(s.rows, vsTmpfs)
		if withLoop {
			s.rows = append(s.rows, vsLoop)
		}
	}()
	if _, err := exec.LookPath(interp); err != nil {
		vsTmpfs.Skip = interp + " is not installed"
		vsLoop.Skip = vsTmpfs.Skip
		return
	}
	if lroot == "" && lbSkip != "" {
		vsLoop.Skip = lbSkip
	}
	rp, err := startReader(s.b.cl, interp, interp, flag, script, listFile, s.log)
	if err != nil {
		vsTmpfs.Err, vsLoop.Err = err.Error(), err.Error()
		return
	}
	defer rp.stop()
	roots := []string{mroot, sroot}
	if lroot != "" {
		roots = append(roots, lroot)
	}
	// One untimed pass each: it warms every side and checks that all read
	// the same number of bytes.
	var want int64 = -1
	for _, root := range roots {
		_, n, err := rp.pass(root)
		if err == nil && want >= 0 && n != want {
			err = fmt.Errorf("%s read %d bytes under %s, %d under %s", interp, n, root, want, roots[0])
		}
		if err != nil {
			vsTmpfs.Err, vsLoop.Err = err.Error(), err.Error()
			return
		}
		want = n
	}
	fns := make([]func() (time.Duration, error), len(roots))
	for i, root := range roots {
		fns[i] = func() (time.Duration, error) {
			d, _, err := rp.pass(root)
			return d, err
		}
	}
	ds, err := rotateReps(ctx, reps, fns...)
	if err != nil {
		vsTmpfs.Err, vsLoop.Err = err.Error(), err.Error()
		return
	}
	vsTmpfs.measured(perOp(ds[0], perRep), perOp(ds[1], perRep))
	if lroot != "" {
		vsLoop.measured(perOp(ds[0], perRep), perOp(ds[2], perRep))
	}
}

// roundTrip times op on one file through the mount, on tmpfs and through
// the loopback, and adds a row against each.
func (s *scenario) roundTrip(ctx context.Context, what string, reps int, f File, lroot, lbSkip string, op func(path string) error) {
	vsTmpfs := s.row(what, KindTime)
	vsTmpfs.Baseline, vsTmpfs.N = "tmpfs", reps
	vsLoop := vsTmpfs
	vsLoop.Baseline = "go-fuse loopback over tmpfs"
	defer func() { s.rows = append(s.rows, vsTmpfs, vsLoop) }()
	paths := []string{s.mountPath(f), s.shmPath(f)}
	if lroot != "" {
		paths = append(paths, filepath.Join(lroot, filepath.FromSlash(f.Path)))
	} else {
		vsLoop.Skip = lbSkip
	}
	fns := make([]func() (time.Duration, error), len(paths))
	for i, p := range paths {
		if err := op(p); err != nil { // untimed: warms the lookups, checks the answer
			vsTmpfs.Err, vsLoop.Err = err.Error(), err.Error()
			return
		}
		fns[i] = func() (time.Duration, error) { return timed(func() error { return op(p) }) }
	}
	ds, err := rotateReps(ctx, reps, fns...)
	if err != nil {
		vsTmpfs.Err, vsLoop.Err = err.Error(), err.Error()
		return
	}
	vsTmpfs.measured(perOp(ds[0], roundTrips), perOp(ds[1], roundTrips))
	if lroot != "" {
		vsLoop.measured(perOp(ds[0], roundTrips), perOp(ds[2], roundTrips))
	}
}
