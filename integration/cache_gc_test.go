//go:build linux

package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A cache that cleans itself (skillfs.cache): max_size evicts what no
// mount holds, cache gc drops identities unused for keep_days, and cache
// rm leaves a mount's server alone unless --force.

// bigFile is version v of a file of n bytes.
func bigFile(v, n int) string {
	s := strings.Repeat(fmt.Sprintf("version %d of the big file\n", v), n/20+1)
	return s[:n]
}

// objectFile is where the cache keeps content for the origin whose label
// is label ("" when the cache holds no such origin).
func objectFile(t *testing.T, cache, label, content string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(content))
	h := hex.EncodeToString(sum[:])
	ms, _ := filepath.Glob(filepath.Join(cache, label+"-*"))
	if len(ms) != 1 {
		t.Fatalf("cache holds %d origins of %s: %v", len(ms), label, ms)
	}
	return filepath.Join(ms[0], "objects", h[:2], h)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// objectBytes sums the files under every origin's objects/.
func objectBytes(t *testing.T, cache string) int64 {
	t.Helper()
	var n int64
	dirs, _ := filepath.Glob(filepath.Join(cache, "*", "objects"))
	for _, d := range dirs {
		filepath.WalkDir(d, func(_ string, e fs.DirEntry, err error) error {
			if err == nil && e.Type().IsRegular() {
				if fi, err := e.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
	}
	return n
}

func TestCacheMaxSizeKeepsTheStoreWithinItsBound(t *testing.T) {
	t.Parallel()
	const size, maxSize = 40 << 10, 64 << 10
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"alpha/SKILL.md":     skillMD("alpha", "Alpha skill", "Read refs/big.txt.\n"),
		"alpha/refs/big.txt": bigFile(0, size),
	})
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)},
		map[string]any{"cache": map[string]any{"max_size": "64KiB"}})
	// No memory cache: every read the kernel asks for comes from the disk
	// copy (re-hashed) or a fetch.
	m := startMount(t, cfg, "--memory-cache", "0")
	// While a new version's catalog is being saved, the saved one still
	// holds the old version: a pass then may find both held and say so,
	// and the save runs it again. That warning, and no other, may come.
	m.warnings = true
	t.Cleanup(func() {
		m.Stop(t) // first, so that what it logs while stopping is checked too
		for _, line := range strings.Split(m.log.String(), "\n") {
			if (strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR")) && !strings.Contains(line, "cache over cache.max_size") {
				t.Errorf("unexpected warning from the daemon: %s", line)
			}
		}
	})
	big := m.Path("local", "alpha", "refs", "big.txt")
	if b, err := os.ReadFile(big); err != nil || string(b) != bigFile(0, size) {
		t.Fatalf("first read: %d bytes, %v", len(b), err)
	}
	// Five versions, 200 KiB read in all, through a 64 KiB cache. Each read
	// is the old version or the new one, byte for byte, never anything else.
	for v := 1; v <= 5; v++ {
		writeTree(t, dir, map[string]string{"alpha/refs/big.txt": bigFile(v, size)})
		waitFor(t, 2*time.Minute, fmt.Sprintf("version %d in the mount", v), func() bool {
			b, err := os.ReadFile(big)
			if err != nil {
				return false // between the listing and the read: refetched next time
			}
			if string(b) != bigFile(v, size) && string(b) != bigFile(v-1, size) {
				t.Fatalf("read %d bytes that are neither version %d nor %d", len(b), v-1, v)
			}
			return string(b) == bigFile(v, size)
		})
	}
	// The last version is written to the cache in the background: wait for
	// it, and for the cache to be within its bound with it.
	cur := objectFile(t, m.Cache, "local", bigFile(5, size))
	waitFor(t, 2*time.Minute, "the version served stored, and the cache within max_size", func() bool {
		return exists(cur) && objectBytes(t, m.Cache) <= maxSize
	})
	for v := 0; v < 4; v++ {
		if p := objectFile(t, m.Cache, "local", bigFile(v, size)); exists(p) {
			t.Errorf("version %d, which no mount holds, is still cached (%d bytes of objects, max 64KiB)", v, objectBytes(t, m.Cache))
		}
	}
	if b, err := os.ReadFile(m.Path("local", "alpha", "SKILL.md")); err != nil || !strings.Contains(string(b), "Read refs/big.txt.") {
		t.Errorf("SKILL.md after eviction: %q, %v", b, err)
	}
	if !m.logged("cache evicted least recently used objects") {
		t.Errorf("the log does not say what was evicted:\n%s", m.log.String())
	}
}

