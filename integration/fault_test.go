//go:build linux

package integration

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillfs/skillfs/integration/hostile"
)

// Fault injection through a real mount: servers that die and come back
// changed, a daemon killed with SIGKILL, a cache filesystem that is full or
// read-only, and the daemon's descriptors and memory after a soak. Each
// test asserts what a reader sees — the exact verified bytes or EIO, never
// a mix — and that the daemon stays up.

// readResult is one whole-file read: its bytes or its error.
type readResult struct {
	b   []byte
	err error
}

// TestServerDiesMidReadAndReturnsWithOtherContent: the server dies while
// its answer to a read is on the wire, and the restarted server lists
// other content for a file already read. Every read, from before the death
// to after the new listing, gets the old verified bytes, the new verified
// bytes or EIO — never a mix; a descriptor opened before the change keeps
// the old bytes or fails; once the listing updates the new bytes serve.
func TestServerDiesMidReadAndReturnsWithOtherContent(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state.json")
	if err := hostile.WriteState(state, hostile.State{Phase: "a"}); err != nil {
		t.Fatal(err)
	}
	good := newHonest(t)
	cfg := writeConfig(t, map[string]any{
		"evil": hostileStdio(t, hostile.Options{Fixtures: []string{hostile.Restart}, StateFile: state}),
		"good": good.entry(),
	}, nil)
	m := startMount(t, cfg)
	m.warnings = true // a dying server makes the daemon warn, as it should
	skills, err := hostile.Describe(hostile.Restart, "")
	if err != nil {
		t.Fatal(err)
	}
	var oldB, newB []byte
	for _, f := range skills[0].Files {
		if f.URI == "skill://restart/data.txt" {
			oldB, newB = f.Bytes(), f.Updated()
		}
	}
	data := m.Path("evil", "restart", "data.txt")
	if got, err := os.ReadFile(data); err != nil || !bytes.Equal(got, oldB) {
		t.Fatalf("first read of data.txt: %v", err)
	}
	held, err := os.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	// A reader that never stops until the end of the test, in another
	// goroutine, so that reads land before, during and after the change.
	var (
		mu      sync.Mutex
		results []readResult
	)
	stop := make(chan struct{})
	readerDone := make(chan struct{})
	// The reader stops however the test ends, before the mount does.
	stopReader := sync.OnceFunc(func() { close(stop); <-readerDone })
	t.Cleanup(stopReader)
	go func() {
		defer close(readerDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			b, err := os.ReadFile(data)
			mu.Lock()
			results = append(results, readResult{b, err})
			mu.Unlock()
		}
	}()

	// The server dies mid-answer: the reader of that file gets EIO and no
	// byte of the half-sent answer.
	if err := hostile.WriteState(state, hostile.State{Phase: "dying"}); err != nil {
		t.Fatal(err)
	}
	readEIO(t, m.Path("evil", "restart", "inflight.txt"))
	if got, err := os.ReadFile(data); err == nil && !bytes.Equal(got, oldB) {
		t.Errorf("data.txt while the server is down: %d bytes that are not the verified ones", len(got))
	}
	good.check(t, m)

	// It comes back (the supervisor restarts the command) with content B:
	// the dying server moved the state file to phase "new" (the test
	// writing it here raced the restart on a loaded machine).
	waitFor(t, 3*time.Minute, "data.txt to serve the new content once the listing updates", func() bool {
		b, err := os.ReadFile(data)
		return err == nil && bytes.Equal(b, newB)
	})
	if fi, err := os.Stat(data); err != nil || fi.Size() != int64(len(newB)) {
		t.Errorf("stat after the update: %v %v, want size %d", fi, err, len(newB))
	}
	t.Run("a descriptor opened before the change keeps its version or fails", func(t *testing.T) {
		buf := make([]byte, len(oldB)+len(newB))
		n, err := held.ReadAt(buf, 0)
		switch got := buf[:n]; {
		case errors.Is(err, syscall.EIO) && n == 0, bytes.Equal(got, oldB):
		case bytes.Equal(got, newB):
			t.Errorf("a descriptor opened on the old version read the new one (%d bytes): one open must see one version (DESIGN rule 10)", n)
		default:
			t.Errorf("a descriptor opened before the change read %d bytes (%v): neither the old version nor EIO", n, err)
		}
	})
	stopReader()
	mu.Lock()
	defer mu.Unlock()
	if len(results) == 0 {
		t.Fatal("the concurrent reader read nothing")
	}
	eio := 0
	for i, r := range results {
		switch {
		case r.err != nil && errors.Is(r.err, syscall.EIO):
			eio++
		case r.err != nil:
			t.Errorf("concurrent read %d: %v, want the bytes or EIO", i, r.err)
		case !bytes.Equal(r.b, oldB) && !bytes.Equal(r.b, newB):
			t.Errorf("concurrent read %d: %d bytes that are neither version (a mix): %s", i, len(r.b), mixed(r.b, oldB, newB))
		}
	}
	t.Logf("%d concurrent reads across the death and the change, %d EIO", len(results), eio)
	good.check(t, m)
}

