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
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillfs/skillfs/integration/hostile"
	"github.com/skillfs/skillfs/internal/testkit"
	"golang.org/x/sys/unix"
)

// The hostile suite: every threat of the threat model (T1–T9) attacked
// through the real mount by real MCP servers (integration/hostile) run as
// subprocesses over stdio and HTTP. Each test asserts what a user sees —
// absent paths, EIO with no bytes, reasons in .skillfs/index.json — and
// that afterwards the daemon is alive and the honest origin still reads.
// SECURITY.md names the test for every row.

// hostileStdio is the config entry of a hostile server over stdio: this
// test binary, re-executed (see hostileMain).
func hostileStdio(t *testing.T, opts hostile.Options) map[string]any {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range opts.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return map[string]any{"command": exe, "args": []string{"-test.run=^$"}, "env": env}
}

// hostileHTTP starts a hostile server over streamable HTTP and returns its
// config entry.
func hostileHTTP(t *testing.T, opts hostile.Options) map[string]any {
	t.Helper()
	cmd, err := hostile.Command(opts, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line, err := waitLine(t, stderr, io.Discard, "hostile: listening on ", 2*time.Minute)
	if err != nil {
		t.Fatalf("hostile server: %v", err)
	}
	return map[string]any{"type": "http", "url": strings.TrimSpace(line[strings.Index(line, "http://"):])}
}

type hostileOrigin func(t *testing.T, opts hostile.Options) map[string]any

var transports = []struct {
	name   string
	origin hostileOrigin
}{{"stdio", hostileStdio}, {"http", hostileHTTP}}

// honest is a `skillfs serve` origin that must keep working whatever the
// hostile ones do.
type honest struct {
	dir   string
	files map[string][]byte
	log   string
}

func newHonest(t *testing.T) *honest {
	h := &honest{dir: t.TempDir(), log: filepath.Join(t.TempDir(), "good.log")}
	h.files = genTree(t, h.dir, "good")
	return h
}

func (h *honest) entry() map[string]any { return stdioServe(h.dir, h.log) }

// check reads a few of the honest origin's files through the mount.
func (h *honest) check(t *testing.T, m *mount) {
	t.Helper()
	for _, p := range []string{"alpha/SKILL.md", "team/beta/data.bin", "shared/refunds/policy.md"} {
		got, err := os.ReadFile(m.Path("good", filepath.FromSlash(p)))
		if err != nil || !bytes.Equal(got, h.files[p]) {
			t.Errorf("the honest origin's %s after the attack: %v", p, err)
		}
	}
}

// readEIO reads path and wants EIO with not a single byte delivered.
func readEIO(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Errorf("open %s: %v", path, err)
		return
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, err := f.Read(buf)
	if n != 0 || !errors.Is(err, syscall.EIO) {
		t.Errorf("read %s: %d bytes, %v; want EIO and no bytes", path, n, err)
	}
}

func indexEntry(t *testing.T, m *mount, origin, uri string) (state, reason string, flags []string, found bool) {
	t.Helper()
	for _, s := range readIndex(t, m).Skills {
		if s.Origin == origin && s.URI == uri {
			return s.State, s.Reason, s.Flags, true
		}
	}
	return "", "", nil, false
}

func peakRSS(t *testing.T, m *mount) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", m.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

func hostileReads(t *testing.T, accessLog, uri string) int {
	t.Helper()
	n := 0
	for _, u := range reads(t, accessLog) {
		if u == uri {
			n++
		}
	}
	return n
}

// TestHostileSkills mounts one hostile server carrying every per-skill
// fixture, beside an honest origin, over each transport.
func TestHostileSkills(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			testHostileSkills(t, tr.origin)
		})
	}
}

