//go:build linux

package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillfs/skillfs/integration/hostile"
	"github.com/skillfs/skillfs/internal/testkit"
)

// indexListings reads index.json's per-origin truncated and withheld maps.
func indexListings(t *testing.T, m *mount) (truncated, withheld map[string]string) {
	t.Helper()
	b, err := readGenerated(m.Path(".skillfs", "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Truncated map[string]string `json:"truncated"`
		Withheld  map[string]string `json:"withheld"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	return idx.Truncated, idx.Withheld
}

// heavyRSSBound is the daemon's documented peak resident memory with one
// origin serving the heavy listing under the default listing caps (about
// 100,000 kept resources of 230-byte URIs, and the pages in flight) beside
// an honest origin. Unbounded, the same listing passed 3.5 GB.
const heavyRSSBound = 600 << 20

// TestHeavyListingIsBounded is issue 8 item 3: pages of 100 skills of 512
// resources with 230-byte URIs and 900-byte descriptions, with endless
// cursors — every entry inside every per-skill limit. The default caps
// stop the listing, the daemon's memory stays bounded, status.json and
// index.json say why the listing stopped, the kept skills read byte-exact,
// the catalog is saved, and the honest origin beside it is untouched.
func TestHeavyListingIsBounded(t *testing.T) {
	t.Parallel()
	good := newHonest(t)
	// The shape under the default caps (100,000 resources, 32
	// MiB) in the soak run; by default pages of a quarter the entries
	// under a quarter of the caps: the same cuts, a quarter of the bytes.
	heavy := hostile.Heavy{}
	resourceCap, byteCap := 100_000, 32<<20
	limits := map[string]any{
		// The caps are what is tested, not the server's speed: each page is
		// about 17 MB that the hostile server (a -race binary) renders and
		// the daemon checks, which on a saturated machine can take longer
		// than the default call_timeout of 30 s. Only the test's own wait
		// fails a hang.
		"call_timeout": "10m", "list_timeout": "10m",
	}
	if !testkit.Soak() {
		heavy.Entries = 25
		resourceCap, byteCap = 25_000, 8<<20
		limits["max_list_resources"], limits["max_list_bytes"] = resourceCap, byteCap
	}
	page := 100 * 512 // hostile.Heavy's default entries of 512 resources
	if heavy.Entries > 0 {
		page = heavy.Entries * 512
	}
	cfg := writeConfig(t, map[string]any{
		"good":  good.entry(),
		"heavy": hostileStdio(t, hostile.Options{Fixtures: []string{}, Mode: hostile.ModeHeavyList, Heavy: heavy}),
	}, map[string]any{"defaults": map[string]any{"limits": limits}})
	m := startMount(t, cfg, "--startup-timeout", "10m")
	m.warnings = true // the truncation is a warning, as it should be
	var st originStatus
	waitFor(t, 10*time.Minute, "the heavy origin's live catalog", func() bool {
		st = readStatus(t, m)["heavy"]
		return st.Catalog == "live"
	})
	if !strings.Contains(st.Truncated, "max_list_bytes") && !strings.Contains(st.Truncated, "max_list_resources") {
		t.Errorf("status.json truncated %q; want the listing cap that stopped it", st.Truncated)
	}
	if st.ListResources > resourceCap || st.ListBytes > int64(byteCap) || st.ListResources < page*9/10 {
		t.Errorf("the listing kept %d resources in %d bytes; want at most the caps (%d, %d bytes) and about a page (%d) at least", st.ListResources, st.ListBytes, resourceCap, byteCap, page)
	}
	if st.CatalogUnsaved != "" {
		t.Errorf("the catalog was not saved: %s", st.CatalogUnsaved)
	}
	if truncated, _ := indexListings(t, m); truncated["heavy"] != st.Truncated {
		t.Errorf("index.json truncated[heavy] = %q, want %q", truncated["heavy"], st.Truncated)
	}
	// A kept skill is whole: SKILL.md and its last (longest-URI) file read
	// byte-exact.
	sk, files := hostile.HeavySkill(heavy, 0)
	for _, r := range []string{sk.Entry.URI, sk.Entry.Resources[len(sk.Entry.Resources)-1].URI} {
		p := m.Path("heavy", filepath.FromSlash(strings.TrimPrefix(r, "skill://")))
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, files[r]) {
			t.Errorf("%s: %v, or not the served bytes", r, err)
		}
	}
	ents, err := os.ReadDir(m.Path("heavy", "heavy-0", strings.Split(strings.TrimPrefix(sk.Entry.Resources[1].URI, "skill://heavy-0/"), "/")[0]))
	if err != nil || len(ents) == 0 {
		t.Errorf("a kept heavy skill's files: %d entries, %v", len(ents), err)
	}
	good.check(t, m)
	rss := peakRSS(t, m)
	t.Logf("daemon peak RSS %d MiB; heavy listing kept %d resources, %d bytes", rss>>20, st.ListResources, st.ListBytes)
	if rss > heavyRSSBound {
		t.Errorf("daemon peak RSS %d MiB, want under %d MiB", rss>>20, heavyRSSBound>>20)
	}
}

// TestPrivateListingIsWithheldUnderAllowOther is issue 8 item 18: with
// --allow-other a listing the server marks cacheScope "private" is not
// shown — no directory, no file, no name in index.json — and status.json
// says why; public origins beside it are shown as usual.
func TestPrivateListingIsWithheldUnderAllowOther(t *testing.T) {
	t.Parallel()
	good := newHonest(t)
	none := []string{}
	cfg := writeConfig(t, map[string]any{
		"good": good.entry(),
		"priv": hostileStdio(t, hostile.Options{Fixtures: none, CacheScope: "private"}),
		"pub":  hostileStdio(t, hostile.Options{Fixtures: none, CacheScope: "public"}),
	}, nil)
	m := startMount(t, cfg, "--allow-other")
	m.warnings = true // the withholding is a warning
	st := readStatus(t, m)
	if p := st["priv"]; p.Withheld == "" || !strings.Contains(p.Withheld, "allow-other") || p.CacheScope != "private" || p.Skills != 0 {
		t.Errorf("status.json for the private origin: %+v; want it withheld, saying why", p)
	}
	if p := st["pub"]; p.Withheld != "" || p.CacheScope != "public" || p.Skills != 2 {
		t.Errorf("status.json for the public origin: %+v", p)
	}
	if ents, err := os.ReadDir(m.Path("priv")); err != nil || len(ents) != 0 {
		t.Errorf("ls priv: %d entries, %v; want an empty directory", len(ents), err)
	}
	if _, err := os.Stat(m.Path("priv", "honest-a", "SKILL.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat a withheld skill's SKILL.md: %v, want ENOENT", err)
	}
	for _, s := range readIndex(t, m).Skills {
		if s.Origin == "priv" {
			t.Errorf("index.json names %s of the withheld origin", s.URI)
		}
	}
	if _, withheld := indexListings(t, m); withheld["priv"] == "" {
		t.Errorf("index.json does not say the private origin is withheld: %v", withheld)
	}
	want := hostile.Files(hostile.HonestA)["skill://honest-a/SKILL.md"]
	if got, err := os.ReadFile(m.Path("pub", "honest-a", "SKILL.md")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("the public origin's honest-a: %v", err)
	}
	good.check(t, m)
}

// TestPrivateListingIsShownWithoutAllowOther: the same private origin on a
// mount only its user can read is shown as any other.
func TestPrivateListingIsShownWithoutAllowOther(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{
		"priv": hostileStdio(t, hostile.Options{Fixtures: []string{}, CacheScope: "private"}),
	}, nil)
	m := startMount(t, cfg)
	st := readStatus(t, m)["priv"]
	if st.Withheld != "" || st.CacheScope != "private" || st.Skills != 2 {
		t.Errorf("status.json: %+v; want shown, scope private", st)
	}
	want := hostile.Files(hostile.HonestA)["skill://honest-a/SKILL.md"]
	if got, err := os.ReadFile(m.Path("priv", "honest-a", "SKILL.md")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("honest-a: %v", err)
	}
}

// hostileHTTPProc starts a hostile server over HTTP and returns its URL
// and a func that kills it (idempotent; also run in t.Cleanup).
func hostileHTTPProc(t *testing.T, opts hostile.Options) (string, func()) {
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
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	kill := func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill()
			<-done
		}
	}
	t.Cleanup(kill)
	line, err := waitLine(t, stderr, io.Discard, "hostile: listening on ", 30*time.Second)
	if err != nil {
		t.Fatalf("hostile server: %v", err)
	}
	return strings.TrimSpace(line[strings.Index(line, "http://"):]), kill
}

// TestPrivateSavedCatalogStaysWithItsCredentials: a private listing saved
// under one Authorization header is shown again after a restart with the
// server down under the same header, and not under another.
func TestPrivateSavedCatalogStaysWithItsCredentials(t *testing.T) {
	t.Parallel()
	url, kill := hostileHTTPProc(t, hostile.Options{Fixtures: []string{}, CacheScope: "private"})
	withToken := func(token string) string {
		return writeConfig(t, map[string]any{
			"priv": map[string]any{"type": "http", "url": url, "headers": map[string]string{"Authorization": "Bearer " + token}},
		}, map[string]any{"defaults": map[string]any{"limits": map[string]any{"connect_timeout": "2s"}}})
	}
	m := startMount(t, withToken("alice"))
	if st := readStatus(t, m)["priv"]; st.Catalog != "live" || st.Skills != 2 || st.CacheScope != "private" {
		t.Fatalf("first mount: %+v", st)
	}
	want := hostile.Files(hostile.HonestA)["skill://honest-a/SKILL.md"]
	if got, err := os.ReadFile(m.Path("priv", "honest-a", "SKILL.md")); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("honest-a: %v", err)
	}
	m.Stop(t)
	kill()

	same := &mount{Dir: m.Dir, Cache: m.Cache, log: &syncBuffer{}, warnings: true}
	same.start(t, withToken("alice"))
	if st := readStatus(t, same)["priv"]; st.Catalog != "saved" || st.Skills != 2 {
		t.Errorf("restart, server down, same credentials: %+v; want the saved catalog", st)
	}
	if got, err := os.ReadFile(same.Path("priv", "honest-a", "SKILL.md")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("a file verified before, same credentials: %v", err)
	}
	same.Stop(t)

	other := &mount{Dir: m.Dir, Cache: m.Cache, log: &syncBuffer{}, warnings: true}
	other.start(t, withToken("mallory"))
	if st := readStatus(t, other)["priv"]; st.Catalog != "none" || st.Skills != 0 {
		t.Errorf("restart, server down, other credentials: %+v; want no catalog", st)
	}
	if _, err := os.Stat(other.Path("priv", "honest-a")); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("stat priv/honest-a under other credentials: %v, want ENOENT", err)
	}
}
