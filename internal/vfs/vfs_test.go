package vfs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/skillserver"
	"github.com/skillfs/skillfs/internal/store"
	"github.com/skillfs/skillfs/internal/testkit"
	"github.com/skillfs/skillfs/internal/vfs"
)

// These tests drive the core without a kernel: an in-process skillfs
// server over an in-memory pipe, and vfs's Stat, ReadDir, Lookup and File reads.

type accessLog struct {
	mu    sync.Mutex
	lines []string
	// hook, when set, sees each request line before the server handles it.
	hook func(line string)
}

func (a *accessLog) Write(p []byte) (int, error) {
	a.mu.Lock()
	line := strings.TrimSpace(string(p))
	a.lines = append(a.lines, line)
	hook := a.hook
	a.mu.Unlock()
	if hook != nil {
		hook(line)
	}
	return len(p), nil
}

func (a *accessLog) setHook(h func(line string)) {
	a.mu.Lock()
	a.hook = h
	a.mu.Unlock()
}

func (a *accessLog) reads() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, l := range a.lines {
		if u, ok := strings.CutPrefix(l, "resources/read "); ok {
			out = append(out, u)
		}
	}
	return out
}

func (a *accessLog) count(method string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, l := range a.lines {
		if strings.HasPrefix(l, method+" ") || l == method {
			n++
		}
	}
	return n
}

type fixture struct {
	allowWarn bool
	warn      *testkit.Log // the core's log; any Warn or Error fails the test unless allowWarn
	dir       string
	fs        *vfs.Core
	wait      func() // Start's: the origins have stopped
	srv       *skillserver.Server
	access    *accessLog
	cache     string
	st        *store.Store
	cancel    context.CancelFunc
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var baseFiles = map[string]string{
	"alpha/SKILL.md":             "---\nname: alpha\ndescription: Alpha skill\n---\nbody\n",
	"alpha/refs/a.md":            "aaa\n",
	"team/beta/SKILL.md":         "---\nname: beta\ndescription: Beta skill\nallowed-tools: [Bash]\n---\nbeta body\n",
	"team/beta/data.txt":         "beta data\n",
	"team/beta/gamma/SKILL.md":   "---\nname: gamma\ndescription: Nested\n---\nnested\n",
	"team/beta/gamma/notes.txt":  "gamma notes\n",
	"team/delta/SKILL.md":        "---\nname: delta\ndescription: Delta skill\n---\ndelta\n",
	"team/delta/scripts/x.sh":    "#!/bin/sh\n",
	"other/epsilon/SKILL.md":     "---\nname: epsilon\ndescription: Epsilon\n---\n",
	"other/epsilon/deep/er/f.md": "deep\n",
}

// newFixture serves files with skillserver and starts a vfs on it. edit
// may adjust the origin's config.
func newFixture(t *testing.T, files map[string]string, edit func(*config.Origin)) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir(), access: &accessLog{}, cache: t.TempDir(), warn: testkit.NewLog(nil)}
	t.Cleanup(func() {
		if !f.allowWarn {
			for _, r := range f.warn.TakeWarnings() {
				t.Errorf("unexpected warning: %s", r)
			}
		}
	})
	writeFiles(t, f.dir, files)
	// A test that caps the listing's pages gets pages of one skill, so
	// that the cap leaves skills unlisted (and within the other caps).
	so := skillserver.Options{PollInterval: -1, AccessLog: f.access}
	if edit != nil {
		probe := config.Origin{Limits: config.DefaultLimits()}
		edit(&probe)
		if probe.Limits.MaxListPages < config.DefaultLimits().MaxListPages {
			so.PageSize = 1
		}
	}
	srv, err := skillserver.New(f.dir, so)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	f.start(t, edit)
	return f
}