func testHostileSkills(t *testing.T, origin hostileOrigin) {
	good := newHonest(t)
	access := filepath.Join(t.TempDir(), "evil.log")
	hangAccess := filepath.Join(t.TempDir(), "hang.log")
	fixtures := slices.DeleteFunc(hostile.Fixtures(), func(f string) bool {
		// Each of these gets a server of its own (hang-read: the "hang"
		// origin below; the others: their own tests).
		return f == hostile.DieMidRead || f == hostile.Stale || f == hostile.EscapingChildren || f == hostile.EndlessDirCursor ||
			f == hostile.HangRead || f == hostile.MarkdownSteering
	})
	// No assertion on "evil" may depend on how fast this machine is: its
	// call timeout is far longer than any slowness (a 2 MiB over-long
	// response must be refused as over-limit, never time out first; the
	// 3 s slow read must complete). Only the "hang" origin, whose read
	// never gets an answer, relies on a call timeout, and any value
	// would do there.
	cfg := writeConfig(t, map[string]any{
		"evil": origin(t, hostile.Options{Fixtures: fixtures, AccessLog: access}),
		"hang": origin(t, hostile.Options{Fixtures: []string{hostile.HangRead}, AccessLog: hangAccess}),
		"good": good.entry(),
	}, map[string]any{"servers": map[string]any{
		"evil": map[string]any{"limits": map[string]any{
			"budget":       "1MiB", // one budget-N file fits, two do not
			"call_timeout": "10m",
		}},
		"hang": map[string]any{"limits": map[string]any{"call_timeout": "3s"}},
	}})
	m := startMount(t, cfg)
	m.warnings = true // hostile servers make the daemon warn, as they should
	evil := func(p ...string) string { return m.Path(append([]string{"evil"}, p...)...) }

	t.Run("nothing is fetched ahead of need", func(t *testing.T) {
		run(t, "ls", "-lR", m.Dir)
		filepath.WalkDir(m.Dir, func(p string, d os.DirEntry, err error) error {
			if err == nil {
				syscall.Getxattr(p, "user.skillfs.digest", make([]byte, 128))
			}
			return nil
		})
		if got := append(reads(t, access), reads(t, hangAccess)...); len(got) != 0 {
			t.Errorf("listing made %d resources/read calls: %v", len(got), got)
		}
	})

	t.Run("invalid entries are rejected with a reason", func(t *testing.T) {
		for fixture, want := range map[string]string{
			hostile.FileURITriple:        "bad-scheme",
			hostile.FileURINoAuth:        "bad-scheme",
			hostile.OutsideDotDot:        "bad-segment",
			hostile.OutsideDotDotEncoded: "bad-segment",
			hostile.OutsideAuthority:     "outside-skill",
			hostile.OutsideScheme:        "outside-skill",
			hostile.NameMismatch:         "name-mismatch",
			hostile.OversizeSkillMD:      "over-limit",
			hostile.TooManyResources:     "over-limit",
			hostile.DeclaredTotalOver:    "over-limit",
			hostile.Dynamic:              "dynamic",
			hostile.NoResources:          "missing-resources",
			hostile.CaseCollision:        "collision",
		} {
			uri := "skill://" + fixture + "/SKILL.md"
			if _, err := os.Stat(evil(fixture)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: in the tree (%v), want absent", fixture, err)
			}
			state, reason, _, ok := indexEntry(t, m, "evil", uri)
			if !ok || state != "rejected" || reason != want {
				t.Errorf("%s in index.json: found %v, state %q, reason %q; want rejected, %q", fixture, ok, state, reason, want)
			}
		}
	})

	t.Run("bytes that do not match the entry are EIO", func(t *testing.T) {
		for path, want := range map[string]string{
			"digest-mismatch/payload.txt":     "digest-mismatch",
			"size-longer/payload.txt":         "",
			"size-shorter/payload.txt":        "size-mismatch",
			"frontmatter-mismatch/SKILL.md":   "frontmatter-mismatch",
			"malformed-read/bad-base64.bin":   "",
			"malformed-read/other-uri.md":     "malformed-response",
			"malformed-read/two-contents.md":  "malformed-response",
			"malformed-read/huge.txt":         "over-limit",
			"malformed-read/text-and-blob.md": "malformed-response",
		} {
			readEIO(t, evil(filepath.FromSlash(path)))
			skillURI := "skill://" + strings.SplitN(path, "/", 2)[0] + "/SKILL.md"
			state, reason, _, _ := indexEntry(t, m, "evil", skillURI)
			if state != "failed" || (want != "" && reason != want) {
				t.Errorf("%s: index.json state %q reason %q, want failed %q", path, state, reason, want)
			}
		}
		good.check(t, m)
	})

	t.Run("a file not in the manifest does not exist", func(t *testing.T) {
		if got := names(t, evil("unlisted-file")); !slices.Equal(got, []string{"SKILL.md", "listed.md"}) {
			t.Errorf("ls unlisted-file = %v", got)
		}
		if _, err := os.ReadFile(evil("unlisted-file", "unlisted.md")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("read of the unlisted file: %v, want ENOENT", err)
		}
		if n := hostileReads(t, access, "skill://unlisted-file/unlisted.md"); n != 0 {
			t.Errorf("the unlisted file was fetched %d times", n)
		}
	})

	t.Run("rotated content is never served", func(t *testing.T) {
		p := evil("rotating", "SKILL.md")
		first, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dropCaches(t, p)
		second, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(first, second) {
			t.Errorf("second read: %v, same bytes %v", err, bytes.Equal(first, second))
		}
		if n := hostileReads(t, access, "skill://rotating/SKILL.md"); n != 1 {
			t.Errorf("resources/read of the rotating file: %d, want 1 (later reads from the verified copy)", n)
		}
	})

	t.Run("the byte budget stops fetching", func(t *testing.T) {
		if _, err := os.ReadFile(evil("budget-1", "big.txt")); err != nil {
			t.Fatalf("first 640 KiB file within a 1 MiB budget: %v", err)
		}
		readEIO(t, evil("budget-2", "big.txt"))
		if _, reason, _, _ := indexEntry(t, m, "evil", "skill://budget-2/SKILL.md"); reason != "over-budget" {
			t.Errorf("budget-2 reason %q, want over-budget", reason)
		}
		if _, err := os.ReadFile(evil("budget-1", "big.txt")); err != nil {
			t.Errorf("verified bytes over budget: %v", err)
		}
		good.check(t, m)
	})

	t.Run("permission-widening frontmatter is flagged, never granted", func(t *testing.T) {
		_, _, flags, ok := indexEntry(t, m, "evil", "skill://allowed-tools/SKILL.md")
		if !ok || !slices.Contains(flags, "allowed-tools") {
			t.Errorf("allowed-tools flags: %v", flags)
		}
		_, _, inner, _ := indexEntry(t, m, "evil", "skill://nested-outer/inner-tools/SKILL.md")
		for _, f := range []string{"allowed-tools", "hooks", "nested-skill"} {
			if !slices.Contains(inner, f) {
				t.Errorf("nested skill flags %v lack %q", inner, f)
			}
		}
		// The nested skill's files are plain files of the enclosing one.
		if _, err := os.ReadFile(evil("nested-outer", "inner-tools", "run.sh")); err != nil {
			t.Errorf("nested file: %v", err)
		}
		if fi, err := os.Stat(evil("nested-outer", "inner-tools", "run.sh")); err != nil || fi.Mode().Perm() != 0o444 {
			t.Errorf("nested script mode: %v %v", fi, err)
		}
	})

	t.Run("same names at two paths are both shown and flagged", func(t *testing.T) {
		for _, p := range []string{"team-a", "team-b"} {
			if _, err := os.Stat(evil(p, "dupe", "SKILL.md")); err != nil {
				t.Errorf("%s/dupe: %v", p, err)
			}
		}
		found := false
		for _, s := range readIndex(t, m).Skills {
			if s.Path == "evil/team-a/dupe" {
				found = slices.Contains(s.Collisions, "evil/team-b/dupe")
			}
		}
		if !found {
			t.Errorf("index.json does not list the name collision")
		}
	})

	t.Run("hidden instructions are flagged", func(t *testing.T) {
		b, err := os.ReadFile(evil("tag-chars", "SKILL.md"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.ContainsFunc(string(b), func(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }) {
			t.Errorf("the fixture carries no tag characters")
		}
		_, _, flags, _ := indexEntry(t, m, "evil", "skill://tag-chars/SKILL.md")
		for _, f := range []string{"unicode-tag-chars", "html-comment"} {
			if !slices.Contains(flags, f) {
				t.Errorf("flags %v lack %q", flags, f)
			}
		}
	})

	t.Run("a slow read completes and a hung read fails without stalling others", func(t *testing.T) {
		done := make(chan error, 1)
		go func() { _, err := os.ReadFile(evil("slow-read", "SKILL.md")); done <- err }()
		hung := make(chan error, 1)
		go func() { _, err := os.ReadFile(m.Path("hang", "hang-read", "SKILL.md")); hung <- err }()
		waitFor(t, 5*time.Minute, "the hung read to reach its server", func() bool {
			return hostileReads(t, hangAccess, "skill://hang-read/SKILL.md") > 0
		})
		// Other reads of the same origin and of others go on. (On a slow
		// enough machine the hung call may have timed out by now; these
		// reads must succeed either way.)
		if _, err := os.ReadFile(m.Path("hang", "honest-a", "SKILL.md")); err != nil {
			t.Errorf("honest-a of the origin whose read hangs: %v", err)
		}
		good.check(t, m)
		if _, err := os.ReadFile(evil("honest-a", "SKILL.md")); err != nil {
			t.Errorf("honest-a while another read hangs: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("slow read: %v", err)
		}
		select {
		case err := <-hung:
			if !errors.Is(err, syscall.EIO) {
				t.Errorf("hung read: %v, want EIO", err)
			}
		case <-time.After(5 * time.Minute):
			t.Errorf("the hung read did not fail within 5 minutes (call_timeout is 3s)")
		}
		if _, reason, _, _ := indexEntry(t, m, "hang", "skill://hang-read/SKILL.md"); reason != "timeout" {
			t.Errorf("hung read: index.json reason %q, want timeout", reason)
		}
	})

	t.Run("memory stays bounded", func(t *testing.T) {
		if rss := peakRSS(t, m); rss > 200<<20 {
			t.Errorf("daemon peak RSS %d MiB, want under 200", rss>>20)
		}
	})
	good.check(t, m)
}

// dropCaches makes the next read of each of paths (files in a mount)
// reach the daemon: it evicts their pages from the kernel's page cache
// (posix_fadvise DONTNEED), and nothing else of the machine's. Dropping
// the whole page cache (/proc/sys/vm/drop_caches) would also make every
// other test, and the user's own programs, read their binaries from disk
// again.
func dropCaches(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			continue // a file that fails to open has nothing cached
		}
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			t.Errorf("evict %s from the page cache: %v", p, err)
		}
		f.Close()
	}
}

