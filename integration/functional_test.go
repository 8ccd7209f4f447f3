//go:build linux

package integration

import (
	"context"
	"errors"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/skillfs/skillfs/integration/hostile"
	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/store"
	"github.com/skillfs/skillfs/internal/testkit"
	"github.com/skillfs/skillfs/internal/vfs"
)

// The functional suite (rclone's vfstest pattern): one table of cases —
// lookup, readdir, read, xattr, and the errno a user sees for a missing
// path or a hostile server's file — run by two drivers over the same
// servers: the vfs in this process, answering in milliseconds, and a real
// mount of the binary, through the kernel. Behaviour belongs to vfs and is
// tested there; the mount run proves that the fs adapter shows exactly
// that.

// A driver reaches a mount's tree. Errors are the errno a user would see
// (syscall.Errno), so that one expectation fits both drivers.
type driver interface {
	readDir(p string) ([]string, error)
	stat(p string) (dir bool, size int64, err error)
	readFile(p string) ([]byte, error)
	getxattr(p, name string) (string, error)
}

// functionalFiles is the folder `skillfs serve` publishes as "local".
var functionalFiles = map[string]string{
	"alpha/SKILL.md":       skillMD("alpha", "The first skill", "Read refs/guide.md.\n"),
	"alpha/refs/guide.md":  "# Guide\n\nline one\nline two\n",
	"alpha/scripts/run.sh": "#!/bin/sh\necho alpha\n",
	"team/beta/SKILL.md":   skillMD("beta", "A nested skill", "beta\n"),
	"team/beta/other.txt":  "other\n",
}

// functionalConfig writes the suite's config: "local", a served folder,
// and "evil", a hostile server with an honest skill, tampered bytes, a
// short file and an entry whose name does not match its folder.
func functionalConfig(t *testing.T) string {
	dir := t.TempDir()
	writeTree(t, dir, functionalFiles)
	return writeConfig(t, map[string]any{
		"local": stdioServe(dir, os.DevNull),
		"evil": hostileStdio(t, hostile.Options{Fixtures: []string{
			hostile.HonestA, hostile.DigestMismatch, hostile.SizeShorter, hostile.NameMismatch,
		}}),
	}, nil)
}

// A functionalCase is one operation and what a user must see.
type functionalCase struct {
	name string
	run  func(d driver) (any, error)
	want any           // compared with run's value when errno is 0
	err  syscall.Errno // the errno wanted, 0 for none
}

func functionalCases() []functionalCase {
	names := func(p string) func(d driver) (any, error) {
		return func(d driver) (any, error) { return d.readDir(p) }
	}
	read := func(p string) func(d driver) (any, error) {
		return func(d driver) (any, error) {
			b, err := d.readFile(p)
			return string(b), err
		}
	}
	kind := func(p string) func(d driver) (any, error) {
		return func(d driver) (any, error) {
			dir, size, err := d.stat(p)
			if dir {
				return "dir", err
			}
			return size, err
		}
	}
	xattr := func(p, name string) func(d driver) (any, error) {
		return func(d driver) (any, error) { return d.getxattr(p, name) }
	}
	size := func(p string) int64 { return int64(len(functionalFiles[p])) }
	return []functionalCase{
		{name: "readdir root", run: names(""), want: []string{".skillfs", "evil", "local"}},
		{name: "readdir a server", run: names("local"), want: []string{"alpha", "team"}},
		{name: "readdir a skill", run: names("local/alpha"), want: []string{"SKILL.md", "refs", "scripts"}},
		{name: "readdir a folder above a skill", run: names("local/team"), want: []string{"beta"}},
		{name: "readdir a hostile server: the rejected skill is absent", run: names("evil"), want: []string{hostile.DigestMismatch, hostile.HonestA, hostile.HonestB, hostile.SizeShorter}},
		{name: "lookup a skill folder", run: kind("local/alpha"), want: "dir"},
		{name: "lookup a file: its declared size", run: kind("local/alpha/refs/guide.md"), want: size("alpha/refs/guide.md")},
		{name: "lookup a nested skill's file", run: kind("local/team/beta/other.txt"), want: size("team/beta/other.txt")},
		{name: "read SKILL.md", run: read("local/alpha/SKILL.md"), want: functionalFiles["alpha/SKILL.md"]},
		{name: "read a file", run: read("local/alpha/refs/guide.md"), want: functionalFiles["alpha/refs/guide.md"]},
		{name: "read a nested skill's file", run: read("local/team/beta/other.txt"), want: functionalFiles["team/beta/other.txt"]},
		{name: "read a hostile server's honest file", run: read("evil/honest-a/references/guide.md"), want: "# Guide\n\nEverything in this skill is what the listing says it is.\n"},
		{name: "xattr origin", run: xattr("local/alpha/refs/guide.md", "user.skillfs.origin"), want: "local"},
		{name: "xattr uri of a file", run: xattr("local/alpha/refs/guide.md", "user.skillfs.uri"), want: "skill://alpha/refs/guide.md"},
		{name: "xattr skill of a file", run: xattr("local/alpha/refs/guide.md", "user.skillfs.skill"), want: "skill://alpha/SKILL.md"},
		{name: "xattr skill of a skill folder", run: xattr("local/team/beta", "user.skillfs.skill"), want: "skill://team/beta/SKILL.md"},
		{name: "xattr not set", run: xattr("local/alpha/SKILL.md", "user.skillfs.nothing"), err: syscall.ENODATA},
		{name: "lookup a missing server", run: kind("nobody"), err: syscall.ENOENT},
		{name: "lookup a missing file", run: kind("local/alpha/missing.md"), err: syscall.ENOENT},
		{name: "read a missing file", run: read("local/alpha/refs/missing.md"), err: syscall.ENOENT},
		{name: "readdir a missing folder", run: names("local/missing"), err: syscall.ENOENT},
		{name: "readdir a file", run: names("local/alpha/SKILL.md"), err: syscall.ENOTDIR},
		{name: "xattr of a missing path", run: xattr("local/missing", "user.skillfs.origin"), err: syscall.ENOENT},
		{name: "lookup a rejected skill", run: kind("evil/" + hostile.NameMismatch), err: syscall.ENOENT},
		{name: "read bytes that do not match their digest", run: read("evil/digest-mismatch/payload.txt"), err: syscall.EIO},
		{name: "read a file shorter than declared", run: read("evil/size-shorter/payload.txt"), err: syscall.EIO},
	}
}