func TestCacheGCDropsUnusedIdentitiesAndEvicts(t *testing.T) {
	t.Parallel()
	oldDir, dir := t.TempDir(), t.TempDir()
	writeTree(t, oldDir, map[string]string{"gone/SKILL.md": skillMD("gone", "An old skill", "old\n")})
	writeTree(t, dir, map[string]string{
		"alpha/SKILL.md":     skillMD("alpha", "Alpha skill", "body\n"),
		"alpha/refs/big.txt": bigFile(1, 4096),
	})
	cache := filepath.Join(t.TempDir(), "cache")
	// A server used once, long ago.
	oldCfg := writeConfig(t, map[string]any{"old": stdioServe(oldDir, os.DevNull)}, nil)
	m0 := &mount{Dir: filepath.Join(t.TempDir(), "mnt"), Cache: cache, log: &syncBuffer{}}
	m0.start(t, oldCfg)
	if _, err := os.ReadFile(m0.Path("old", "gone", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	m0.Stop(t)

	// A mount of another server, with no size bound of its own, reads two
	// versions of a file: the first is no longer held.
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)},
		map[string]any{"cache": map[string]any{"max_size": "off"}})
	m := &mount{Dir: filepath.Join(t.TempDir(), "mnt"), Cache: cache, log: &syncBuffer{}}
	m.start(t, cfg)
	big := m.Path("local", "alpha", "refs", "big.txt")
	if _, err := os.ReadFile(big); err != nil {
		t.Fatal(err)
	}
	writeTree(t, dir, map[string]string{"alpha/refs/big.txt": bigFile(2, 4096)})
	waitFor(t, 2*time.Minute, "version 2 in the mount", func() bool {
		b, _ := os.ReadFile(big)
		return string(b) == bigFile(2, 4096)
	})
	v1, v2 := objectFile(t, cache, "local", bigFile(1, 4096)), objectFile(t, cache, "local", bigFile(2, 4096))
	waitFor(t, time.Minute, "both versions stored", func() bool { return exists(v1) && exists(v2) })

	// The old server's identity was last used 40 days ago.
	olds, _ := filepath.Glob(filepath.Join(cache, "old-*"))
	if len(olds) != 1 {
		t.Fatalf("old origins: %v", olds)
	}
	longAgo := time.Now().Add(-40 * 24 * time.Hour)
	if err := os.Chtimes(filepath.Join(olds[0], "last-used"), longAgo, longAgo); err != nil {
		t.Fatal(err)
	}
	// cache gc with a bound of one byte: every unheld file goes.
	gcCfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)},
		map[string]any{"cache": map[string]any{"max_size": 1, "keep_days": 30}})

	out, errOut, code := runSkillfs(t, nil, "cache", "gc", "--dry-run", "--cache-dir", cache, "--config", gcCfg)
	if code != 0 {
		t.Fatalf("cache gc --dry-run: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"would remove " + filepath.Base(olds[0]) + ": catalog, approvals and files", "would remove 1 unheld files of local-", "dry run, nothing removed"} {
		if !strings.Contains(out, want) {
			t.Errorf("cache gc --dry-run does not say %q:\n%s", want, out)
		}
	}
	if !exists(olds[0]) || !exists(v1) || !exists(v2) {
		t.Errorf("cache gc --dry-run removed something: old %v, v1 %v, v2 %v", exists(olds[0]), exists(v1), exists(v2))
	}

	out, errOut, code = runSkillfs(t, nil, "cache", "gc", "--cache-dir", cache, "--config", gcCfg)
	if code != 0 {
		t.Fatalf("cache gc: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"removed " + filepath.Base(olds[0]) + ": catalog, approvals and files", "removed 1 unheld files of local-", "removed 1 server caches and 1 files", "are kept"} {
		if !strings.Contains(out, want) {
			t.Errorf("cache gc does not say %q:\n%s", want, out)
		}
	}
	if exists(olds[0]) || exists(v1) {
		t.Errorf("after cache gc: old identity there %v, unheld version there %v", exists(olds[0]), exists(v1))
	}
	if !exists(v2) {
		t.Error("cache gc evicted the version a running mount serves")
	}
	if b, err := os.ReadFile(big); err != nil || string(b) != bigFile(2, 4096) {
		t.Errorf("the mount after cache gc: %d bytes, %v", len(b), err)
	}
}

func TestCacheRmOfAMountedServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"alpha/SKILL.md":   skillMD("alpha", "Alpha skill", "body\n"),
		"alpha/refs/a.txt": bigFile(1, 3000),
		"alpha/refs/b.txt": bigFile(2, 3000),
	}
	writeTree(t, dir, files)
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)}, nil)
	m := startMount(t, cfg, "--memory-cache", "0")
	if b, err := os.ReadFile(m.Path("local", "alpha", "refs", "a.txt")); err != nil || string(b) != files["alpha/refs/a.txt"] {
		t.Fatalf("read a.txt: %v", err)
	}
	a := objectFile(t, m.Cache, "local", files["alpha/refs/a.txt"])
	waitFor(t, time.Minute, "a.txt stored", func() bool { return exists(a) })

	out, errOut, code := runSkillfs(t, nil, "cache", "rm", "--cache-dir", m.Cache, "local")
	if code == 0 || !strings.Contains(errOut, "in use by the mount at "+m.Dir) || !strings.Contains(errOut, "--force") {
		t.Errorf("cache rm of a mounted server: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !exists(a) {
		t.Error("a refused cache rm removed the server's files")
	}

	out, errOut, code = runSkillfs(t, nil, "cache", "rm", "--force", "--cache-dir", m.Cache, "local")
	if code != 0 || !strings.Contains(out, "removed local-") {
		t.Fatalf("cache rm --force: exit %d\n%s%s", code, out, errOut)
	}
	if exists(a) || exists(filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(a))), "catalog.json")) {
		t.Error("cache rm --force left the server's files or catalog")
	}
	// The mount keeps serving: a file never read is fetched, verified and
	// stored again; the one read before reads the same bytes.
	for _, p := range []string{"alpha/refs/b.txt", "alpha/refs/a.txt", "alpha/SKILL.md"} {
		b, err := os.ReadFile(m.Path(append([]string{"local"}, strings.Split(p, "/")...)...))
		if err != nil || string(b) != files[p] {
			t.Errorf("read %s after cache rm --force: %d bytes, %v", p, len(b), err)
		}
	}
	bObj := objectFile(t, m.Cache, "local", files["alpha/refs/b.txt"])
	waitFor(t, time.Minute, "b.txt stored again", func() bool { return exists(bObj) })
	// A second mount's view: nothing removed is served as if verified.
	if _, err := os.Stat(filepath.Dir(a)); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat of the objects dir: %v", err)
	}
}