func TestHostileStaleListing(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			state := filepath.Join(t.TempDir(), "state.json")
			access := filepath.Join(t.TempDir(), "access.log")
			if err := hostile.WriteState(state, hostile.State{Phase: "b"}); err != nil {
				t.Fatal(err)
			}
			cfg := writeConfig(t, map[string]any{
				"evil": tr.origin(t, hostile.Options{Fixtures: []string{hostile.Stale}, StateFile: state, AccessLog: access}),
			}, nil)
			var extra []string
			if staleRetryFlag() {
				// The refresh after phase c need not wait 10 s.
				extra = []string{"--stale-retry", "100ms"}
			}
			m := startMount(t, cfg, extra...)
			m.warnings = true // hostile servers make the daemon warn, as they should
			files := hostile.Files(hostile.Stale)
			var updated []byte
			skills, _ := hostile.Describe(hostile.Stale, "")
			for _, f := range skills[0].Files {
				if f.URI == "skill://stale/data.txt" {
					updated = f.Updated()
				}
			}
			p := m.Path("evil", "stale", "data.txt")
			// Phase b: the server serves B while list and get say A.
			readEIO(t, p)
			// Phase c: skills/get now advertises B.
			if err := hostile.WriteState(state, hostile.State{Phase: "c"}); err != nil {
				t.Fatal(err)
			}
			var got []byte
			waitFor(t, 2*time.Minute, "the read to succeed once skills/get advertises the new digest", func() bool {
				b, err := os.ReadFile(p)
				if err != nil {
					return false
				}
				got = b
				return true
			})
			if !bytes.Equal(got, updated) {
				t.Errorf("after the refresh: %q, want content B %q (A was %q)", got, updated, files["skill://stale/data.txt"])
			}
			if fi, _ := os.Stat(p); fi.Size() != int64(len(updated)) {
				t.Errorf("size after the refresh %d, want %d", fi.Size(), len(updated))
			}
		})
	}
}

