//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"
)

// A workload is a tool an agent runs over a whole tree (issue 21). Args
// hold "ROOT" where the tree's path goes.
type workload struct {
	Tool string
	Args []string
	// Limit is the target for the ratio to tmpfs.
	Limit float64
	// Compare: the output is checked against tmpfs's (sorted, the root
	// replaced); tools whose output holds times or block counts are not.
	Compare bool
	// Mount, when set, says which other mount than the scenario's the
	// walk runs over, for the row's name.
	Mount string
}

// workloads are the walks issue 21 names, in its order.
var workloads = []workload{
	{Tool: "ls", Args: []string{"-R", "ROOT"}, Limit: 1.5, Compare: true},
	{Tool: "find", Args: []string{"ROOT", "-type", "f"}, Limit: 1.5, Compare: true},
	{Tool: "rg", Args: []string{"-c", Needle, "ROOT"}, Limit: 1.3, Compare: true},
	{Tool: "grep", Args: []string{"-r", Needle, "ROOT"}, Limit: 1.3, Compare: true},
	{Tool: "tar", Args: []string{"cf", "-", "ROOT"}, Limit: 1.5},
	{Tool: "ls", Args: []string{"-lR", "ROOT"}, Limit: 2},
	{Tool: "du", Args: []string{"-s", "ROOT"}, Limit: 1.5},
}

func (w workload) String() string { return w.Tool + " " + strings.Join(w.Args, " ") }

// A walkMode is how a workload names the tree: by its absolute path from
// elsewhere, or as "." from inside it (threads and relative paths change
// what a tool asks; issue 21 measured both).
type walkMode struct {
	Name     string
	Relative bool
}

var walkModes = []walkMode{{"absolute path", false}, {"cd into the tree, .", true}}