// mixed describes how b differs from both versions.
func mixed(b, oldB, newB []byte) string {
	diverge := func(x []byte) int {
		for i := range min(len(b), len(x)) {
			if b[i] != x[i] {
				return i
			}
		}
		return min(len(b), len(x))
	}
	return fmt.Sprintf("same as the old version for %d bytes (of %d), the new for %d (of %d); starts %q",
		diverge(oldB), len(oldB), diverge(newB), len(newB), b[:min(len(b), 40)])
}

// storedObject is where the store keeps the verified bytes b of an origin.
func storedObject(t *testing.T, cache string, b []byte) string {
	t.Helper()
	sum := sha256.Sum256(b)
	h := hex.EncodeToString(sum[:])
	matches, _ := filepath.Glob(filepath.Join(cache, "*", "objects", h[:2], h))
	if len(matches) == 1 {
		return matches[0]
	}
	return ""
}

// TestSIGKILLedDaemonRemountsAndRehashesTheStore: after SIGKILL the dead
// mount is cleaned up by the next mount, which serves the verified bytes
// from the store with the server down — after hashing them again: a
// stored copy changed on disk while no daemon ran is never served.
func TestSIGKILLedDaemonRemountsAndRehashesTheStore(t *testing.T) {
	t.Parallel()
	o := mountTwoOrigins(t)
	kept, changed := "alpha/refs/a.md", "team/beta/data.bin"
	for _, p := range []string{kept, changed} {
		if _, err := os.ReadFile(o.m.Path("remote", filepath.FromSlash(p))); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 2*time.Minute, p+" to reach the store", func() bool {
			return storedObject(t, o.m.Cache, o.remote[p]) != ""
		})
	}
	o.m.Kill()
	if _, err := os.ReadDir(o.m.Dir); !errors.Is(err, syscall.ENOTCONN) {
		t.Fatalf("after SIGKILL the mountpoint should be a dead mount (ENOTCONN), got %v", err)
	}
	o.remoteSrv.Kill()
	// Same length, other bytes: only a hash tells.
	obj := storedObject(t, o.m.Cache, o.remote[changed])
	tampered := bytes.Clone(o.remote[changed])
	tampered[len(tampered)/2] ^= 0xff
	os.Chmod(obj, 0o600)
	if err := os.WriteFile(obj, tampered, 0o400); err != nil {
		t.Fatal(err)
	}

	cfg := writeConfig(t, map[string]any{
		"remote": map[string]any{"type": "http", "url": o.remoteSrv.URL},
	}, nil)
	m2 := &mount{Dir: o.m.Dir, Cache: o.m.Cache, log: &syncBuffer{}, warnings: true}
	m2.start(t, cfg)
	if !strings.Contains(m2.log.String(), "dead mount") {
		t.Errorf("no notice about the dead mount:\n%s", m2.log.String())
	}
	if got, err := os.ReadFile(m2.Path("remote", filepath.FromSlash(kept))); err != nil || !bytes.Equal(got, o.remote[kept]) {
		t.Errorf("a verified file from the store after the remount, server down: %v", err)
	}
	readEIO(t, m2.Path("remote", filepath.FromSlash(changed)))
	if storedObject(t, o.m.Cache, o.remote[changed]) != "" {
		t.Errorf("the changed stored copy was kept after failing its hash")
	}
	// The daemon's stderr reaches the test through a pipe: poll for it.
	waitFor(t, 2*time.Minute, "a log line naming the stored copy that failed its hash", func() bool {
		return strings.Contains(m2.log.String(), "failed re-verification") && strings.Contains(m2.log.String(), filepath.Base(obj))
	})
}