func TestHostileServerDiesMidRead(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			good := newHonest(t)
			cfg := writeConfig(t, map[string]any{
				"evil": tr.origin(t, hostile.Options{Fixtures: []string{hostile.DieMidRead}}),
				"good": good.entry(),
			}, nil)
			m := startMount(t, cfg)
			m.warnings = true // hostile servers make the daemon warn, as they should
			readEIO(t, m.Path("evil", "die-mid-read", "SKILL.md"))
			good.check(t, m)
			if tr.name == "stdio" {
				// The supervisor starts the command again.
				waitFor(t, 2*time.Minute, "the stdio server to be restarted", func() bool {
					_, err := os.ReadFile(m.Path("evil", "honest-a", "SKILL.md"))
					return err == nil
				})
			}
		})
	}
}

func TestHostileDirectoryReads(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			good := newHonest(t)
			// The listing is cut after the two honest skills (one page of
			// two), so the two fixtures are reached only through directory
			// reads. (Not max_list_entries: confirmed skills count against
			// it.)
			cfg := writeConfig(t, map[string]any{
				"evil": tr.origin(t, hostile.Options{Fixtures: []string{hostile.EscapingChildren, hostile.EndlessDirCursor}, PageSize: 2}),
				"good": good.entry(),
			}, map[string]any{"servers": map[string]any{"evil": map[string]any{"limits": map[string]any{
				"max_list_pages": 1,
				"max_dir_pages":  5,
			}}}})
			m := startMount(t, cfg)
			m.warnings = true // hostile servers make the daemon warn, as they should
			if got := names(t, m.Path("evil")); !slices.Equal(got, []string{"honest-a", "honest-b"}) {
				t.Fatalf("ls evil = %v, want the two listed skills", got)
			}
			// Reaching the unlisted skill confirms it with skills/get; its
			// manifest is then the whole of it, whatever the directory read
			// returned.
			if got := names(t, m.Path("evil", "escaping-children")); !slices.Equal(got, []string{"SKILL.md", "notes.md", "sub"}) {
				t.Errorf("ls escaping-children = %v", got)
			}
			if got := names(t, m.Path("evil", "escaping-children", "sub")); !slices.Equal(got, []string{"inner.md"}) {
				t.Errorf("ls escaping-children/sub = %v", got)
			}
			for _, p := range []string{"etc", "x", "deeper.md"} {
				if _, err := os.Stat(m.Path("evil", "escaping-children", p)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("escaping child %s: %v, want ENOENT", p, err)
				}
			}
			if !m.logged("directory child dropped") {
				t.Errorf("no log line for the dropped children")
			}
			// An endless cursor stops at max_dir_pages and the mount goes on.
			if got := names(t, m.Path("evil", "endless-dir-cursor")); !slices.Contains(got, "SKILL.md") {
				t.Errorf("ls endless-dir-cursor = %v", got)
			}
			if !m.logged("directory read truncated") {
				t.Errorf("no log line for the truncated directory read")
			}
			if _, err := os.ReadFile(m.Path("evil", "escaping-children", "notes.md")); err != nil {
				t.Errorf("the confirmed skill's file: %v", err)
			}
			good.check(t, m)
		})
	}
}