func (f *fixture) start(t *testing.T, edit func(*config.Origin)) {
	t.Helper()
	oc := config.Origin{Label: "local", Kind: config.Stdio, Command: "in-process", Limits: config.DefaultLimits()}
	oc.Limits.ConnectTimeout = 5 * time.Second
	oc.Limits.CallTimeout = 5 * time.Second
	if edit != nil {
		edit(&oc)
	}
	st, err := store.Open(f.cache, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.st = st
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	dial := func(context.Context) (io.ReadWriteCloser, error) {
		c, s := net.Pipe()
		go func() { f.srv.ServeConn(ctx, s); s.Close() }()
		return c, nil
	}
	v, err := vfs.New(vfs.Options{
		Config: &config.Config{Origins: []config.Origin{oc}},
		Store:  st,
		Dial:   map[string]func(context.Context) (io.ReadWriteCloser, error){"local": dial},
		Logger: f.warn.Logger(),
		// A server changed by a test is listed again within this, not
		// within the 2 s a storm of notifications gets.
		RelistGap: testRelistGap,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.fs = v
	f.wait = v.Start(ctx)
	// The mount's order: its origins stop before the server goes, and the
	// store closes last, waiting for the disk writes a read left under way
	// (Bucket.Keep), before the TempDir is removed.
	t.Cleanup(func() { v.Stop(); f.wait(); cancel(); st.Close() })
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	if waiting := v.Ready(rctx); len(waiting) > 0 {
		t.Fatalf("origins not ready: %v", waiting)
	}
}

// stop ends the origins the way the mount does, before their server goes,
// so no "session ended" warning is logged.
func (f *fixture) stop() {
	f.fs.Stop()
	f.wait()
	f.cancel()
}

func (f *fixture) read(t *testing.T, p string) ([]byte, error) {
	t.Helper()
	return f.fs.ReadFile(context.Background(), p)
}

func (f *fixture) ls(t *testing.T, p string) []string {
	t.Helper()
	ents, err := f.fs.ReadDir(context.Background(), p)
	if err != nil {
		t.Fatalf("ReadDir %q: %v", p, err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name)
	}
	return out
}

func TestTreeFollowsTheListing(t *testing.T) {
	f := newFixture(t, baseFiles, nil)
	for p, want := range map[string][]string{
		"":                            {".skillfs", "local"},
		"local":                       {"alpha", "other", "team"},
		"local/team":                  {"beta", "delta"},
		"local/team/beta":             {"SKILL.md", "data.txt", "gamma"},
		"local/team/beta/gamma":       {"SKILL.md", "notes.txt"},
		"local/other/epsilon/deep/er": {"f.md"},
	} {
		if got := f.ls(t, p); !slices.Equal(got, want) {
			t.Errorf("ls %q = %v, want %v", p, got, want)
		}
	}
	a, err := f.fs.Stat(context.Background(), "local/alpha/refs/a.md")
	if err != nil || a.Kind != vfs.KindFile || a.Size != 4 {
		t.Errorf("Stat a.md = %+v, %v", a, err)
	}
	b, _ := f.fs.Stat(context.Background(), "local/alpha/refs/a.md")
	if a.Ino != b.Ino || a.Ino < 2 {
		t.Errorf("inode numbers not stable: %d, %d", a.Ino, b.Ino)
	}
	if _, err := f.fs.Stat(context.Background(), "local/alpha/unlisted.md"); !errors.Is(err, vfs.ErrNotExist) {
		t.Errorf("a name outside the manifest: %v, want ErrNotExist", err)
	}
	if n := len(f.access.reads()); n != 0 {
		t.Errorf("listing and stat made %d resources/read calls", n)
	}
}

func TestFirstReadFetchesVerifiesAndStores(t *testing.T) {
	f := newFixture(t, baseFiles, nil)
	for range 3 {
		got, err := f.read(t, "local/team/beta/data.txt")
		if err != nil || string(got) != "beta data\n" {
			t.Fatalf("read = %q, %v", got, err)
		}
	}
	if got := f.access.reads(); !slices.Equal(got, []string{"skill://team/beta/data.txt"}) {
		t.Errorf("reads = %v, want one", got)
	}
	xs, _ := f.fs.Xattrs(context.Background(), "local/team/beta/data.txt")
	if !slices.Contains(xs, vfs.Xattr{Name: "user.skillfs.verified", Value: "yes"}) {
		t.Errorf("xattrs after read: %v", xs)
	}
}

func TestConcurrentFirstReadsShareOneFetch(t *testing.T) {
	f := newFixture(t, baseFiles, nil)
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if b, err := f.read(t, "local/alpha/refs/a.md"); err != nil || string(b) != "aaa\n" {
				t.Errorf("read: %q, %v", b, err)
			}
		}()
	}
	wg.Wait()
	if n := len(f.access.reads()); n != 1 {
		t.Errorf("32 concurrent first reads made %d fetches", n)
	}
}

func TestStaleEntryIsRefreshedWithSkillsGet(t *testing.T) {
	f := newFixture(t, baseFiles, nil)
	// The file changes after the listing; the server does not poll, so only
	// a skills/get can tell the mount.
	writeFiles(t, f.dir, map[string]string{"team/delta/scripts/x.sh": "#!/bin/sh\necho changed\n"})
	got, err := f.read(t, "local/team/delta/scripts/x.sh")
	if err != nil || string(got) != "#!/bin/sh\necho changed\n" {
		t.Fatalf("read after the change = %q, %v; want the new verified bytes", got, err)
	}
	if n := f.access.count("skills/get"); n != 1 {
		t.Errorf("skills/get calls = %d, want 1", n)
	}
	a, _ := f.fs.Stat(context.Background(), "local/team/delta/scripts/x.sh")
	if a.Size != int64(len("#!/bin/sh\necho changed\n")) {
		t.Errorf("size after the refresh = %d", a.Size)
	}
}

func TestIndexAndStatus(t *testing.T) {
	f := newFixture(t, baseFiles, nil)
	idx := vfs.Index{Skills: f.fs.Consent().Skills()}
	byPath := map[string]vfs.SkillInfo{}
	for _, s := range idx.Skills {
		byPath[s.Path] = s
	}
	beta := byPath["local/team/beta"]
	if beta.Name != "beta" || beta.State != "available" || !slices.Contains(beta.Flags, "allowed-tools") {
		t.Errorf("beta in index: %+v", beta)
	}
	if g := byPath["local/team/beta/gamma"]; g.NestedIn != "local/team/beta" {
		t.Errorf("gamma nested_in = %q", g.NestedIn)
	}
	st := f.fs.Consent().Status()
	if len(st.Origins) != 1 || st.Origins[0].State != "connected" || st.Origins[0].Skills != 5 || st.Origins[0].Catalog != "live" {
		t.Errorf("status: %+v", st.Origins)
	}
}

func TestFileTheServerLostFailsWithAReason(t *testing.T) {
	f := newFixture(t, baseFiles, nil)
	f.allowWarn = true // the failed read is logged
	// The server loses a file after listing it: the read fails, skills/get
	// shows an entry without the file, and the file leaves the tree.
	os.Remove(filepath.Join(f.dir, "alpha/refs/a.md"))
	_, err := f.read(t, "local/alpha/refs/a.md")
	var re *vfs.ReadError
	if !errors.As(err, &re) || re.Reason != vfs.ReasonRemoved {
		t.Fatalf("read of a file the server lost: %v, want a ReadError with reason %q", err, vfs.ReasonRemoved)
	}
	if _, err := f.fs.Stat(context.Background(), "local/alpha/refs/a.md"); !errors.Is(err, vfs.ErrNotExist) {
		t.Errorf("after the refresh the file should be gone: %v", err)
	}
	if got := f.ls(t, "local/alpha"); !slices.Equal(got, []string{"SKILL.md"}) {
		t.Errorf("ls local/alpha = %v", got)
	}
}

func TestSavedCatalogServesVerifiedBytesOffline(t *testing.T) {
	f := newFixture(t, baseFiles, nil)
	if _, err := f.read(t, "local/alpha/SKILL.md"); err != nil {
		t.Fatal(err)
	}
	f.stop()
	f.st.Close() // waits for the disk writes, as the daemon does at exit
	// Restart against a server that never answers the handshake.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, _ := store.Open(f.cache, store.Options{})
	oc := config.Origin{Label: "local", Kind: config.Stdio, Command: "in-process", Limits: config.DefaultLimits()}
	oc.Limits.ConnectTimeout = 200 * time.Millisecond
	v, err := vfs.New(vfs.Options{
		Config: &config.Config{Origins: []config.Origin{oc}},
		Store:  st,
		Dial: map[string]func(context.Context) (io.ReadWriteCloser, error){"local": func(context.Context) (io.ReadWriteCloser, error) {
			return nil, errors.New("server down")
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	wait := v.Start(ctx)
	defer wait()
	defer cancel()
	rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
	defer rcancel()
	v.Ready(rctx)
	b, err := v.ReadFile(ctx, "local/alpha/SKILL.md")
	if err != nil || !bytes.Contains(b, []byte("name: alpha")) {
		t.Errorf("verified bytes offline: %q, %v", b, err)
	}
	if _, err := v.ReadFile(ctx, "local/team/beta/data.txt"); err == nil {
		t.Errorf("a never-verified file was served offline")
	}
	if st := v.Consent().Status().Origins[0]; st.Catalog != "saved" {
		t.Errorf("catalog = %q, want saved", st.Catalog)
	}
}

func TestUnlistedSkillIsConfirmedWithSkillsGet(t *testing.T) {
	// The listing is cut after one page of one entry: the rest are
	// unlisted, reachable through directory reads and confirmed with
	// skills/get.
	f := newFixture(t, baseFiles, func(o *config.Origin) { o.Limits.MaxListPages = 1 })
	f.allowWarn = true // the truncated listing is logged
	if got := f.ls(t, "local"); !slices.Equal(got, []string{"alpha"}) {
		t.Fatalf("ls local = %v, want only the listed skill", got)
	}
	a, err := f.fs.Stat(context.Background(), "local/team/delta/SKILL.md")
	if err != nil {
		t.Fatalf("stat of an unlisted skill's SKILL.md: %v", err)
	}
	if a.Kind != vfs.KindFile {
		t.Errorf("kind %v", a.Kind)
	}
	if got := f.ls(t, "local/team/delta"); !slices.Equal(got, []string{"SKILL.md", "scripts"}) {
		t.Errorf("ls of the confirmed skill = %v", got)
	}
	if b, err := f.read(t, "local/team/delta/SKILL.md"); err != nil || !bytes.Contains(b, []byte("name: delta")) {
		t.Errorf("read: %q, %v", b, err)
	}
	if n := f.access.count("skills/get"); n != 1 {
		t.Errorf("skills/get calls = %d, want 1", n)
	}
	var src string
	for _, s := range f.fs.Consent().Skills() {
		if s.Path == "local/team/delta" {
			src = s.Source
		}
	}
	if src != "get" {
		t.Errorf("source of the confirmed skill = %q, want get", src)
	}
	if st := f.fs.Consent().Status().Origins[0]; !strings.Contains(st.Truncated, "max_list_pages") {
		t.Errorf("status truncated = %q", st.Truncated)
	}
}

// TestDirectoryReadsEndWithTheListing: a directory read from before the
// server's next listing is not used after it. shared/ holds one skill;
// once the server removes it and says so, ls of shared/ stops naming it
// at once, as stat does, rather than for the rest of dirReadTTL.
func TestDirectoryReadsEndWithTheListing(t *testing.T) {
	// Waits for a re-list (testRelistGap): beside the others.
	t.Parallel()
	files := maps.Clone(baseFiles)
	files["shared/refunds/SKILL.md"] = "---\nname: refunds\ndescription: Refunds\n---\n"
	f := newFixture(t, files, nil)
	if got := f.ls(t, "local/shared"); !slices.Equal(got, []string{"refunds"}) {
		t.Fatalf("ls local/shared = %v, want [refunds]", got)
	}
	reads := f.access.count("resources/directory/read")
	if err := os.RemoveAll(filepath.Join(f.dir, "shared", "refunds")); err != nil {
		t.Fatal(err)
	}
	if err := f.srv.Rescan(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "refunds to leave the tree", func() bool { return !f.exists("local/shared/refunds") })
	ents, err := f.fs.ReadDir(context.Background(), "local/shared")
	if err != nil && !errors.Is(err, vfs.ErrNotExist) {
		t.Fatalf("ls local/shared after the listing: %v", err)
	}
	for _, e := range ents {
		if e.Name == "refunds" {
			t.Errorf("ls local/shared after the listing still names refunds: stat says it is gone")
		}
	}
	if n := f.access.count("resources/directory/read"); n == reads {
		t.Errorf("no directory read after the listing: the one from before it was used")
	}
}

// TestInterruptedLookupStillConfirms: a reader that gives up while an
// unlisted skill is being confirmed (a FUSE interrupt cancels its
// context; a Go program's preemption signal sends one) does not hide the
// skill: the next lookup finds it at once, without waiting out
// confirmRetry. The cancel lands as the server receives skills/get, so
// whether the caller sees it first is up to the scheduler: several rounds.
func TestInterruptedLookupStillConfirms(t *testing.T) {
	for i := range 8 {
		f := newFixture(t, baseFiles, func(o *config.Origin) { o.Limits.MaxListPages = 1 })
		f.allowWarn = true // the truncated listing is logged
		ctx, cancel := context.WithCancel(context.Background())
		f.access.setHook(func(line string) {
			if strings.HasPrefix(line, "skills/get ") {
				cancel()
			}
		})
		f.fs.Stat(ctx, "local/team/delta/SKILL.md") // the reader gave up: any answer will do
		f.access.setHook(nil)
		if _, err := f.fs.Stat(context.Background(), "local/team/delta/SKILL.md"); err != nil {
			t.Fatalf("round %d: stat after an interrupted lookup: %v", i, err)
		}
		if n := f.access.count("skills/get"); n != 1 {
			t.Errorf("round %d: skills/get calls = %d, want 1", i, n)
		}
	}
}

// TestServerIndexFiles: .skillfs/servers holds one file per configured
// server, whatever index.md holds, listing that server's skills.
func TestServerIndexFiles(t *testing.T) {
	f := newFixture(t, baseFiles, nil)
	ctx := context.Background()
	if got := f.ls(t, ".skillfs"); !slices.Equal(got, []string{"index.json", "index.md", "status.json", "control.json", "catalog.md", "servers"}) {
		t.Errorf("ls .skillfs = %v", got)
	}
	if got := f.ls(t, ".skillfs/servers"); !slices.Equal(got, []string{"local.md"}) {
		t.Errorf("ls .skillfs/servers = %v", got)
	}
	if a, err := f.fs.Stat(ctx, ".skillfs/servers"); err != nil || a.Kind != vfs.KindDir {
		t.Errorf("stat .skillfs/servers: %+v, %v", a, err)
	}
	a, err := f.fs.Stat(ctx, ".skillfs/servers/local.md")
	if err != nil || a.Kind != vfs.KindFile {
		t.Fatalf("stat .skillfs/servers/local.md: %+v, %v", a, err)
	}
	b, err := f.read(t, ".skillfs/servers/local.md")
	if err != nil || int64(len(b)) != a.Size {
		t.Fatalf("read .skillfs/servers/local.md: %d bytes (stat said %d), %v", len(b), a.Size, err)
	}
	for _, want := range []string{"# Skills of server `local`", "Health: connected, 5 skills.", "`local/alpha/SKILL.md`", "`local/other/epsilon/SKILL.md`"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("local.md lacks %q:\n%s", want, b)
		}
	}
	for _, p := range []string{".skillfs/servers/other.md", ".skillfs/servers/local", ".skillfs/servers/local.md/x"} {
		if _, err := f.fs.Stat(ctx, p); !errors.Is(err, vfs.ErrNotExist) {
			t.Errorf("stat %s: %v, want ErrNotExist", p, err)
		}
	}
	if _, err := f.fs.ReadDir(ctx, ".skillfs/index.md"); !errors.Is(err, vfs.ErrNotDir) {
		t.Errorf("readdir of a generated file: %v, want ErrNotDir", err)
	}
}

// TestConfirmedSkillsCountAgainstResourceCap: a skill confirmed with
// skills/get counts its resources against max_list_resources with the
// listed ones. alpha is listed (2 resources); delta (2) is held at a cap
// of 4 and refused at 3, with the cap in status.json's truncated.
func TestConfirmedSkillsCountAgainstResourceCap(t *testing.T) {
	for _, tc := range []struct {
		cap  int
		held bool
	}{{4, true}, {3, false}} {
		t.Run(fmt.Sprint(tc.cap), func(t *testing.T) {
			f := newFixture(t, baseFiles, func(o *config.Origin) { o.Limits.MaxListPages = 1; o.Limits.MaxListResources = tc.cap })
			f.allowWarn = true // the truncated listing and the refusal are logged
			_, err := f.fs.Stat(context.Background(), "local/team/delta/SKILL.md")
			if held := err == nil; held != tc.held {
				t.Fatalf("stat delta/SKILL.md under max_list_resources %d: %v, want held %v", tc.cap, err, tc.held)
			}
			st := f.fs.Consent().Status().Origins[0]
			if tc.held && st.Skills != 2 {
				t.Errorf("skills = %d, want 2", st.Skills)
			}
			if !tc.held && (!strings.Contains(st.Truncated, "max_list_resources") || st.Skills != 1) {
				t.Errorf("status: skills %d, truncated %q; want 1 and the cap", st.Skills, st.Truncated)
			}
		})
	}
}

// TestConfirmedSkillsCountAgainstByteCap is max_list_bytes at its edge for
// a skill confirmed by a directory read: the listing's bytes plus the
// confirmed entry's (as JSON, what Inspect shows) is held at a cap of
// exactly their sum and refused one byte below it.
func TestConfirmedSkillsCountAgainstByteCap(t *testing.T) {
	const delta = "local/team/delta/SKILL.md"
	// First learn the two sizes under a cap that cannot stop anything.
	f := newFixture(t, baseFiles, func(o *config.Origin) { o.Limits.MaxListPages = 1 })
	f.allowWarn = true
	listed := f.fs.Consent().Status().Origins[0].ListBytes
	if _, err := f.fs.Stat(context.Background(), delta); err != nil {
		t.Fatalf("stat %s with the default caps: %v", delta, err)
	}
	ins, err := f.fs.Consent().Inspect(context.Background(), vfs.SkillRef{Path: "local/team/delta"})
	if err != nil {
		t.Fatal(err)
	}
	sum := int(listed) + len(ins.Entry)
	for _, tc := range []struct {
		cap  int
		held bool
	}{{sum, true}, {sum - 1, false}} {
		t.Run(fmt.Sprint(tc.cap), func(t *testing.T) {
			f := newFixture(t, baseFiles, func(o *config.Origin) { o.Limits.MaxListPages = 1; o.Limits.MaxListBytes = int64(tc.cap) })
			f.allowWarn = true
			if got := f.fs.Consent().Status().Origins[0].ListBytes; got != listed {
				t.Fatalf("listing bytes %d under the cap, %d without: the listing itself was cut", got, listed)
			}
			_, err := f.fs.Stat(context.Background(), delta)
			if held := err == nil; held != tc.held {
				t.Fatalf("stat %s under max_list_bytes %d (listing %d + entry %d): %v, want held %v", delta, tc.cap, listed, len(ins.Entry), err, tc.held)
			}
			if st := f.fs.Consent().Status().Origins[0]; !tc.held && !strings.Contains(st.Truncated, "max_list_bytes") {
				t.Errorf("truncated %q; want the max_list_bytes cap named", st.Truncated)
			}
		})
	}
}

// TestLookupDuringARefusalWaitsForIt: a lookup that arrives while an
// unlisted skill's skills/get is in flight waits for its outcome. It used
// to answer at once with the directory (the directory read was cached by
// the first reader), so under load a stat said ENOENT while ls still
// listed the refused name.
func TestLookupDuringARefusalWaitsForIt(t *testing.T) {
	// Waits for a re-list (testRelistGap): beside the others.
	t.Parallel()
	// Under max_list_resources 3 the unlisted delta is refused.
	f := newFixture(t, baseFiles, func(o *config.Origin) { o.Limits.MaxListPages = 1; o.Limits.MaxListResources = 3 })
	f.allowWarn = true // the truncated listing and the refusal are logged
	ctx := context.Background()
	// The parent's directory read is cached, as after any earlier walk.
	if _, err := f.fs.Stat(ctx, "local/team"); err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f.access.setHook(func(line string) {
		if strings.HasPrefix(line, "skills/get ") {
			once.Do(func() { close(started); <-release })
		}
	})
	first := make(chan error, 1)
	go func() {
		_, err := f.fs.Stat(ctx, "local/team/delta/SKILL.md")
		first <- err
	}()
	select {
	case <-started:
	case err := <-first:
		t.Fatalf("stat answered (%v) before skills/get reached the server", err)
	case <-time.After(time.Minute):
		t.Fatal("skills/get never reached the server")
	}
	second := make(chan error, 1)
	go func() {
		_, err := f.fs.Stat(ctx, "local/team/delta")
		second <- err
	}()
	// Give a lookup that does not wait the time to answer (a second; it
	// answers from memory); one that waits answers only after the release,
	// so this bound cannot fail a correct core, only let a wrong one pass
	// on a very slow machine.
	var got error
	answered := false
	select {
	case got = <-second:
		answered = true
	case <-time.After(time.Second):
	}
	close(release)
	if !answered {
		got = <-second
	}
	if err := <-first; !errors.Is(err, vfs.ErrNotExist) {
		t.Errorf("stat delta/SKILL.md: %v, want ErrNotExist (refused)", err)
	}
	if !errors.Is(got, vfs.ErrNotExist) {
		t.Errorf("stat delta while its skills/get was in flight: %v, want ErrNotExist (it was refused)", got)
	}
	if got := f.ls(t, "local/team"); slices.Contains(got, "delta") {
		t.Errorf("ls local/team = %v lists the refused delta", got)
	}
}

// A lookup whose asker gives up (a FUSE interrupt, which the Go runtime's
// preemption signal sends) while the skills/get it waits for is in flight
// answers the cancellation, which the kernel retries, not ErrNotExist,
// which the kernel keeps as the name's absence: a stat under load said
// ENOENT for a skill skills/get went on to confirm.
func TestLookupGivenUpIsNotAnAbsence(t *testing.T) {
	// Past one page the unlisted delta is found by directory reads and
	// confirmed with skills/get.
	f := newFixture(t, baseFiles, func(o *config.Origin) { o.Limits.MaxListPages = 1 })
	f.allowWarn = true // the truncated listing is logged
	if _, err := f.fs.Stat(context.Background(), "local/team"); err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f.access.setHook(func(line string) {
		if strings.HasPrefix(line, "skills/get ") {
			once.Do(func() { close(started); <-release })
		}
	})
	for _, p := range []string{"local/team/delta/SKILL.md", "local/team/delta"} {
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan error, 1)
		go func() {
			_, err := f.fs.Stat(ctx, p)
			got <- err
		}()
		select {
		case <-started:
		case err := <-got:
			t.Fatalf("stat %s answered (%v) before skills/get reached the server", p, err)
		case <-time.After(time.Minute):
			t.Fatal("skills/get never reached the server")
		}
		cancel()
		if err := <-got; !errors.Is(err, context.Canceled) {
			t.Errorf("stat %s given up while skills/get was in flight: %v, want context.Canceled", p, err)
		}
	}
	close(release)
	if _, err := f.fs.Stat(context.Background(), "local/team/delta/SKILL.md"); err != nil {
		t.Errorf("stat delta/SKILL.md once skills/get answered: %v, want it held", err)
	}
}

// testRelistGap is the fixture's vfs.Options.RelistGap: a test that changes
// the server's tree and calls Refresh waits this long, not the 2 s default
// (resolver.DefaultRelistGap).
const testRelistGap = 100 * time.Millisecond
