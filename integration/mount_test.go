//go:build linux

package integration

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// genTree writes a skill tree for one origin. variant makes the content of
// the shared URIs differ between origins.
func genTree(t *testing.T, dir, variant string) map[string][]byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, uint64(len(variant))))
	bin := make([]byte, 70_000)
	for i := range bin {
		bin[i] = byte(rng.IntN(256))
	}
	files := map[string]string{
		"alpha/SKILL.md":                skillMD("alpha", "First example skill", "Read refs/a.md.\n"),
		"alpha/refs/a.md":               "# A\n" + strings.Repeat("alpha line\n", 200),
		"alpha/scripts/run.sh":          "#!/bin/sh\necho ran-from-mount\n",
		"team/beta/SKILL.md":            skillMD("beta", "Skill with a prefix path", "See docs/deep/x.md\n"),
		"team/beta/docs/deep/x.md":      "deep file\n",
		"team/beta/data.bin":            string(bin),
		"team/beta/gamma/SKILL.md":      skillMD("gamma", "Nested inside beta", "nested body\n"),
		"team/beta/gamma/notes.txt":     "gamma notes\n",
		"shared/refunds/SKILL.md":       skillMD("refunds", "Refunds as "+variant+" does them", "Variant "+variant+".\n"),
		"shared/refunds/policy.md":      "policy of " + variant + "\n",
		"shared/refunds/a b/c%d.txt":    "odd names survive " + variant + "\n",
		"only-" + variant + "/SKILL.md": skillMD("only-"+variant, "Only in "+variant, "x\n"),
	}
	writeTree(t, dir, files)
	out := map[string][]byte{}
	for p, c := range files {
		out[p] = []byte(c)
	}
	return out
}

// twoOrigins serves two generated trees, "local" over stdio and "remote"
// over HTTP, and mounts them.
type twoOrigins struct {
	m                   *mount
	local, remote       map[string][]byte
	localLog            string
	remoteSrv           *httpServer
	localDir, remoteDir string
}

func mountTwoOrigins(t *testing.T) *twoOrigins {
	t.Helper()
	return mountTwoOriginsWith(t, nil)
}

// mountTwoOriginsWith is mountTwoOrigins with a skillfs config section.
func mountTwoOriginsWith(t *testing.T, skillfs map[string]any) *twoOrigins {
	t.Helper()
	o := &twoOrigins{localDir: t.TempDir(), remoteDir: t.TempDir()}
	o.local = genTree(t, o.localDir, "local")
	o.remote = genTree(t, o.remoteDir, "remote")
	o.localLog = filepath.Join(t.TempDir(), "local-access.log")
	o.remoteSrv = serveHTTP(t, o.remoteDir)
	cfg := writeConfig(t, map[string]any{
		"local":  stdioServe(o.localDir, o.localLog),
		"remote": map[string]any{"type": "http", "url": o.remoteSrv.URL},
	}, skillfs)
	o.m = startMount(t, cfg)
	return o
}

func TestMountShowsEachOriginsFilesByteForByte(t *testing.T) {
	t.Parallel()
	o := mountTwoOrigins(t)
	for label, files := range map[string]map[string][]byte{"local": o.local, "remote": o.remote} {
		for p, want := range files {
			got, err := os.ReadFile(o.m.Path(label, filepath.FromSlash(p)))
			if err != nil {
				t.Errorf("%s/%s: %v", label, p, err)
				continue
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s/%s: %d bytes differ from the source's %d", label, p, len(got), len(want))
			}
		}
	}
	// The same URI under two origins: two paths, each with its own bytes.
	a, _ := os.ReadFile(o.m.Path("local", "shared", "refunds", "SKILL.md"))
	b, _ := os.ReadFile(o.m.Path("remote", "shared", "refunds", "SKILL.md"))
	if !bytes.Contains(a, []byte("Variant local")) || !bytes.Contains(b, []byte("Variant remote")) {
		t.Errorf("shared URI: local has %q, remote has %q", a, b)
	}
	if _, err := os.Stat(o.m.Path("local", "only-remote")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("local/only-remote: want ENOENT, got %v", err)
	}
	for _, label := range []string{"local", "remote"} {
		if v := xattr(t, o.m.Path(label, "shared", "refunds", "SKILL.md"), "user.skillfs.origin"); v != label {
			t.Errorf("user.skillfs.origin of %s/shared/refunds/SKILL.md = %q", label, v)
		}
	}
	if v := xattr(t, o.m.Path("remote", "shared", "refunds", "a b", "c%d.txt"), "user.skillfs.uri"); v != "skill://shared/refunds/a%20b/c%25d.txt" {
		t.Errorf("user.skillfs.uri = %q", v)
	}
}