// TestHostileServers runs the server-wide misbehaviours, one origin each,
// in one mount beside an honest origin.
//
// The huge page's origin has a max_file_size of 1 MiB, so a frame cap of
// 2.5 MiB (1.5 × the file cap + 1 MiB): a page of 3 MiB is over it as a
// page of 30 MiB is over the default cap of 25 MiB, and costs a tenth to
// make, send and refuse.
func TestHostileServers(t *testing.T) {
	t.Parallel()
	good := newHonest(t)
	none := []string{}
	servers := map[string]any{"good": good.entry()}
	for _, mode := range hostile.Modes() {
		opts := hostile.Options{Fixtures: none, Mode: mode}
		if mode == hostile.ModeHugeListPage {
			opts.HugePage = 3 << 20
		}
		servers[mode] = hostileStdio(t, opts)
	}
	cfg := writeConfig(t, servers, map[string]any{"servers": map[string]any{
		hostile.ModeHugeListPage: map[string]any{"limits": map[string]any{"max_file_size": "1MiB"}},
	}, "defaults": map[string]any{"limits": map[string]any{
		"max_list_pages": 20,
		// Far longer than any slowness: the huge page must be refused as
		// too large, never time out first (list_timeout bounds the whole
		// listing: at its default of 2m a stalled machine once timed the
		// huge page out). No mode here hangs.
		"call_timeout": "10m",
		"list_timeout": "10m",
	}}})
	m := startMount(t, cfg)
	m.warnings = true // hostile servers make the daemon warn, as they should
	// The mount may be ready before every origin has listed (a loaded
	// machine makes the huge page slow to arrive), so wait until the
	// listings settle, then check each: a timeout here reports what was
	// missing below rather than a bare deadline.
	var status map[string]originStatus
	malformedRejected := func() int {
		n := 0
		for _, s := range readIndex(t, m).Skills {
			if s.Origin == hostile.ModeMalformedList && s.State == "rejected" {
				n++
			}
		}
		return n
	}
	testkit.Poll(10*time.Minute, func() bool {
		status = readStatus(t, m)
		return strings.Contains(status[hostile.ModeEndlessList].Truncated, "max_list_pages") &&
			strings.Contains(status[hostile.ModeHugeListPage].Truncated+status[hostile.ModeHugeListPage].LastError, "larger than") &&
			status[hostile.ModeNoExtension].State == "no-skills" &&
			malformedRejected() >= len(hostile.MalformedEntries())/2
	})

	if s := status[hostile.ModeEndlessList]; !strings.Contains(s.Truncated, "max_list_pages") {
		t.Errorf("endless list: truncated %q", s.Truncated)
	}
	if _, err := os.ReadFile(m.Path(hostile.ModeEndlessList, "honest-a", "SKILL.md")); err != nil {
		t.Errorf("a skill from the endless listing: %v", err)
	}
	if s := status[hostile.ModeHugeListPage]; !strings.Contains(s.Truncated+s.LastError, "larger than") {
		t.Errorf("huge list page: truncated %q, last_error %q; want the refusal", s.Truncated, s.LastError)
	}
	if _, err := os.ReadFile(m.Path(hostile.ModeHugeListPage, "honest-a", "SKILL.md")); err != nil {
		t.Errorf("the listing's pages before the huge one: %v", err)
	}
	if s := status[hostile.ModeNoExtension]; s.State != "no-skills" || s.LastError != "" {
		t.Errorf("no extension: state %q, last_error %q; want no-skills and no error", s.State, s.LastError)
	}
	if _, err := os.ReadFile(m.Path(hostile.ModeMalformedList, "honest-a", "SKILL.md")); err != nil {
		t.Errorf("the honest entry beside malformed ones: %v", err)
	}
	if malformed := malformedRejected(); malformed < len(hostile.MalformedEntries())/2 {
		t.Errorf("only %d rejected entries from the malformed listing", malformed)
	}
	readEIO(t, m.Path(hostile.ModeDieAfterList, "honest-a", "SKILL.md"))
	good.check(t, m)
	if rss := peakRSS(t, m); rss > 200<<20 {
		t.Errorf("daemon peak RSS %d MiB, want under 200", rss>>20)
	}
}