func TestConfigCheckCacheSection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	writeFile(t, good, `{"mcpServers": {"local": {"command": "/bin/sh"}}, "skillfs": {"cache": {"max_size": "500MiB", "keep_days": 7}}}`)
	if out, errOut, code := runSkillfs(t, nil, "config", "check", good); code != 0 {
		t.Errorf("config check of cache {max_size: 500MiB, keep_days: 7}: exit %d\n%s%s", code, out, errOut)
	}
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, bad, `{"mcpServers": {"local": {"command": "/bin/sh"}}, "skillfs": {"cache": {"max_size": "2G"}}}`)
	out, errOut, code := runSkillfs(t, nil, "config", "check", bad)
	all := out + errOut
	if code != 2 || !strings.Contains(all, "skillfs.cache.max_size") || !strings.Contains(all, `unknown unit "G"`) || !strings.Contains(all, "2GiB") {
		t.Errorf("config check of max_size 2G: exit %d, want 2 and a message naming the key and saying what to write\n%s", code, all)
	}
}

func TestCacheHeldOverMaxSizeIsKeptAndSaid(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"alpha/SKILL.md":     skillMD("alpha", "Alpha skill", "body\n"),
		"alpha/refs/big.txt": bigFile(1, 8192),
	})
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)},
		map[string]any{"cache": map[string]any{"max_size": "1KiB"}})
	m := startMount(t, cfg, "--memory-cache", "0")
	m.warnings = true // the cache over max_size is logged at Warn
	big := m.Path("local", "alpha", "refs", "big.txt")
	if b, err := os.ReadFile(big); err != nil || string(b) != bigFile(1, 8192) {
		t.Fatalf("read: %d bytes, %v", len(b), err)
	}
	var out string
	waitFor(t, 30*time.Second, "status to say the held files pass max_size", func() bool {
		out, _ = skillfsCmd(t, m, "status")
		return strings.Contains(out, "over cache.max_size 1.0 KiB")
	})
	if !strings.Contains(out, "are kept") {
		t.Errorf("status:\n%s", out)
	}
	if p := objectFile(t, m.Cache, "local", bigFile(1, 8192)); !exists(p) {
		t.Error("a held file was evicted to meet max_size")
	}
	if !m.logged("cache over cache.max_size") {
		t.Errorf("the log does not say the cache is over max_size:\n%s", m.log.String())
	}
	if b, err := os.ReadFile(big); err != nil || string(b) != bigFile(1, 8192) {
		t.Errorf("read again: %d bytes, %v", len(b), err)
	}
}