// command is the workload over root in mode m.
func (w workload) command(ctx context.Context, root string, m walkMode) *exec.Cmd {
	arg, dir := root, "/"
	if m.Relative {
		arg, dir = ".", root
	}
	args := slices.Clone(w.Args)
	for i, a := range args {
		if a == "ROOT" {
			args[i] = arg
		}
	}
	cmd := exec.CommandContext(ctx, w.Tool, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	return cmd
}

// run runs the workload and returns its output when keep is set. Output
// not kept still goes through a pipe, so that tar reads every file (it
// reads nothing when its archive is /dev/null).
func (w workload) run(ctx context.Context, root string, m walkMode, keep bool) (string, error) {
	cmd := w.command(ctx, root, m)
	var out, errb bytes.Buffer
	cmd.Stdout = io.Discard
	if keep {
		cmd.Stdout = &out
	}
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s (in %s): %w: %s", strings.Join(cmd.Args, " "), cmd.Dir, err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// workloads times every workload, both ways, over the mount and over the
// tmpfs copy, after one untimed pass of each that also checks the output.
func (s *scenario) workloads(ctx context.Context, reps int) {
	mroot := filepath.Join(s.mnt, label)
	for _, w := range workloads {
		for _, m := range walkModes {
			for _, p := range s.walkers() {
				s.workload(ctx, w, m, p, mroot, reps)
			}
		}
	}
}

// xattrsOffWalk is `ls -lR` over a mount with --xattrs off: the other
// xattr policy (issue 41 item 1), whose ENOSYS makes the kernel stop
// forwarding the getxattr `ls -l` asks of every entry.
var xattrsOffWalk = workload{Tool: "ls", Args: []string{"-lR", "ROOT"}, Limit: 2, Mount: "mount with --xattrs off"}

// xattrsOff mounts the scenario's server a second time, with --xattrs off
// and a cache of its own, and times xattrsOffWalk over it against tmpfs,
// both ways, at each parallelism.
func (s *scenario) xattrsOff(ctx context.Context, reps int) {
	mnt := filepath.Join(s.dir, "mnt-xattrs-off")
	fail := func(err error) {
		r := s.row(fmt.Sprintf("warm `%s`, %s", xattrsOffWalk, xattrsOffWalk.Mount), KindTime)
		r.Err = err.Error()
		s.rows = append(s.rows, r)
	}
	if err := os.Mkdir(mnt, 0o755); err != nil {
		fail(err)
		return
	}
	m, _, err := startMount(ctx, s.b.cl, s.b.bin, s.cfg, filepath.Join(s.dir, "cache-xattrs-off"), mnt, s.log, "--xattrs", "off")
	if err != nil {
		fail(err)
		return
	}
	defer func() {
		if err := m.Stop(); err != nil {
			s.note("%v", err)
		}
	}()
	// The flag in force: the kernel has been told ENOSYS, and answers
	// EOPNOTSUPP for every name itself.
	var buf [64]byte
	if _, err := syscall.Getxattr(filepath.Join(mnt, label), absentXattr, buf[:]); !errors.Is(err, syscall.EOPNOTSUPP) {
		fail(fmt.Errorf("getxattr on the --xattrs off mount: %v, want EOPNOTSUPP", err))
		return
	}
	for _, mode := range walkModes {
		for _, p := range s.walkers() {
			s.workload(ctx, xattrsOffWalk, mode, p, filepath.Join(mnt, label), reps)
		}
	}
}

// workload times p walkers running w at once, over the mount and over
// tmpfs.
func (s *scenario) workload(ctx context.Context, w workload, m walkMode, p int, mroot string, reps int) {
	name := fmt.Sprintf("warm `%s`, %s", w, m.Name)
	if w.Mount != "" {
		name += ", " + w.Mount
	}
	r := s.row(atParallelism(name, p), KindTime)
	r.Baseline = "tmpfs"
	r.Target = Target{Op: RatioAtMost, Limit: w.Limit}
	r.N = reps
	defer func() { s.rows = append(s.rows, r) }()
	if _, err := exec.LookPath(w.Tool); err != nil {
		r.Skip = w.Tool + " is not installed"
		return
	}
	mount, tmpfs, err := s.timeWorkload(ctx, w, m, p, mroot, reps)
	if err != nil {
		r.Err = err.Error()
		return
	}
	r.measured(mount, tmpfs)
	r.Note = stability(mount, tmpfs)
}

// timeWorkload checks that w prints the same on both sides (one walker,
// untimed), then times p walkers running it at once.
func (s *scenario) timeWorkload(ctx context.Context, w workload, m walkMode, p int, mroot string, reps int) (mount, tmpfs []float64, err error) {
	sroot := s.shm.Root
	var outs [2]string
	for i, root := range []string{mroot, sroot} {
		out, err := w.run(ctx, root, m, w.Compare)
		if err != nil {
			return nil, nil, err
		}
		if w.Compare {
			lines := strings.Split(strings.ReplaceAll(out, root, "ROOT"), "\n")
			sort.Strings(lines)
			outs[i] = strings.Join(lines, "\n")
		}
	}
	if outs[0] != outs[1] {
		return nil, nil, fmt.Errorf("%s printed something else over the mount than over tmpfs", w.Tool)
	}
	ms, ts, err := abReps(ctx, reps,
		func(int) (time.Duration, error) {
			return timed(func() error { return together(p, func() error { _, err := w.run(ctx, mroot, m, false); return err }) })
		},
		func(int) (time.Duration, error) {
			return timed(func() error { return together(p, func() error { _, err := w.run(ctx, sroot, m, false); return err }) })
		})
	return seconds(ms), seconds(ts), err
}

// stability says how far a row can be trusted on a shared machine: the
// best of each side and their ratio, and each side's spread, (max − min) /
// median.
func stability(mount, base []float64) string {
	if len(mount) == 0 || len(base) == 0 {
		return ""
	}
	bm, bb := slices.Min(mount), slices.Min(base)
	spread := func(xs []float64) float64 { return 100 * (slices.Max(xs) - slices.Min(xs)) / median(xs) }
	return fmt.Sprintf("best %s vs %s, %s; spread %.0f%% vs %.0f%%",
		formatSeconds(bm), formatSeconds(bb), formatRatio(bm/bb), spread(mount), spread(base))
}

// rxLine is go-fuse's debug line for a request the kernel sent.
var rxLine = regexp.MustCompile(`msg="rx \d+: ([A-Z_]+)`)

// requestCounts mounts the tree a second time with --debug, which logs
// every FUSE request, and counts the requests each workload sends warm
// (after two untimed passes), by opcode. It is a pass of its own because
// the log slows the daemon down; the counts do not depend on it.
func (s *scenario) requestCounts(ctx context.Context) {
	dir := filepath.Join(s.dir, "counting")
	mnt := filepath.Join(dir, "mnt")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		s.note("request counts: %v", err)
		return
	}
	logPath := filepath.Join(dir, "debug.log")
	lf, err := os.Create(logPath)
	if err != nil {
		s.note("request counts: %v", err)
		return
	}
	defer lf.Close()
	m, _, err := startMount(ctx, s.b.cl, s.b.bin, s.cfg, filepath.Join(dir, "cache"), mnt, lf, "--debug")
	if err != nil {
		s.note("request counts: %v", err)
		return
	}
	defer func() {
		if err := m.Stop(); err != nil {
			s.note("request counts: %v", err)
		}
	}()
	root := filepath.Join(mnt, label)
	for _, f := range s.tree.Files {
		if err := checkFile(filepath.Join(root, filepath.FromSlash(f.Path)), f); err != nil {
			s.note("request counts: %v", err)
			return
		}
	}
	for _, w := range workloads {
		for _, md := range walkModes {
			r := s.row(fmt.Sprintf("FUSE requests of a warm `%s`, %s", w, md.Name), KindCount)
			r.N = 1
			if _, err := exec.LookPath(w.Tool); err != nil {
				r.Skip = w.Tool + " is not installed"
				s.rows = append(s.rows, r)
				continue
			}
			counts, err := countRequests(ctx, logPath, func() error {
				for range 2 {
					if _, err := w.run(ctx, root, md, false); err != nil {
						return err
					}
				}
				return nil
			}, func() error { _, err := w.run(ctx, root, md, false); return err })
			if err != nil {
				r.Err = err.Error()
			} else {
				r.Value, r.Note = countsNote(counts)
			}
			s.rows = append(s.rows, r)
		}
	}
}

// requestsSettle is how long after a workload the kernel may still send
// what it sends in the background (RELEASEDIR, FORGET).
const requestsSettle = 300 * time.Millisecond

// countRequests runs warm, then counts the requests the debug log shows
// for op, by opcode.
func countRequests(ctx context.Context, logPath string, warm, op func() error) (map[string]int, error) {
	if err := warm(); err != nil {
		return nil, err
	}
	time.Sleep(requestsSettle)
	from, err := fileSize(logPath)
	if err != nil {
		return nil, err
	}
	if err := op(); err != nil {
		return nil, err
	}
	time.Sleep(requestsSettle)
	f, err := os.Open(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(from, 0); err != nil {
		return nil, err
	}
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := rxLine.FindSubmatch(sc.Bytes()); m != nil {
			counts[string(m[1])]++
		}
	}
	return counts, sc.Err()
}

// countsNote is the total and the counts by opcode, largest first.
func countsNote(counts map[string]int) (float64, string) {
	ops := make([]string, 0, len(counts))
	total := 0
	for op, n := range counts {
		ops = append(ops, op)
		total += n
	}
	sort.Slice(ops, func(i, j int) bool {
		if counts[ops[i]] != counts[ops[j]] {
			return counts[ops[i]] > counts[ops[j]]
		}
		return ops[i] < ops[j]
	})
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = fmt.Sprintf("%s %d", op, counts[op])
	}
	if len(parts) == 0 {
		return 0, "none"
	}
	return float64(total), strings.Join(parts, ", ")
}