// originStatus is one origin of status.json, with the fields tests check.
type originStatus struct {
	FailedStarts   int    `json:"failed_starts"`
	Label          string `json:"label"`
	State          string `json:"state"`
	Catalog        string `json:"catalog"`
	Skills         int    `json:"skills"`
	Truncated      string `json:"truncated"`
	ListResources  int    `json:"list_resources"`
	ListBytes      int64  `json:"list_bytes"`
	CacheScope     string `json:"cache_scope"`
	Withheld       string `json:"withheld"`
	CatalogUnsaved string `json:"catalog_unsaved"`
	BytesFetched   int64  `json:"bytes_fetched"`
	Budget         int64  `json:"budget"`
	KeepFetched    int64  `json:"keep_fetched"`
	KeepBudget     int64  `json:"keep_budget"`
	LastError      string `json:"last_error"`
}

func readStatus(t *testing.T, m *mount) map[string]originStatus {
	t.Helper()
	b, err := readGenerated(m.Path(".skillfs", "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Origins []originStatus `json:"origins"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("status.json: %v\n%s", err, b)
	}
	out := map[string]originStatus{}
	for _, o := range st.Origins {
		out[o.Label] = o
	}
	return out
}

func TestSameURIFromTwoHostileOrigins(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{
		"x": hostileStdio(t, hostile.Options{Fixtures: []string{hostile.SameURIOtherOrigin}, Variant: "x"}),
		"y": hostileHTTP(t, hostile.Options{Fixtures: []string{hostile.SameURIOtherOrigin}, Variant: "y"}),
	}, nil)
	m := startMount(t, cfg)
	m.warnings = true // hostile servers make the daemon warn, as they should
	for _, label := range []string{"x", "y"} {
		b, err := os.ReadFile(m.Path(label, "shared", "notes.md"))
		if err != nil || !bytes.Contains(b, []byte("the "+label+" variant")) {
			t.Errorf("%s/shared/notes.md: %q, %v", label, b, err)
		}
	}
}