// tmpfsCache mounts a tmpfs of the given size for a mount's cache
// directory, unmounted in t.Cleanup after the daemon (cleanups run last
// registered first). It skips when tmpfs cannot be mounted here.
func tmpfsCache(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cache")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := run(t, "umount", dir); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fillUp writes into dir until the filesystem is full.
func fillUp(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the cache filesystem: %v", err)
			}
			return
		}
	}
}

// checkReadsExactOrEIO reads every file of files under label twice and
// wants each read to give exactly the source's bytes or EIO with no bytes.
// It returns how many reads failed.
func checkReadsExactOrEIO(t *testing.T, m *mount, label string, files map[string][]byte) int {
	t.Helper()
	failed := 0
	var paths []string
	for p := range files {
		paths = append(paths, m.Path(label, filepath.FromSlash(p)))
	}
	for range 2 {
		for p, want := range files {
			got, err := os.ReadFile(m.Path(label, filepath.FromSlash(p)))
			switch {
			case errors.Is(err, syscall.EIO):
				failed++
			case err != nil:
				t.Errorf("%s/%s: %v, want the bytes or EIO", label, p, err)
			case !bytes.Equal(got, want):
				t.Errorf("%s/%s: %d bytes that are not the source's %d", label, p, len(got), len(want))
			}
		}
		dropCaches(t, paths...)
	}
	return failed
}

// daemonAlive fails the test if the daemon has exited.
func daemonAlive(t *testing.T, m *mount) {
	t.Helper()
	select {
	case <-m.done:
		t.Fatalf("the daemon exited (%d)\n%s", m.code, m.log.String())
	default:
	}
}

// TestCacheFilesystemFull: with the cache directory on a full filesystem,
// reads still serve verified bytes (or fail with EIO and a log line),
// never corrupt ones, and the daemon stays up.
func TestCacheFilesystemFull(t *testing.T) {
	t.Parallel()
	cache := tmpfsCache(t, "2m")
	dir := t.TempDir()
	files := genTree(t, dir, "local")
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)}, nil)
	m := &mount{Dir: filepath.Join(t.TempDir(), "mnt"), Cache: cache, log: &syncBuffer{}, warnings: true}
	m.start(t, cfg)
	fillUp(t, cache)
	failed := checkReadsExactOrEIO(t, m, "local", files)
	daemonAlive(t, m)
	// The daemon's stderr reaches the test through a pipe: poll for it.
	waitFor(t, 2*time.Minute, "a log line saying the store could not write", func() bool {
		return strings.Contains(m.log.String(), "no space left on device")
	})
	if failed > 0 {
		waitFor(t, 2*time.Minute, "a log line for the failed reads", func() bool {
			return strings.Contains(m.log.String(), "read failed")
		})
	}
	t.Logf("%d of %d reads failed with EIO", failed, 2*len(files))
}

// TestCacheFilesystemReadOnly: the cache filesystem turns read-only under
// a running daemon. Bytes verified before still serve, others serve
// verified from the server or fail with EIO, and the daemon stays up.
func TestCacheFilesystemReadOnly(t *testing.T) {
	t.Parallel()
	cache := tmpfsCache(t, "64m")
	dir := t.TempDir()
	files := genTree(t, dir, "local")
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)}, nil)
	m := &mount{Dir: filepath.Join(t.TempDir(), "mnt"), Cache: cache, log: &syncBuffer{}, warnings: true}
	m.start(t, cfg)
	first := "alpha/SKILL.md"
	if _, err := os.ReadFile(m.Path("local", first)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, "the first file to reach the store", func() bool {
		return storedObject(t, cache, files[first]) != ""
	})
	if out, err := run(t, "mount", "-o", "remount,ro", cache); err != nil {
		t.Fatalf("remount ro: %v %s", err, out)
	}
	if got, err := os.ReadFile(m.Path("local", first)); err != nil || !bytes.Equal(got, files[first]) {
		t.Errorf("a file verified before the cache went read-only: %v", err)
	}
	checkReadsExactOrEIO(t, m, "local", files)
	daemonAlive(t, m)
	waitFor(t, 2*time.Minute, "a log line saying the store could not write", func() bool {
		return strings.Contains(m.log.String(), "read-only file system")
	})
}

