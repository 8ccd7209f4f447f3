package fs

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/store"
	"github.com/skillfs/skillfs/internal/vfs"
)

// Without FUSE, Available says what is missing and what fixes it; the
// device and the helper lookup are the test's. (integration/nofuse_test.go
// runs each case for real, in a namespace of its own.)
func TestAvailableNamesTheProblemAndTheFix(t *testing.T) {
	notAFile := filepath.Join(t.TempDir(), "fuse")
	if err := os.WriteFile(notAFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// A helper that is there but cannot become root.
	plain := filepath.Join(t.TempDir(), "fusermount3")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	none := func(string) (string, error) { return "", errors.New("not found") }
	only := func(want, found string) func(string) (string, error) {
		return func(p string) (string, error) {
			if p == want {
				return found, nil
			}
			return "", errors.New("not found")
		}
	}
	for _, tc := range []struct {
		name   string
		dev    string
		look   func(string) (string, error)
		errHas []string // nil: FUSE is available (as root)
	}{
		{"no device", filepath.Join(t.TempDir(), "fuse"), none,
			[]string{"does not exist", "fuse3", "modprobe fuse", "--device /dev/fuse --cap-add SYS_ADMIN"}},
		{"a regular file", notAFile, none,
			[]string{"is not the FUSE device (a regular file, not a character device)", "--device /dev/fuse --cap-add SYS_ADMIN", "mknod -m 0666 /dev/fuse c 10 229"}},
		{"a directory", t.TempDir(), none,
			[]string{"is not the FUSE device (a directory, not a character device)"}},
		{"another device", "/dev/null", none,
			[]string{"/dev/null is not the FUSE device (it is character device 1:3, the FUSE device is 10:229", "--device /dev/fuse"}},
	} {
		checkUnavailable(t, tc.name, available(tc.dev, true, tc.look), tc.errHas)
	}
	if !isFUSEDevice(fuseDevice) {
		return
	}
	// As a user other than root (the test need not be one: only the
	// helper is checked past the device, which root may open).
	checkUnavailable(t, "no helper", checkHelper(none, ""), []string{"fusermount3 (or fusermount)", "apt-get install fuse3"})
	checkUnavailable(t, "helper not setuid", checkHelper(only("fusermount3", plain), ""),
		[]string{plain + " is not setuid root (mode 0755", "chmod 4755 " + plain})
	checkUnavailable(t, "helper found by name only", checkHelper(only("/bin/fusermount", "fusermount"), ""), nil)
	status := "Name:\tskillfs\nNoNewPrivs:\t1\nCapEff:\t000001ffffffffff\n"
	if err := checkCapability(status); err != nil {
		t.Errorf("CapEff with CAP_SYS_ADMIN: %v", err)
	}
	checkUnavailable(t, "root without CAP_SYS_ADMIN", checkCapability("CapEff:\t000001fffedfffff\n"),
		[]string{"root without CAP_SYS_ADMIN (CapEff 000001fffedfffff)", "--cap-add SYS_ADMIN"})
	if err := checkCapability("Name:\tno caps line\n"); err != nil {
		t.Errorf("an unreadable status is left to the mount: %v", err)
	}
}

// Two problems at once are reported together, so that one round of fixes
// is enough.
func TestAvailableReportsEveryProblem(t *testing.T) {
	err := joinUnavailable(nil, &UnavailableError{Problem: "A", Fix: "Fix A."}, nil, &UnavailableError{Problem: "B", Fix: "Fix B."})
	checkUnavailable(t, "two problems", err, []string{"FUSE is not available: A; and B. Fix A. Fix B."})
	if err := joinUnavailable(nil, nil); err != nil {
		t.Errorf("no problem: %v", err)
	}
}

func checkUnavailable(t *testing.T, name string, err error, errHas []string) {
	t.Helper()
	if errHas == nil {
		if err != nil {
			t.Errorf("%s: %v, want FUSE available", name, err)
		}
		return
	}
	if !errors.Is(err, ErrNoFUSE) {
		t.Errorf("%s: %v, want ErrNoFUSE", name, err)
		return
	}
	for _, s := range errHas {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: %q does not say %q", name, err, s)
		}
	}
}

func isFUSEDevice(p string) bool {
	var st syscall.Stat_t
	return syscall.Stat(p, &st) == nil && devMajor(st.Rdev) == fuseMajor && devMinor(st.Rdev) == fuseMinor
}

// The errno of a failed mount(2) is named, with what it means, without
// --debug.
func TestDirectMountErrorNamesTheErrno(t *testing.T) {
	for _, tc := range []struct {
		errno syscall.Errno
		has   []string
	}{
		{syscall.EPERM, []string{"mount /m: mount(2) failed: operation not permitted (EPERM)", "security policy", "--cap-add SYS_ADMIN"}},
		{syscall.EINVAL, []string{"(EINVAL)", "10:229"}},
		{syscall.ENODEV, []string{"(ENODEV)", "modprobe fuse"}},
		{syscall.EBUSY, []string{"(EBUSY)", "--debug"}},
	} {
		err := directMountError("/m", tc.errno)
		if !errors.Is(err, tc.errno) {
			t.Errorf("%v: %v does not match the errno", tc.errno, err)
		}
		for _, s := range tc.has {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%v: %q does not say %q", tc.errno, err, s)
			}
		}
	}
}

// A mount(2) the kernel refuses past Available's checks reports its errno
// without --debug, not go-fuse's fallback's "fusermount: no such file":
// root of a user namespace that does not own the mount namespace is
// refused EPERM (Available says so beforehand; Start is called here
// without it). The test runs itself again in such a namespace.
func TestStartReportsTheMountErrno(t *testing.T) {
	if os.Getenv("SKILLFS_TEST_START_ERRNO") == "1" {
		startForErrno(t)
		return
	}
	if os.Getuid() != 0 || !isFUSEDevice(fuseDevice) {
		t.Skip("needs root and the FUSE device")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("needs unshare (util-linux)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, unshare, "--user", "--map-root-user", os.Args[0], "-test.run=^TestStartReportsTheMountErrno$", "-test.v")
	cmd.Env = append(os.Environ(), "SKILLFS_TEST_START_ERRNO=1")
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "cannot start here") {
		t.Skipf("no user namespace here:\n%s", out)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := "mount(2) failed: operation not permitted (EPERM)"
	if !strings.Contains(string(out), want) {
		t.Errorf("the error does not say %q:\n%s", want, out)
	}
	for _, bad := range []string{"fusermount", "exec:"} {
		if strings.Contains(string(out), bad) {
			t.Errorf("the error says %q:\n%s", bad, out)
		}
	}
}

// startForErrno, in the user namespace, mounts an empty tree and prints
// the error.
func startForErrno(t *testing.T) {
	if _, ok := mountNamespaceOwned(); !ok {
		t.Skip("cannot start here: no nsfs")
	}
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	v, err := vfs.New(vfs.Options{Config: &config.Config{}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Start(t.TempDir(), v, Options{})
	if err == nil {
		m.Unmount()
		t.Fatal("mounted from a user namespace that does not own its mount namespace")
	}
	var me *MountError
	if !errors.As(err, &me) || !errors.Is(err, syscall.EPERM) {
		t.Errorf("%v (%T), want a MountError with EPERM", err, err)
	}
	t.Logf("the error: %v", err)
}
