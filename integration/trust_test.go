//go:build linux

package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillfs/skillfs/integration/hostile"
)

// The checks that belong to an entry, not to bytes (issue 8 item 1): a
// SKILL.md is compared with the frontmatter of the entry it is served
// under on every serve — whether its bytes come from the server, memory or
// the disk store — and its content flags are kept per (entry, digest).
func TestEntryChecksOnEveryServe(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state.json")
	access := filepath.Join(t.TempDir(), "access.log")
	cfg := writeConfig(t, map[string]any{
		"evil": hostileStdio(t, hostile.Options{
			Fixtures:  []string{hostile.BorrowedDigest, hostile.FrontmatterFlip, hostile.TagChars},
			StateFile: state, AccessLog: access,
		}),
	}, nil)
	m := startMount(t, cfg)
	m.warnings = true
	b := m.Path("evil", "borrowed-b", "SKILL.md")
	const bURI = "skill://borrowed-b/SKILL.md"

	// B first: the bytes fetched match B's digest but not its frontmatter.
	readEIO(t, b)
	// A's supporting file brings the very same bytes into the store.
	payload, err := os.ReadFile(m.Path("evil", "borrowed-a", "payload.md"))
	if err != nil || !bytes.Contains(payload, []byte("allowed-tools")) {
		t.Fatalf("borrowed-a/payload.md: %v", err)
	}
	// B again: now from the store, and still refused.
	readEIO(t, b)
	if st, reason, flags, _ := indexEntry(t, m, "evil", bURI); st != "failed" || reason != "frontmatter-mismatch" || slices.Contains(flags, "allowed-tools") {
		t.Errorf("index for borrowed-b: state %q reason %q flags %v; want failed, frontmatter-mismatch", st, reason, flags)
	}
	if v := xattrOr(t, b, "user.skillfs.verified"); v == "yes" {
		t.Errorf("borrowed-b/SKILL.md: user.skillfs.verified = %q", v)
	}

	// An honest SKILL.md's content flags, found when it is read.
	tag := m.Path("evil", "tag-chars", "SKILL.md")
	if _, err := os.ReadFile(tag); err != nil {
		t.Fatal(err)
	}
	_, _, tagFlags, _ := indexEntry(t, m, "evil", "skill://tag-chars/SKILL.md")
	if !slices.ContainsFunc(tagFlags, func(f string) bool { return strings.Contains(f, "comment") }) {
		t.Errorf("tag-chars flags after reading it: %v; want its HTML comment flagged", tagFlags)
	}

	// A listing that changes only the frontmatter (same digest) fails the
	// next serve of the very same bytes.
	flip := m.Path("evil", "frontmatter-flip", "SKILL.md")
	if _, err := os.ReadFile(flip); err != nil {
		t.Fatalf("frontmatter-flip before the change: %v", err)
	}
	if err := hostile.WriteState(state, hostile.State{Phase: "b"}); err != nil {
		t.Fatal(err)
	}
	m.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, 60*time.Second, "the changed frontmatter to reach the index", func() bool {
		return indexDescription(t, m, "evil", "skill://frontmatter-flip/SKILL.md") == "A description the listing changed to"
	})
	readEIO(t, flip)

	// A restart serves from the store and checks the same way; the flags
	// found before are shown before anything is read again.
	m.Stop(t)
	if err := hostile.WriteState(state, hostile.State{Phase: "a"}); err != nil {
		t.Fatal(err)
	}
	m2 := &mount{Dir: m.Dir, Cache: m.Cache, log: &syncBuffer{}, warnings: true}
	m2.start(t, cfg)
	if _, _, flags, _ := indexEntry(t, m2, "evil", "skill://tag-chars/SKILL.md"); !slices.Equal(flags, tagFlags) {
		t.Errorf("tag-chars flags after a restart, before any read: %v; want %v", flags, tagFlags)
	}
	before := hostileReads(t, access, bURI)
	readEIO(t, m2.Path("evil", "borrowed-b", "SKILL.md"))
	if after := hostileReads(t, access, bURI); after != before {
		t.Logf("borrowed-b fetched again after the restart (%d → %d)", before, after)
	}
	if st, reason, _, _ := indexEntry(t, m2, "evil", bURI); st != "failed" || reason != "frontmatter-mismatch" {
		t.Errorf("index for borrowed-b after a restart: %q %q", st, reason)
	}
}