func TestCacheEvictionKeepsWhatApprovalsHold(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, approvalFiles)
	// A bound of one byte: everything not held goes, in the mount and in
	// cache gc.
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull, "--poll", "200ms")},
		map[string]any{"defaults": map[string]any{"approval": "required"}, "cache": map[string]any{"max_size": 1}})
	m := startMount(t, cfg)
	m.warnings = true // the held files over max_size are logged at Warn
	if out, err := skillfsCmd(t, m, "approve", "--yes", "local/alpha"); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(m.Path("local", "alpha", "refs", "a.md")); err != nil || string(b) != approvalFiles["alpha/refs/a.md"] {
		t.Fatalf("read the approved file: %q, %v", b, err)
	}
	approved := objectFile(t, m.Cache, "local", approvalFiles["alpha/refs/a.md"])
	waitFor(t, 2*time.Minute, "the approved file stored", func() bool { return exists(approved) })

	// The server changes the skill: the approved version is in no tree now,
	// only in the approval, which the next `skillfs approve` diffs against.
	writeTree(t, dir, map[string]string{"alpha/refs/a.md": "changed by the server\n"})
	waitFor(t, 2*time.Minute, "alpha to leave the mount", func() bool {
		_, err := os.Stat(m.Path("local", "alpha"))
		return errors.Is(err, os.ErrNotExist)
	})
	out, errOut, code := runSkillfs(t, nil, "cache", "gc", "--cache-dir", m.Cache, "--config", cfg)
	if code != 0 || !strings.Contains(out, "are kept") {
		t.Errorf("cache gc: exit %d\n%s%s", code, out, errOut)
	}
	if !exists(approved) {
		t.Fatalf("the approved version's bytes were evicted; cache gc said:\n%s", out)
	}
	pending, err := skillfsCmd(t, m, "pending")
	if err != nil || !strings.Contains(pending, "local/alpha") {
		t.Errorf("pending after gc: %v\n%s", err, pending)
	}
}
