package store

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// These tests cross a process boundary: a second skillfs process sharing the
// store, and an agent running as the same unprivileged user as skillfs.

const helperEnv = "SKILLFS_STORE_HELPER"

// TestHelperHoldTemp is not a test: run by TestTempFileOfLiveProcessKept as
// a child, it starts writing an object — creating and locking a temporary
// file — prints the file's name and waits to be killed.
func TestHelperHoldTemp(t *testing.T) {
	if os.Getenv(helperEnv) != "hold-temp" {
		t.Skip("helper process")
	}
	s, err := Open(os.Getenv("STORE_ROOT"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	o, err := s.Bucket("a-1")
	if err != nil {
		t.Fatal(err)
	}
	f, name, err := o.temps.create(0o400)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("half of a fi")
	os.Stdout.WriteString("TEMP " + name + "\n")
	io.Copy(io.Discard, os.Stdin) // until killed
}

func TestTempFileOfLiveProcessKept(t *testing.T) {
	s, _ := openStore(t, Options{})
	o := mustOrigin(t, s, "a-1")

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldTemp$")
	cmd.Env = append(os.Environ(), helperEnv+"=hold-temp", "STORE_ROOT="+s.Root())
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	var name string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if n, ok := strings.CutPrefix(sc.Text(), "TEMP "); ok {
			name = n
			break
		}
	}
	if name == "" {
		t.Fatalf("helper did not report its temporary file")
	}
	go io.Copy(io.Discard, out)
	path := filepath.Join(o.Dir(), name)

	mustOrigin(t, s, "a-1")
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the temporary file of a live writer in another process was removed: %v", err)
	}
	// The writer crashes mid-write.
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	killed = true
	mustOrigin(t, s, "a-1")
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file of a killed writer survived Origin(): %v", err)
	}
}

// asUnprivileged runs the calling test in a child process as uid/gid 65534
// when the tests run as root, where permission bits are not enforced. It
// returns true when the caller should run the test body here (already
// unprivileged), false when the child ran it.
func asUnprivileged(t *testing.T) bool {
	t.Helper()
	if os.Getenv(helperEnv) == "unprivileged" {
		if os.Geteuid() == 0 {
			t.Fatal("child still runs as root")
		}
		return true
	}
	if os.Geteuid() != 0 {
		return true
	}
	// The child needs an executable and a TMPDIR that uid 65534 can reach.
	base, err := os.MkdirTemp("", "skillfs-store-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	bin := filepath.Join(base, "store.test")
	src, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(base, "tmp")
	os.Mkdir(tmp, 0o700)
	if err := os.Chown(tmp, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"=unprivileged", "TMPDIR="+tmp, "HOME="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	if errors.Is(err, syscall.EPERM) || errors.Is(err, os.ErrPermission) {
		t.Skipf("cannot start a child as uid 65534: %v", err)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("unprivileged child: %v\n%s", err, out)
	}
	return false
}

func TestUnprivilegedAgent(t *testing.T) {
	if !asUnprivileged(t) {
		return
	}
	root := filepath.Join(t.TempDir(), "store")
	good := content(5, 2000)
	s, rec := openStoreAt(t, root, Options{MemoryLimit: -1})
	o := mustOrigin(t, s, "acme-1")
	d := mustPut(t, o, good)
	path := objectPath(o, d)

	// 0400 holds against a careless write by the same user...
	if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
		f.Close()
		t.Fatalf("a stored object opened for writing without chmod")
	} else if !errors.Is(err, os.ErrPermission) {
		t.Fatalf("opening a stored object for writing: %v, want a permission error", err)
	}
	// ...but not against a deliberate one.
	tamper(t, path)
	if _, err := o.Get(d); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after tampering = %v, want ErrNotFound", err)
	}
	wantOneDiscard(t, rec, o, d, path)

	// An unreadable object is discarded too, not reported as a hard error.
	mustPut(t, o, good)
	os.Chmod(path, 0)
	if _, err := o.Get(d); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of an unreadable object = %v, want ErrNotFound", err)
	}
	wantOneDiscard(t, rec, o, d, path)
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unreadable object not removed: %v", err)
	}

	// A fan-out directory without write permission does not keep a tampered
	// file in place.
	mustPut(t, o, good)
	tamper(t, path)
	os.Chmod(filepath.Dir(path), 0o500)
	if _, err := o.Get(d); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after tampering = %v, want ErrNotFound", err)
	}
	wantOneDiscard(t, rec, o, d, path)
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("tampered object in a 0500 directory not removed: %v", err)
	}

	// Remove works even when the agent took write permission away from
	// every directory of the origin.
	mustPut(t, o, good)
	save(o, CatalogSidecar, []byte("{}"))
	for _, dir := range []string{filepath.Dir(path), filepath.Join(o.Dir(), "objects"), o.Dir()} {
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Remove("acme-1"); err != nil {
		t.Fatalf("Remove of a write-protected origin: %v", err)
	}
	if _, err := os.Lstat(o.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("origin directory survived Remove: %v", err)
	}
}