// xattrOr reads an extended attribute, returning the error as text.
func xattrOr(t *testing.T, path, name string) string {
	t.Helper()
	buf := make([]byte, 4096)
	n, err := unix.Getxattr(path, name, buf)
	if err != nil {
		return "error: " + err.Error()
	}
	return string(buf[:n])
}

func indexDescription(t *testing.T, m *mount, origin, uri string) string {
	t.Helper()
	b, err := readGenerated(m.Path(".skillfs", "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Skills []struct {
			Origin, URI, Description string
		} `json:"skills"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	for _, s := range idx.Skills {
		if s.Origin == origin && s.URI == uri {
			return s.Description
		}
	}
	return ""
}

// One open reads one version (issue 8 item 8): a file that changes on
// the server while a reader is part-way through gives that reader the rest
// of the version it started or EIO — never the new version's bytes.
func TestOneOpenSeesOneVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const size = 1 << 20
	v1 := bytes.Repeat([]byte("version one .... "), size/17+1)[:size]
	v2 := bytes.Repeat([]byte("VERSION TWO !!!! "), size/17+1)[:size]
	writeTree(t, dir, map[string]string{
		"big/SKILL.md":   skillMD("big", "A skill with a large file", "See data.txt.\n"),
		"big/data.txt":   string(v1),
		"other/SKILL.md": skillMD("other", "Another skill", "x\n"),
	})
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, "")}, nil)
	m := startMount(t, cfg)
	p := m.Path("local", "big", "data.txt")
	digest1 := xattrOr(t, p, "user.skillfs.digest")

	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	first := make([]byte, 128<<10)
	if _, err := io.ReadFull(f, first); err != nil {
		t.Fatalf("first 128 KiB: %v", err)
	}
	if !bytes.Equal(first, v1[:len(first)]) {
		t.Fatal("the first 128 KiB are not version one")
	}

	replaceFile(t, filepath.Join(dir, "big", "data.txt"), v2, 0o644)
	waitFor(t, 60*time.Second, "the mount to hold the new version", func() bool {
		d := xattrOr(t, p, "user.skillfs.digest")
		return d != digest1 && !strings.HasPrefix(d, "error")
	})

	rest, err := io.ReadAll(f)
	got := append(first, rest...)
	switch {
	case err == nil && bytes.Equal(got, v1):
		// The whole of version one, from the kernel's pages.
	case errors.Is(err, syscall.EIO) && bytes.Equal(got, v1[:len(got)]):
		// Version one up to the change, then EIO.
	default:
		n := 0
		for n < len(got) && n < len(v1) && got[n] == v1[n] {
			n++
		}
		t.Fatalf("reader got %d bytes (%v): version one only up to byte %d; a mix of two versions", len(got), err, n)
	}

	// A new open reads the new version whole.
	now, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(now, v2) {
		t.Fatalf("a new open after the change: %d bytes, %v; want version two", len(now), err)
	}
}

// A dynamic skill's file is fetched once per open and served exactly as
// fetched, with its real size (issue 8 item 9). The open here is this
// process's own, which the Go runtime interrupts to preempt it; that an
// interrupted read still fetches once is TestInterruptedDynamicReadIsOneFetch.
func TestDynamicFileIsOneFetchPerOpen(t *testing.T) {
	t.Parallel()
	access := filepath.Join(t.TempDir(), "access.log")
	cfg := writeConfig(t, map[string]any{
		"dyn": hostileStdio(t, hostile.Options{Fixtures: []string{hostile.DynamicRotating}, AccessLog: access}),
	}, map[string]any{"servers": map[string]any{"dyn": map[string]any{"allow_dynamic": true}}})
	m := startMount(t, cfg)
	m.warnings = true
	const uri = "skill://dynamic-rotating/SKILL.md"
	p := m.Path("dyn", "dynamic-rotating", "SKILL.md")
	seen := map[int]bool{}
	for i := range 3 {
		before := hostileReads(t, access, uri)
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(f)
		if err != nil {
			f.Close()
			t.Fatalf("read %d: %v", i, err)
		}
		fi, err := f.Stat()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		v := hostile.DynamicVersion(hostile.DynamicRotating, b)
		if v < 0 {
			t.Fatalf("read %d: %d bytes that are no version the server sent (NULs: %d)", i, len(b), bytes.Count(b, []byte{0}))
		}
		if seen[v] {
			t.Errorf("read %d: version %d again; each open should fetch anew", i, v)
		}
		seen[v] = true
		if fi.Size() != int64(len(b)) {
			t.Errorf("read %d: size %d after reading %d bytes", i, fi.Size(), len(b))
		}
		if n := hostileReads(t, access, uri) - before; n != 1 {
			b, _ := os.ReadFile(access)
			t.Errorf("read %d: %d resources/read calls for one open, want 1; the server's access log:\n%s", i, n, b)
		}
	}
}

// Reads hung on one server do not hold up another's (issue 8 item 4), and
// a read past the per-server bound fails fast instead of queueing.
func TestHungReadsDoNotStallOtherServers(t *testing.T) {
	t.Parallel()
	good := newHonest(t)
	access := filepath.Join(t.TempDir(), "access.log")
	cfg := writeConfig(t, map[string]any{
		"evil": hostileStdio(t, hostile.Options{Fixtures: []string{hostile.HangMany}, AccessLog: access}),
		"good": good.entry(),
	}, map[string]any{"servers": map[string]any{"evil": map[string]any{"limits": map[string]any{"call_timeout": "10m"}}}})
	m := startMount(t, cfg)
	m.warnings = true

	type reader struct {
		cmd  *exec.Cmd
		out  bytes.Buffer
		done chan error
	}
	var readers []*reader
	for i := range hostile.HangManyFiles {
		r := &reader{cmd: exec.Command("cat", m.Path("evil", "hang-many", fmt.Sprintf("f-%02d.md", i))), done: make(chan error, 1)}
		r.cmd.Stderr = &r.out
		r.cmd.Stdout = io.Discard
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { r.done <- r.cmd.Wait() }()
		readers = append(readers, r)
	}
	t.Cleanup(func() {
		for _, r := range readers {
			r.cmd.Process.Kill()
		}
		for _, r := range readers {
			<-r.done
		}
	})
	waitFor(t, 60*time.Second, "16 reads to hang on the server", func() bool {
		n := 0
		for _, u := range reads(t, access) {
			if strings.HasPrefix(u, "skill://hang-many/f-") {
				n++
			}
		}
		return n >= 16
	})

	// An uncached read from the honest server. Before the fix it waited
	// for the hung reads' call timeout (10 minutes here).
	done := make(chan error, 1)
	go func() {
		b, err := os.ReadFile(m.Path("good", "team", "beta", "data.bin"))
		if err == nil && !bytes.Equal(b, good.files["team/beta/data.bin"]) {
			err = errors.New("wrong bytes")
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("honest read beside hung ones: %v", err)
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("an honest server's read was held up by another server's hung reads")
	}

	// Past the per-server bound, reads fail with EIO rather than queue.
	failed := 0
	waitFor(t, 2*time.Minute, "the reads past the bound to fail", func() bool {
		failed = 0
		for _, r := range readers {
			select {
			case err := <-r.done:
				r.done <- err
				if err != nil && strings.Contains(r.out.String(), "Input/output error") {
					failed++
				}
			default:
			}
		}
		return failed >= hostile.HangManyFiles-16
	})
	good.check(t, m)
}

// With no memory cache, one pass through a file loads (and re-hashes) it
// from the store once, not once per kernel read (issue 8 item 12).
func TestOnePassOneLoadWithoutMemoryCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := bytes.Repeat([]byte("four mebibytes of data\n"), 4<<20/23+1)[:4<<20]
	writeTree(t, dir, map[string]string{
		"big/SKILL.md": skillMD("big", "A skill with a large file", "See data.bin.\n"),
		"big/data.bin": string(data),
	})
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, "")}, nil)
	m := startMount(t, cfg, "--memory-cache", "0")
	p := m.Path("local", "big", "data.bin")
	if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("first read: %v", err)
	}
	waitFor(t, 30*time.Second, "the verified bytes to be on disk", func() bool { return cacheStats(t, m).Writes == 0 })
	dropCaches(t, p)
	before := cacheStats(t, m).DiskLoads
	if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("second read: %v", err)
	}
	if n := cacheStats(t, m).DiskLoads - before; n != 1 {
		t.Errorf("%d loads from the store for one pass through a 4 MiB file, want 1", n)
	}
}

type cacheStatsJSON struct {
	MemoryHits uint64 `json:"memory_hits"`
	DiskLoads  uint64 `json:"disk_loads"`
	Writes     int64  `json:"pending_writes"`
}

func cacheStats(t *testing.T, m *mount) cacheStatsJSON {
	t.Helper()
	b, err := readGenerated(m.Path(".skillfs", "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Cache cacheStatsJSON `json:"cache"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st.Cache
}
