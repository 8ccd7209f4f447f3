package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mutations are the system calls that would change the tree, each with the
// errno a user of a real mount gets. The ro mount option has the kernel
// refuse most of them before they reach skillfs; fsync reaches the node
// (readOnly.Fsync), and write and fallocate on a descriptor open for
// reading only are the kernel's EBADF (opening one for writing is EROFS).
var mutations = []struct {
	op   string
	want syscall.Errno
	do   func(mnt string) error
}{
	{"open for writing", syscall.EROFS, func(mnt string) error { return openClose(filepath.Join(mnt, "local/alpha/SKILL.md"), os.O_WRONLY) }},
	{"open for reading and writing", syscall.EROFS, func(mnt string) error { return openClose(filepath.Join(mnt, "local/alpha/SKILL.md"), os.O_RDWR) }},
	{"open with O_TRUNC", syscall.EROFS, func(mnt string) error {
		return openClose(filepath.Join(mnt, "local/alpha/SKILL.md"), os.O_RDONLY|os.O_TRUNC)
	}},
	{"open a generated file for writing", syscall.EROFS, func(mnt string) error { return openClose(filepath.Join(mnt, ".skillfs/index.json"), os.O_WRONLY) }},
	{"create", syscall.EROFS, func(mnt string) error {
		return openClose(filepath.Join(mnt, "local/alpha/new.md"), os.O_WRONLY|os.O_CREATE)
	}},
	{"truncate", syscall.EROFS, func(mnt string) error { return os.Truncate(filepath.Join(mnt, "local/alpha/SKILL.md"), 0) }},
	{"chmod", syscall.EROFS, func(mnt string) error { return os.Chmod(filepath.Join(mnt, "local/alpha/SKILL.md"), 0o755) }},
	{"chown", syscall.EROFS, func(mnt string) error { return os.Chown(filepath.Join(mnt, "local/alpha"), 1, 1) }},
	{"utimes", syscall.EROFS, func(mnt string) error {
		return os.Chtimes(filepath.Join(mnt, "local/alpha/SKILL.md"), time.Now(), time.Now())
	}},
	{"mkdir", syscall.EROFS, func(mnt string) error { return os.Mkdir(filepath.Join(mnt, "local/alpha/sub"), 0o755) }},
	{"mkdir in the root", syscall.EROFS, func(mnt string) error { return os.Mkdir(filepath.Join(mnt, "other"), 0o755) }},
	{"mknod", syscall.EROFS, func(mnt string) error {
		return syscall.Mknod(filepath.Join(mnt, "local/alpha/fifo"), syscall.S_IFIFO|0o644, 0)
	}},
	{"symlink", syscall.EROFS, func(mnt string) error { return os.Symlink("/etc/passwd", filepath.Join(mnt, "local/alpha/sym")) }},
	{"link", syscall.EROFS, func(mnt string) error {
		return os.Link(filepath.Join(mnt, "local/alpha/SKILL.md"), filepath.Join(mnt, "local/alpha/hard"))
	}},
	{"unlink", syscall.EROFS, func(mnt string) error { return syscall.Unlink(filepath.Join(mnt, "local/alpha/SKILL.md")) }},
	{"unlink a generated file", syscall.EROFS, func(mnt string) error { return syscall.Unlink(filepath.Join(mnt, ".skillfs/index.json")) }},
	{"rmdir", syscall.EROFS, func(mnt string) error { return syscall.Rmdir(filepath.Join(mnt, "local/alpha/refs")) }},
	{"rename", syscall.EROFS, func(mnt string) error {
		return os.Rename(filepath.Join(mnt, "local/alpha/SKILL.md"), filepath.Join(mnt, "local/alpha/moved.md"))
	}},
	{"setxattr", syscall.EROFS, func(mnt string) error {
		return syscall.Setxattr(filepath.Join(mnt, "local/alpha/SKILL.md"), "user.skillfs.verified", []byte("yes"), 0)
	}},
	{"removexattr", syscall.EROFS, func(mnt string) error {
		return syscall.Removexattr(filepath.Join(mnt, "local/alpha/SKILL.md"), "user.skillfs.origin")
	}},
	{"write to a read-only descriptor", syscall.EBADF, func(mnt string) error {
		return withFile(filepath.Join(mnt, "local/alpha/SKILL.md"), func(f *os.File) error { _, err := f.Write([]byte("x")); return err })
	}},
	{"fallocate a read-only descriptor", syscall.EBADF, func(mnt string) error {
		return withFile(filepath.Join(mnt, "local/alpha/SKILL.md"), func(f *os.File) error { return syscall.Fallocate(int(f.Fd()), 0, 0, 4096) })
	}},
	// Nothing to flush: fsync succeeds, so that careful readers work.
	{"fsync", 0, func(mnt string) error { return withFile(filepath.Join(mnt, "local/alpha/SKILL.md"), (*os.File).Sync) }},
	{"fdatasync", 0, func(mnt string) error {
		return withFile(filepath.Join(mnt, "local/alpha/SKILL.md"), func(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) })
	}},
	{"fsync a directory", 0, func(mnt string) error { return withFile(filepath.Join(mnt, "local/alpha"), (*os.File).Sync) }},
}

func openClose(p string, flag int) error {
	f, err := os.OpenFile(p, flag, 0o644)
	if err == nil {
		f.Close()
	}
	return err
}

// withFile opens p for reading and calls do with it.
func withFile(p string, do func(*os.File) error) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer f.Close()
	return do(f)
}

// TestMountRefusesEveryMutation mounts the tree for real and does every
// mutation on it from a child process (the test binary again), which
// reports each errno; the tree is as it was afterwards.
func TestMountRefusesEveryMutation(t *testing.T) {
	if mnt := os.Getenv("SKILLFS_TEST_MUTATE"); mnt != "" {
		for i, m := range mutations {
			err := m.do(mnt)
			code := 0 // succeeded
			if errno := syscall.Errno(0); errors.As(err, &errno) {
				code = int(errno)
			} else if err != nil {
				code = -1 // not an errno: the line says what
			}
			fmt.Printf("mutation %d %d %v\n", i, code, err)
		}
		return
	}
	f := newFixture(t, testFiles)
	mnt := f.mount(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestMountRefusesEveryMutation$")
	cmd.Env = append(os.Environ(), "SKILLFS_TEST_MUTATE="+mnt)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[int]int{}
	for _, line := range strings.Split(string(out), "\n") {
		var i, code int
		if _, err := fmt.Sscanf(line, "mutation %d %d", &i, &code); err == nil {
			got[i] = code
		}
	}
	for i, m := range mutations {
		if code, ok := got[i]; !ok {
			t.Errorf("%s: not reported", m.op)
		} else if code != int(m.want) {
			t.Errorf("%s: %d (%v), want %v", m.op, code, syscall.Errno(code), m.want)
		}
	}
	if t.Failed() {
		t.Logf("the child's output:\n%s", out)
	}
	// Nothing changed.
	if got, err := read(t, f.walk(t, "local/alpha/SKILL.md"), 4096); err != nil || string(got) != testFiles["alpha/SKILL.md"] {
		t.Errorf("SKILL.md after the attempts: %q, %v", got, err)
	}
}
