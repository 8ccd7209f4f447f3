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

// The variants below each run skillfs in a mount namespace of its own
// (unshare --propagation private: what the script mounts there stays
// there, and goes with the command), after a script has made /dev/fuse
// what the variant needs. The script gets the setup's directory as $1 and
// ends with exec "$@"; asUser, when set, runs skillfs as attackerUID.
func (s *noFUSESetup) inNamespace(t *testing.T, script string, asUser bool, args ...string) *exec.Cmd {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to change /dev/fuse in a mount namespace")
	}
	for _, tool := range []string{"unshare", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s (util-linux)", tool)
		}
	}
	probe := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-ec", script, "sh", sharedDir(t, 0o755), "true")
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("cannot change /dev/fuse in a mount namespace here: %v\n%s", err, out)
	}
	bin := filepath.Join(sharedDir(t, 0o755), "skillfs")
	placeExecutable(t, skillfsBin, bin)
	argv := []string{"--mount", "--propagation", "private", "sh", "-ec", script, "sh", s.work}
	if asUser {
		uid := strconv.Itoa(attackerUID)
		argv = append(argv, "setpriv", "--reuid="+uid, "--regid="+uid, "--clear-groups")
	}
	argv = append(append(argv, bin, "mount", "--config", s.cfg, "--cache-dir", filepath.Join(s.work, "cache")), args...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, "unshare", append(argv, s.mnt)...)
	cmd.Env = []string{"HOME=" + s.work, "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "XDG_RUNTIME_DIR=" + s.work}
	return cmd
}

// checkOutside: /dev/fuse outside the namespaces is still the device.
func checkOutside(t *testing.T) {
	t.Helper()
	if fi, err := os.Stat("/dev/fuse"); err == nil && fi.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("/dev/fuse outside the namespace is no longer the device: %v", fi.Mode())
	}
}

// As root, with no /dev/fuse at all: /dev is a tmpfs with only the common
// devices bound in.
func TestMountWithoutTheDeviceSaysSo(t *testing.T) {
	t.Parallel()
	s := newNoFUSESetup(t)
	const script = `mkdir -p "$1/olddev"; mount --bind /dev "$1/olddev"; mount -t tmpfs -o mode=0755 tmpfs /dev
for n in null zero full random urandom tty; do touch /dev/$n; mount --bind "$1/olddev/$n" /dev/$n; done
ln -s /proc/self/fd /dev/fd; umount -l "$1/olddev"; test ! -e /dev/fuse; shift; exec "$@"`
	s.check(t, "mount", s.inNamespace(t, script, false), "/dev/fuse does not exist", "apt-get install fuse3", "modprobe fuse", "--device /dev/fuse --cap-add SYS_ADMIN")
	checkOutside(t)
}

// As root, with a regular file bound over /dev/fuse.
func TestMountWithAFileAtTheDeviceSaysSo(t *testing.T) {
	t.Parallel()
	s := newNoFUSESetup(t)
	const script = `: >"$1/not-a-device"; mount --bind "$1/not-a-device" /dev/fuse; shift; exec "$@"`
	s.check(t, "mount", s.inNamespace(t, script, false), "/dev/fuse is not the FUSE device (a regular file, not a character device)",
		"--device /dev/fuse --cap-add SYS_ADMIN", "mknod -m 0666 /dev/fuse c 10 229")
	checkOutside(t)
}

// As root, with /dev/null bound over /dev/fuse: a character device, but
// not FUSE's. The old check let it through; the servers started, and the
// mount failed with go-fuse's "exec: /bin/fusermount".
func TestMountWithAnotherDeviceAtTheDeviceSaysSo(t *testing.T) {
	t.Parallel()
	s := newNoFUSESetup(t)
	const script = `mount --bind /dev/null /dev/fuse; shift; exec "$@"`
	want := []string{"/dev/fuse is not the FUSE device (it is character device 1:3, the FUSE device is 10:229",
		"--device /dev/fuse --cap-add SYS_ADMIN", "mknod -m 0666 /dev/fuse c 10 229"}
	s.check(t, "mount", s.inNamespace(t, script, false), want...)
	pidFile := filepath.Join(s.work, "daemon.pid")
	s.check(t, "mount --daemon", s.inNamespace(t, script, false, "--daemon", "--log-file", filepath.Join(s.work, "daemon.log"), "--pid-file", pidFile), want...)
	if _, err := os.Stat(pidFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("mount --daemon left a pid file (%v)", err)
	}
	checkOutside(t)
}

// As a user other than root, with the FUSE device made 0600 root's (a
// node of its own, on a tmpfs, bound over /dev/fuse): the user cannot open
// it, and neither can fusermount3, which opens it as the user.
func TestMountWithAPrivateDeviceSaysSo(t *testing.T) {
	t.Parallel()
	s := newNoFUSESetup(t)
	const script = `mkdir -p "$1/dev"; mount -t tmpfs -o mode=0755 tmpfs "$1/dev"; mknod -m 0600 "$1/dev/fuse" c 10 229
mount --bind "$1/dev/fuse" /dev/fuse; shift; exec "$@"`
	s.check(t, "mount", s.inNamespace(t, script, true),
		"/dev/fuse (mode 0600, owner uid 0 gid 0) cannot be opened by uid "+strconv.Itoa(attackerUID)+": permission denied",
		"chmod 0666 /dev/fuse")
	checkOutside(t)
}

// As root without CAP_SYS_ADMIN (dropped from the bounding and inheritable
// sets, as containers do): mount(2) would fail EPERM, and so would the
// setuid helper.
func TestMountAsRootWithoutSysAdminSaysSo(t *testing.T) {
	t.Parallel()
	s := newNoFUSESetup(t)
	const script = `shift; exec setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin "$@"`
	s.check(t, "mount", s.inNamespace(t, script, false), "skillfs runs as root without CAP_SYS_ADMIN (CapEff ",
		"which mount(2) of a FUSE file system needs", "--device /dev/fuse --cap-add SYS_ADMIN")
}

// As root of a user namespace that shares the host's mount namespace: all
// capabilities, in a namespace where they do not count for mount(2).
func TestMountInAUserNamespaceWithoutItsMountsSaysSo(t *testing.T) {
	t.Parallel()
	s := newNoFUSESetup(t)
	const script = `shift; exec unshare --user --map-root-user "$@"`
	s.check(t, "mount", s.inNamespace(t, script, false), "root of a user namespace that does not own its mount namespace",
		"(EPERM)", "unshare --user --map-root-user --mount")
}
