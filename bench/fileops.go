//go:build linux

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// The operations are plain syscalls, as cat or an editor makes them, so
// that neither side pays for Go's file wrappers (poller registration,
// fstat) and the ratio shows the filesystem.

func retryEINTR[T any](f func() (T, error)) (T, error) {
	for {
		v, err := f()
		if !errors.Is(err, syscall.EINTR) {
			return v, err
		}
	}
}

func openRead(path string) (int, error) {
	fd, err := retryEINTR(func() (int, error) { return syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0) })
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", path, err)
	}
	return fd, nil
}

// readFD reads fd to its end into buf (growing it when the file is larger)
// and returns what it read.
func readFD(fd int, buf []byte, path string) ([]byte, error) {
	n := 0
	for {
		if n == len(buf) {
			buf = append(buf, make([]byte, max(len(buf), 4096))...)
		}
		m, err := retryEINTR(func() (int, error) { return syscall.Read(fd, buf[n:]) })
		if err != nil {
			return buf[:n], fmt.Errorf("read %s: %w", path, err)
		}
		if m == 0 {
			return buf[:n], nil
		}
		n += m
	}
}

// readWhole opens, reads to the end and closes path; it returns the bytes
// (in buf when they fit).
func readWhole(path string, buf []byte) ([]byte, error) {
	fd, err := openRead(path)
	if err != nil {
		return nil, err
	}
	b, err := readFD(fd, buf, path)
	if cerr := syscall.Close(fd); err == nil && cerr != nil {
		err = fmt.Errorf("close %s: %w", path, cerr)
	}
	return b, err
}

// drain opens, reads to the end with a fixed buffer and closes path,
// returning the byte count: a warm read that keeps nothing.
func drain(path string, buf []byte) (int64, error) {
	fd, err := openRead(path)
	if err != nil {
		return 0, err
	}
	var total int64
	for {
		m, err := retryEINTR(func() (int, error) { return syscall.Read(fd, buf) })
		if err != nil {
			syscall.Close(fd)
			return total, fmt.Errorf("read %s: %w", path, err)
		}
		if m == 0 {
			break
		}
		total += int64(m)
	}
	if err := syscall.Close(fd); err != nil {
		return total, fmt.Errorf("close %s: %w", path, err)
	}
	return total, nil
}

func stat(path string) error {
	var st syscall.Stat_t
	_, err := retryEINTR(func() (struct{}, error) { return struct{}{}, syscall.Stat(path, &st) })
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	return nil
}

// checkFile reads path and compares it with the generated file.
func checkFile(path string, f File) error {
	b, err := readWhole(path, make([]byte, f.Size+1))
	if err != nil {
		return err
	}
	if int64(len(b)) != f.Size {
		return fmt.Errorf("%s: read %d bytes, the file has %d", path, len(b), f.Size)
	}
	if sha256.Sum256(b) != f.Digest {
		return fmt.Errorf("%s: the bytes differ from the generated file", path)
	}
	return nil
}

// runTool runs ls or grep the way a user's shell would, its output going
// to a pipe the bench drains (GNU grep stops at the first match when its
// output is /dev/null, which would measure nothing). When keep is set the
// output is returned.
func runTool(ctx context.Context, keep bool, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var out, errb bytes.Buffer
	cmd.Stdout = io.Discard
	if keep {
		cmd.Stdout = &out
	}
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// timed runs f and returns how long it took.
func timed(f func() error) (time.Duration, error) {
	start := time.Now()
	err := f()
	return time.Since(start), err
}

// abReps runs a and b reps times each, alternating which goes first so
// that drift over the run weighs on both alike, and returns their times.
func abReps(ctx context.Context, reps int, a, b func(rep int) (time.Duration, error)) (as, bs []time.Duration, err error) {
	for i := 0; i < reps; i++ {
		if err := ctx.Err(); err != nil {
			return as, bs, err
		}
		first, second := a, b
		if i%2 == 1 {
			first, second = b, a
		}
		d1, err := first(i)
		if err != nil {
			return as, bs, err
		}
		d2, err := second(i)
		if err != nil {
			return as, bs, err
		}
		if i%2 == 1 {
			d1, d2 = d2, d1
		}
		as = append(as, d1)
		bs = append(bs, d2)
	}
	return as, bs, nil
}

// together runs op in n goroutines at once and waits for them all; the
// first error is the result.
func together(n int, op func() error) error {
	if n == 1 {
		return op()
	}
	errs := make(chan error, n)
	for range n {
		go func() { errs <- op() }()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// perOp divides each duration by n.
func perOp(ds []time.Duration, n int) []float64 {
	out := seconds(ds)
	for i := range out {
		out[i] /= float64(n)
	}
	return out
}

// spread picks k indices of n evenly spaced, always including the first.
func spread(n, k int) []int {
	if k >= n {
		k = n
	}
	out := make([]int, k)
	for i := range out {
		out[i] = i * n / k
	}
	return out
}

// smallPairs returns k+extra pairs of small files (ClassSmall, so that the
// read is not also a SKILL.md frontmatter check) whose sizes are next to
// each other, spread over the size range: one file of each pair for the
// direct client, one for the mount.
func smallPairs(t *Tree, k int) [][2]int {
	var idx []int
	for i, f := range t.Files {
		if f.Class == ClassSmall {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		return int(t.Files[a].Size - t.Files[b].Size)
	})
	n := len(idx) / 2
	var out [][2]int
	for _, p := range spread(n, k) {
		out = append(out, [2]int{idx[2*p], idx[2*p+1]})
	}
	return out
}