// daemonFDs counts the daemon's open descriptors.
func daemonFDs(t *testing.T, m *mount) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", m.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// daemonRSS is the daemon's resident set (VmRSS) in bytes.
func daemonRSS(t *testing.T, m *mount) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", m.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// Soak bounds. fdSlack allows for descriptors the runtime and go-fuse open
// on their own schedule (epoll, an extra /dev/fuse clone); soakRSS is far
// above what the daemon needs for this tree (a few MiB of files) and far
// below what a leak of per-operation buffers over the soak would reach.
const (
	fdSlack = 8
	soakRSS = 256 << 20
)

// TestSoakKeepsDescriptorsAndMemoryBounded runs a few thousand stat, read,
// readdir and getxattr calls over a few hundred files and wants the
// daemon's descriptors back at their baseline and its RSS under soakRSS.
func TestSoakKeepsDescriptorsAndMemoryBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tree := map[string]string{}
	for i := range 40 {
		s := fmt.Sprintf("group-%d/skill-%02d", i%4, i)
		tree[s+"/SKILL.md"] = skillMD(fmt.Sprintf("skill-%02d", i), "Soak skill", "body\n")
		for j := range 5 {
			tree[fmt.Sprintf("%s/refs/r-%d.md", s, j)] = strings.Repeat(fmt.Sprintf("line %d of %d\n", j, i), 200*(j+1))
		}
	}
	writeTree(t, dir, tree)
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)}, nil)
	m := startMount(t, cfg)

	walk := func() int {
		ops := 0
		filepath.WalkDir(m.Path("local"), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Errorf("walk %s: %v", p, err)
				return nil
			}
			ops++
			if d.IsDir() {
				return nil
			}
			if _, err := os.Stat(p); err != nil {
				t.Errorf("stat %s: %v", p, err)
			}
			syscall.Getxattr(p, "user.skillfs.digest", make([]byte, 128))
			rel, _ := filepath.Rel(m.Path("local"), p)
			if got, err := os.ReadFile(p); err != nil || string(got) != tree[filepath.ToSlash(rel)] {
				t.Errorf("read %s: %v", p, err)
			}
			ops += 3
			return nil
		})
		if _, err := readGenerated(m.Path(".skillfs", "index.json")); err != nil {
			t.Error(err)
		}
		return ops + 1
	}
	walk() // every file fetched, verified and stored once
	waitFor(t, 2*time.Minute, "every file to reach the store", func() bool {
		for p, c := range tree {
			if storedObject(t, m.Cache, []byte(c)) == "" {
				t.Logf("not stored yet: %s", p)
				return false
			}
		}
		return true
	})
	var paths []string
	for p := range tree {
		paths = append(paths, m.Path("local", filepath.FromSlash(p)))
	}
	base := daemonFDs(t, m)
	ops := 0
	for i := 0; ops < 4000; i++ {
		ops += walk()
		if i%3 == 2 {
			dropCaches(t, paths...) // make the daemon serve again, from memory or the store
		}
	}
	if t.Failed() {
		return
	}
	var fds int
	waitFor(t, 2*time.Minute, fmt.Sprintf("the daemon's descriptors to return to %d (+%d)", base, fdSlack), func() bool {
		fds = daemonFDs(t, m)
		return fds <= base+fdSlack
	})
	rss := daemonRSS(t, m)
	if rss > soakRSS {
		t.Errorf("daemon RSS %d MiB after %d operations, want under %d", rss>>20, ops, soakRSS>>20)
	}
	t.Logf("%d operations: descriptors %d (baseline %d), RSS %d MiB", ops, fds, base, rss>>20)
}
