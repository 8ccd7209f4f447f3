//go:build linux

package integration

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestXattrsPolicy: `--xattrs on` (the default) shows the user.skillfs.*
// attributes and answers every other name (security.selinux, the POSIX
// ACLs ls -l asks for) ENODATA; `--xattrs off` answers ENOSYS, which the
// kernel turns into EOPNOTSUPP and then asks no more, so the attributes are
// gone while ls -l and reads work as before; a value that is neither is a
// usage error (exit 2) naming both, before anything is mounted.
func TestXattrsPolicy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := genTree(t, dir, "team")
	cfg := writeConfig(t, map[string]any{"team": stdioServe(dir, os.DevNull)}, nil)
	getx := func(p, name string) (string, error) {
		buf := make([]byte, 4096)
		n, err := syscall.Getxattr(p, name, buf)
		if err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}

	on := startMount(t, cfg)
	md := on.Path("team", "alpha", "SKILL.md")
	if v, err := getx(md, "user.skillfs.origin"); err != nil || v != "team" {
		t.Errorf("--xattrs on: user.skillfs.origin = %q, %v; want team", v, err)
	}
	for _, name := range []string{"security.selinux", "system.posix_acl_access", "user.other"} {
		if _, err := getx(md, name); !errors.Is(err, syscall.ENODATA) {
			t.Errorf("--xattrs on: getxattr %s = %v, want ENODATA", name, err)
		}
	}
	buf := make([]byte, 4096)
	if n, err := syscall.Listxattr(md, buf); err != nil || !strings.Contains(string(buf[:n]), "user.skillfs.digest\x00") {
		t.Errorf("--xattrs on: listxattr = %q, %v", buf[:max(n, 0)], err)
	}

	off := startMount(t, cfg, "--xattrs", "off")
	md = off.Path("team", "alpha", "SKILL.md")
	for i := 0; i < 2; i++ { // the second after the kernel stopped asking
		if _, err := getx(md, "user.skillfs.origin"); !errors.Is(err, syscall.EOPNOTSUPP) {
			t.Errorf("--xattrs off: getxattr user.skillfs.origin = %v, want EOPNOTSUPP", err)
		}
	}
	if _, err := syscall.Listxattr(md, buf); !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Errorf("--xattrs off: listxattr = %v, want EOPNOTSUPP", err)
	}
	out, err := exec.Command("ls", "-lR", off.Path("team")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SKILL.md") {
		t.Errorf("--xattrs off: ls -lR: %v\n%s", err, out)
	}
	for rel, want := range files {
		if got, err := os.ReadFile(off.Path("team", filepath.FromSlash(rel))); err != nil || string(got) != string(want) {
			t.Errorf("--xattrs off: read %s: %v (%d bytes, want %d)", rel, err, len(got), len(want))
		}
	}

	mnt := filepath.Join(t.TempDir(), "mnt")
	home := t.TempDir()
	o, e, code := ctl(t, []string{"HOME=" + home, "XDG_RUNTIME_DIR=" + home, "PATH=" + os.Getenv("PATH")}, "mount", "--config", cfg, "--cache-dir", filepath.Join(home, "c"), "--xattrs", "maybe", mnt)
	if code != 2 || !strings.Contains(e, `--xattrs "maybe"`) || !strings.Contains(e, "on") || !strings.Contains(e, "off") {
		t.Errorf("--xattrs maybe: exit %d, want 2 naming on and off\n%s%s", code, o, e)
	}
	if isMounted(mnt) {
		t.Errorf("--xattrs maybe mounted %s", mnt)
	}
}