// runFunctional runs every case against d.
func runFunctional(t *testing.T, d driver) {
	for _, tc := range functionalCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.run(d)
			var errno syscall.Errno
			if err != nil && !errors.As(err, &errno) {
				t.Fatalf("error %v is no errno", err)
			}
			switch {
			case errno != tc.err:
				t.Errorf("errno %v (%v), want %v", errno, err, tc.err)
			case tc.err == 0 && !equal(got, tc.want):
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

func equal(a, b any) bool {
	if as, ok := a.([]string); ok {
		bs, ok := b.([]string)
		return ok && slices.Equal(as, bs)
	}
	return a == b
}

// TestFunctionalVFS runs the suite against the vfs in this process.
func TestFunctionalVFS(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load(functionalConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The hostile server's tampered and short files are logged, as they
	// should be; anything else fails the test.
	log := testkit.NewLog(t, "digest-mismatch", "size-mismatch", hostile.NameMismatch)
	v, err := vfs.New(vfs.Options{Config: cfg, Store: st, Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wait := v.Start(ctx)
	t.Cleanup(func() {
		v.Stop()
		wait()
		cancel()
		st.Close() // waits for the disk writes reads left under way
	})
	rctx, rcancel := context.WithTimeout(ctx, 5*time.Minute)
	defer rcancel()
	if waiting := v.Ready(rctx); len(waiting) > 0 {
		t.Fatalf("origins not ready: %v", waiting)
	}
	runFunctional(t, vfsDriver{v})
}

// TestFunctionalMount runs the suite through a real mount.
func TestFunctionalMount(t *testing.T) {
	t.Parallel()
	m := startMount(t, functionalConfig(t))
	m.warnings = true // the hostile server's files are logged as failed reads
	runFunctional(t, mountDriver{m})
}

// vfsDriver calls the vfs and maps its errors as the mount documents
// (SEMANTICS.md; fs's toErrno).
type vfsDriver struct{ v *vfs.Core }

func vfsErrno(err error) error {
	var re *vfs.ReadError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, vfs.ErrNotExist):
		return syscall.ENOENT
	case errors.Is(err, vfs.ErrNotDir):
		return syscall.ENOTDIR
	case errors.Is(err, vfs.ErrIsDir):
		return syscall.EISDIR
	case errors.As(err, &re):
		return syscall.EIO
	}
	return err
}

func (d vfsDriver) readDir(p string) ([]string, error) {
	ents, err := d.v.ReadDir(context.Background(), p)
	if err != nil {
		return nil, vfsErrno(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name)
	}
	slices.Sort(out)
	return out, nil
}

func (d vfsDriver) stat(p string) (bool, int64, error) {
	a, err := d.v.Stat(context.Background(), p)
	if err != nil {
		return false, 0, vfsErrno(err)
	}
	return a.Kind == vfs.KindDir, a.Size, nil
}

func (d vfsDriver) readFile(p string) ([]byte, error) {
	b, err := d.v.ReadFile(context.Background(), p)
	return b, vfsErrno(err)
}

func (d vfsDriver) getxattr(p, name string) (string, error) {
	xs, err := d.v.Xattrs(context.Background(), p)
	if err != nil {
		return "", vfsErrno(err)
	}
	for _, x := range xs {
		if x.Name == name {
			return x.Value, nil
		}
	}
	return "", syscall.ENODATA
}

// mountDriver makes the system calls a user's tools make.
type mountDriver struct{ m *mount }

func errnoOf(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

func (d mountDriver) readDir(p string) ([]string, error) {
	ents, err := os.ReadDir(d.m.Path(p))
	if err != nil {
		return nil, errnoOf(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out, nil
}

func (d mountDriver) stat(p string) (bool, int64, error) {
	fi, err := os.Stat(d.m.Path(p))
	if err != nil {
		return false, 0, errnoOf(err)
	}
	return fi.IsDir(), fi.Size(), nil
}

func (d mountDriver) readFile(p string) ([]byte, error) {
	b, err := os.ReadFile(d.m.Path(p))
	return b, errnoOf(err)
}

func (d mountDriver) getxattr(p, name string) (string, error) {
	buf := make([]byte, 4096)
	n, err := syscall.Getxattr(d.m.Path(p), name, buf)
	if err != nil {
		return "", errnoOf(err)
	}
	return string(buf[:n]), nil
}