// TestOlderRevisionSizes pins what stat shows for a file whose entry (SEP
// seed revision) declares no size: the per-file cap until the file has
// been read and verified, then its length; and that strict mode rejects
// such entries.
func TestOlderRevisionSizes(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{
		"old":    hostileStdio(t, hostile.Options{Fixtures: []string{hostile.OldRevision}}),
		"strict": hostileStdio(t, hostile.Options{Fixtures: []string{hostile.OldRevision}}),
	}, map[string]any{"servers": map[string]any{
		"old":    map[string]any{"limits": map[string]any{"max_file_size": "1MiB"}},
		"strict": map[string]any{"strict": true},
	}})
	m := startMount(t, cfg)
	m.warnings = true // hostile servers make the daemon warn, as they should
	p := m.Path("old", "old-revision", "data.txt")
	want := hostile.Files(hostile.OldRevision)["skill://old-revision/data.txt"]
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 1<<20 {
		t.Errorf("size before the first read: %d, want the per-file cap %d", fi.Size(), 1<<20)
	}
	got, err := exec.Command("cat", p).Output()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("cat: %d bytes, %v; want the %d verified bytes", len(got), err, len(want))
	}
	if fi, _ := os.Stat(p); fi.Size() != int64(len(want)) {
		t.Errorf("size after the read: %d, want %d", fi.Size(), len(want))
	}
	if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, want) {
		t.Errorf("second read: %d bytes, %v", len(got), err)
	}
	if _, reason, _, _ := indexEntry(t, m, "strict", "skill://old-revision/SKILL.md"); reason != "missing-size" {
		t.Errorf("strict origin: reason %q, want missing-size", reason)
	}
}
