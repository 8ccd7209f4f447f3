//go:build linux

package integration

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Without FUSE, `skillfs mount` says so: it exits 3 before it starts any
// server, with a message that names what is missing and the fix, and
// leaves no daemon, pid file or mount behind; never go-fuse's "exec:
// /bin/fusermount: no such file".

// noFUSESetup is a config whose one server, were it ever started, leaves
// a file behind (shell builtins only: the PATH may be empty); everything is
// in a directory any user may write.
type noFUSESetup struct {
	work, cfg, started, mnt string
}

func newNoFUSESetup(t *testing.T) *noFUSESetup {
	t.Helper()
	s := &noFUSESetup{work: sharedDir(t, 0o777)}
	s.started = filepath.Join(s.work, "server-started")
	s.mnt = filepath.Join(s.work, "mnt")
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"local": map[string]any{"command": "/bin/sh", "args": []string{"-c", "echo started >" + s.started + "; read line"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s.cfg = filepath.Join(s.work, "config.json")
	if err := os.WriteFile(s.cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// check runs a mount command line and checks what the user sees.
func (s *noFUSESetup) check(t *testing.T, name string, cmd *exec.Cmd, want ...string) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != 3 {
		t.Errorf("%s: exit %d, want 3 (could not mount)\n%s", name, code, out)
	}
	for _, w := range append([]string{"FUSE is not available"}, want...) {
		if !strings.Contains(string(out), w) {
			t.Errorf("%s: the message does not say %q:\n%s", name, w, out)
		}
	}
	for _, bad := range []string{"exec:", "no such file"} {
		if strings.Contains(string(out), bad) {
			t.Errorf("%s: the message says %q:\n%s", name, bad, out)
		}
	}
	if _, err := os.Stat(s.started); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s: a server was started (%v)", name, err)
	}
	if _, err := os.Stat(s.mnt); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s: the mountpoint was made or mounted (%v)", name, err)
	}
}

// As a user other than root, with no fusermount3 or fusermount to run.
func TestMountWithoutTheMountHelperSaysSo(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root to run skillfs as a second user (setpriv)")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv to run skillfs as a second user")
	}
	for _, dir := range []string{"/bin", "/usr/bin"} {
		for _, h := range []string{"fusermount3", "fusermount"} {
			if _, err := os.Stat(filepath.Join(dir, h)); err == nil {
				t.Skipf("%s/%s is installed: go-fuse finds it in /bin whatever PATH says", dir, h)
			}
		}
	}
	bin := filepath.Join(sharedDir(t, 0o755), "skillfs")
	placeExecutable(t, skillfsBin, bin)
	s := newNoFUSESetup(t)
	emptyPath := sharedDir(t, 0o755)
	uid := strconv.Itoa(attackerUID)
	user := func(args ...string) *exec.Cmd {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		t.Cleanup(cancel)
		cmd := exec.CommandContext(ctx, "setpriv", append([]string{"--reuid=" + uid, "--regid=" + uid, "--clear-groups", bin}, args...)...)
		cmd.Env = []string{"HOME=" + s.work, "PATH=" + emptyPath, "XDG_RUNTIME_DIR=" + s.work}
		return cmd
	}
	want := []string{"fusermount3 (or fusermount)", "install fuse3"}
	s.check(t, "mount", user("mount", "--config", s.cfg, "--cache-dir", filepath.Join(s.work, "cache"), s.mnt), want...)
	pidFile := filepath.Join(s.work, "daemon.pid")
	s.check(t, "mount --daemon", user("mount", "--daemon", "--config", s.cfg, "--cache-dir", filepath.Join(s.work, "cache"),
		"--log-file", filepath.Join(s.work, "daemon.log"), "--pid-file", pidFile, s.mnt), want...)
	if _, err := os.Stat(pidFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("mount --daemon left a pid file (%v)", err)
	}
}

// As root, with something other than the FUSE device at /dev/fuse: in a
// mount namespace of its own, an empty file is bound over it.
func TestMountWithoutTheDeviceSaysSo(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root to bind a file over /dev/fuse in a mount namespace")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare to bind a file over /dev/fuse in a mount namespace")
	}
	s := newNoFUSESetup(t)
	empty := filepath.Join(s.work, "not-a-device")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// --propagation private: the bind stays in the namespace, which ends
	// with the command.
	const script = `mount --bind "$1" /dev/fuse || exit 99; shift; exec "$@"`
	if out, err := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", empty, "true").CombinedOutput(); err != nil {
		t.Skipf("cannot bind a file over /dev/fuse in a mount namespace here: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", empty,
		skillfsBin, "mount", "--config", s.cfg, "--cache-dir", filepath.Join(s.work, "cache"), s.mnt)
	s.check(t, "mount", cmd, "/dev/fuse is not the FUSE device", "--device /dev/fuse --cap-add SYS_ADMIN", "fuse3")
	if fi, err := os.Stat("/dev/fuse"); err == nil && fi.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("/dev/fuse outside the namespace is no longer the device: %v", fi.Mode())
	}
}