func TestSkillDirectoryListsExactlyItsManifest(t *testing.T) {
	t.Parallel()
	o := mountTwoOrigins(t)
	for _, label := range []string{"local", "remote"} {
		src := o.localDir
		if label == "remote" {
			src = o.remoteDir
		}
		filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			want := names(t, p)
			got := names(t, o.m.Path(label, rel))
			if !slices.Equal(got, want) {
				t.Errorf("ls %s/%s = %v, want %v", label, rel, got, want)
			}
			return nil
		})
	}
	out, err := run(t, "ls", "-R", o.m.Path("local"))
	if err != nil || !strings.Contains(out, "SKILL.md") {
		t.Errorf("ls -R: %v\n%s", err, out)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Errorf("readdir %s: %v", dir, err)
		return nil
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestNothingOnTheMountCanExecute(t *testing.T) {
	t.Parallel()
	o := mountTwoOrigins(t)
	script := o.m.Path("local", "alpha", "scripts", "run.sh")
	fi, err := os.Stat(script)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o444 {
		t.Errorf("mode of a script that is executable in the source: %v, want -r--r--r--", fi.Mode())
	}
	di, _ := os.Stat(o.m.Path("local", "alpha", "scripts"))
	if di.Mode().Perm() != 0o555 {
		t.Errorf("directory mode %v, want dr-xr-xr-x", di.Mode())
	}
	if err := exec.Command(script).Run(); !errors.Is(err, syscall.EACCES) {
		t.Errorf("running the script from the mount: %v, want EACCES", err)
	}
	// A copy made with the usual tools keeps the mode, so it cannot run either.
	cp := filepath.Join(t.TempDir(), "run.sh")
	if out, err := run(t, "cp", script, cp); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	if err := exec.Command(cp).Run(); !errors.Is(err, syscall.EACCES) {
		t.Errorf("running a copy of the script: %v, want EACCES", err)
	}
	if out, _ := run(t, "sh", "-c", "grep -w "+o.m.Dir+" /proc/self/mounts"); !strings.Contains(out, "noexec") || !strings.Contains(out, "ro,") || !strings.Contains(out, "nosuid") || !strings.Contains(out, "nodev") {
		t.Errorf("mount options: %s", out)
	}
}

func TestEveryMutationIsEROFS(t *testing.T) {
	t.Parallel()
	o := mountTwoOrigins(t)
	file := o.m.Path("local", "alpha", "SKILL.md")
	dir := o.m.Path("local", "alpha")
	cases := map[string]func() error{
		"open for write": func() error {
			f, err := os.OpenFile(file, os.O_WRONLY, 0)
			if err == nil {
				f.Close()
			}
			return err
		},
		"create":   func() error { return os.WriteFile(filepath.Join(dir, "new.md"), []byte("x"), 0o644) },
		"truncate": func() error { return os.Truncate(file, 0) },
		"unlink":   func() error { return os.Remove(file) },
		"rmdir":    func() error { return syscall.Rmdir(o.m.Path("local", "alpha", "refs")) },
		"rename":   func() error { return os.Rename(file, filepath.Join(dir, "moved.md")) },
		"mkdir":    func() error { return os.Mkdir(filepath.Join(dir, "sub"), 0o755) },
		"chmod":    func() error { return os.Chmod(file, 0o755) },
		"chown":    func() error { return os.Chown(file, 1, 1) },
		"utimes":   func() error { return os.Chtimes(file, time.Now(), time.Now()) },
		"symlink":  func() error { return os.Symlink("/etc/passwd", filepath.Join(dir, "link")) },
		"link":     func() error { return os.Link(file, filepath.Join(dir, "hard")) },
		"setxattr": func() error { return syscall.Setxattr(file, "user.x", []byte("1"), 0) },
		"removexattr": func() error {
			return syscall.Removexattr(file, "user.skillfs.origin")
		},
		"mknod": func() error { return syscall.Mknod(filepath.Join(dir, "fifo"), syscall.S_IFIFO|0o644, 0) },
	}
	for name, op := range cases {
		if err := op(); !errors.Is(err, syscall.EROFS) {
			t.Errorf("%s: %v, want EROFS", name, err)
		}
	}
	if got, _ := os.ReadFile(file); !bytes.Equal(got, o.local["alpha/SKILL.md"]) {
		t.Errorf("SKILL.md changed after the attempts")
	}
}

func TestListingMakesNoReadsAndFirstReadMakesOne(t *testing.T) {
	t.Parallel()
	o := mountTwoOrigins(t)
	// Walk and stat everything, read the generated files, list xattrs.
	filepath.WalkDir(o.m.Dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			os.Lstat(p)
		}
		return nil
	})
	run(t, "ls", "-lR", o.m.Dir)
	readGenerated(o.m.Path(".skillfs", "index.json"))
	if got := reads(t, o.localLog); len(got) != 0 {
		t.Fatalf("mounting and listing made %d resources/read calls: %v", len(got), got)
	}
	if got := reads(t, o.remoteSrv.AccessLog); len(got) != 0 {
		t.Fatalf("mounting and listing made %d resources/read calls on the HTTP origin: %v", len(got), got)
	}
	if v := xattr(t, o.m.Path("local", "alpha", "refs", "a.md"), "user.skillfs.verified"); v != "no" {
		t.Errorf("user.skillfs.verified before reading = %q, want no", v)
	}
	for range 3 {
		if _, err := os.ReadFile(o.m.Path("local", "alpha", "refs", "a.md")); err != nil {
			t.Fatal(err)
		}
	}
	if got := reads(t, o.localLog); !slices.Equal(got, []string{"skill://alpha/refs/a.md"}) {
		t.Errorf("after reading one file three times, resources/read calls = %v, want exactly one", got)
	}
	if v := xattr(t, o.m.Path("local", "alpha", "refs", "a.md"), "user.skillfs.verified"); v != "yes" {
		t.Errorf("user.skillfs.verified after reading = %q, want yes", v)
	}
	if got := reads(t, o.remoteSrv.AccessLog); len(got) != 0 {
		t.Errorf("reading a local file made %d reads on the remote origin", len(got))
	}
}

func TestConcurrentFirstReadsMakeOneRequest(t *testing.T) {
	t.Parallel()
	o := mountTwoOrigins(t)
	p := o.m.Path("remote", "team", "beta", "data.bin")
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			// Separate processes, as separate agents' tools would be.
			out, err := exec.Command("cat", p).Output()
			if err == nil && !bytes.Equal(out, o.remote["team/beta/data.bin"]) {
				err = fmt.Errorf("cat returned %d bytes that differ from the source", len(out))
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if got := reads(t, o.remoteSrv.AccessLog); len(got) != 1 {
		t.Errorf("16 concurrent first reads made %d resources/read calls, want 1: %v", len(got), got)
	}
}

func xattr(t *testing.T, path, name string) string {
	t.Helper()
	buf := make([]byte, 4096)
	n, err := syscall.Getxattr(path, name, buf)
	if err != nil {
		t.Errorf("getxattr %s %s: %v", path, name, err)
		return ""
	}
	return string(buf[:n])
}
