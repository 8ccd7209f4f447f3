//go:build linux

package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/skillfs/skillfs/integration/hostile"
)

// Conformance to the Final SEP-2640 text (issue 19 items 1-5).

// An entry with no resources at all is invalid and never loaded, even on a
// server allowed dynamic skills: only "resources": "dynamic" makes one
// (issue 19 item 4).
func TestEntryWithoutResourcesIsNeverLoaded(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{
		"dyn": hostileStdio(t, hostile.Options{Fixtures: []string{hostile.Dynamic, hostile.NoResources}}),
	}, map[string]any{"servers": map[string]any{"dyn": map[string]any{"allow_dynamic": true}}})
	m := startMount(t, cfg)
	m.warnings = true
	// The dynamic skill is there: allow_dynamic is in force.
	if _, err := os.ReadFile(m.Path("dyn", hostile.Dynamic, "SKILL.md")); err != nil {
		t.Fatalf("the dynamic skill under allow_dynamic: %v", err)
	}
	if _, err := os.Stat(m.Path("dyn", hostile.NoResources)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the entry without resources is in the tree (%v), want ENOENT", err)
	}
	if _, err := os.ReadFile(m.Path("dyn", hostile.NoResources, "SKILL.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read of its SKILL.md: %v, want ENOENT", err)
	}
	state, reason, _, ok := indexEntry(t, m, "dyn", "skill://"+hostile.NoResources+"/SKILL.md")
	if !ok || state != "rejected" || reason != "missing-resources" {
		t.Errorf("index.json: found %v, state %q, reason %q; want rejected, missing-resources", ok, state, reason)
	}
}

// skillfs declares the extension in its client capabilities
// (extensions["io.modelcontextprotocol/skills"] = {}), and a real server
// sees it: at initialize in the older protocol, in every request's _meta in
// the 2026-07-28 one (issue 19 item 3).
func TestClientDeclaresSkillsExtension(t *testing.T) {
	t.Parallel()
	capsLog := filepath.Join(t.TempDir(), "caps.log")
	cfg := writeConfig(t, map[string]any{
		"acme": hostileStdio(t, hostile.Options{Fixtures: []string{}, CapsLog: capsLog}),
	}, nil)
	m := startMount(t, cfg)
	if _, err := os.ReadFile(m.Path("acme", hostile.HonestA, "SKILL.md")); err != nil {
		t.Fatalf("read through the mount: %v", err)
	}
	b, err := os.ReadFile(capsLog)
	if err != nil {
		t.Fatal(err)
	}
	lists := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		method, ext, _ := strings.Cut(line, " ")
		if method != "skills/list" {
			continue
		}
		lists++
		var got map[string]any
		if err := json.Unmarshal([]byte(ext), &got); err != nil {
			t.Fatalf("caps log line %q: %v", line, err)
		}
		v, ok := got["io.modelcontextprotocol/skills"]
		if settings, isObj := v.(map[string]any); !ok || !isObj || len(settings) != 0 {
			t.Errorf("skills/list: the server sees client extensions %s, want io.modelcontextprotocol/skills: {}", ext)
		}
	}
	if lists == 0 {
		t.Fatalf("no skills/list in the caps log:\n%s", b)
	}
}

// privateGet is a server whose listing is public and whose skills/get
// answers are marked cacheScope "private", with one skill reachable only
// through skills/get: skill://walk/w-0/SKILL.md, pinned in the config, and
// skill://walk/w-1/SKILL.md, found by directory reads only.
func privateGet() (hostile.Options, map[string]any) {
	return hostile.Options{Fixtures: []string{}, Mode: hostile.ModeUnlistedCrowd, Crowd: 2, CacheScope: "public", GetCacheScope: "private"},
		map[string]any{"pin": []string{"skill://walk/w-0/SKILL.md"}}
}

// A skills/get answer marked private is treated like a private listing: on
// a mount other users can read (--allow-other) the skill it confirms is
// not shown, while the public listing beside it is (issue 19 item 1).
func TestPrivateSkillsGetIsWithheldUnderAllowOther(t *testing.T) {
	t.Parallel()
	opts, srv := privateGet()
	cfg := writeConfig(t, map[string]any{"priv": hostileStdio(t, opts)},
		map[string]any{"servers": map[string]any{"priv": srv}})
	m := startMount(t, cfg, "--allow-other")
	m.warnings = true // the withholding is a warning
	want := hostile.Files(hostile.HonestA)["skill://honest-a/SKILL.md"]
	if got, err := os.ReadFile(m.Path("priv", "honest-a", "SKILL.md")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("the public listing's honest-a: %v", err)
	}
	// w-0 is pinned; w-1 is looked up through directory reads.
	for _, p := range [][]string{{"walk", "w-0", "SKILL.md"}, {"walk", "w-0"}, {"walk", "w-1", "SKILL.md"}, {"walk", "w-1"}} {
		if _, err := os.Stat(m.Path(append([]string{"priv"}, p...)...)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("stat priv/%s: %v, want ENOENT", strings.Join(p, "/"), err)
		}
	}
	if _, err := os.ReadFile(m.Path("priv", "walk", "w-0", "SKILL.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read of the private skill's SKILL.md: %v, want ENOENT", err)
	}
	// The pin is rejected, saying why.
	var detail string
	for _, s := range readIndex(t, m).Skills {
		if s.Origin == "priv" && strings.HasPrefix(s.URI, "skill://walk/") {
			if s.URI != "skill://walk/w-0/SKILL.md" || s.State != "rejected" {
				t.Errorf("index.json shows %s as %q", s.URI, s.State)
			}
			detail = s.Detail
		}
	}
	if !strings.Contains(detail, "private") || !strings.Contains(detail, "--allow-other") {
		t.Errorf("index.json detail of the pinned private skill: %q; want it to say why", detail)
	}
	if st := readStatus(t, m)["priv"]; st.Skills != 2 || st.CacheScope != "public" {
		t.Errorf("status.json: %+v; want the 2 public skills", st)
	}
}

// Without --allow-other the skill a private skills/get answer confirms is
// shown, and the catalog holding it is saved under the credentials it was
// asked with: after a restart with the server down it is shown again under
// the same Authorization header, and not under another (issue 19 item 1).
// The skill is reached both ways skillfs calls skills/get: pinned in the
// config, and found by directory reads.
func TestPrivateSkillsGetIsSavedWithItsCredentials(t *testing.T) {
	t.Parallel()
	opts, pinned := privateGet()
	for name, srv := range map[string]map[string]any{"pinned": pinned, "walked": {}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			privateGetSaved(t, opts, srv)
		})
	}
}

func privateGetSaved(t *testing.T, opts hostile.Options, srv map[string]any) {
	url, kill := hostileHTTPProc(t, opts)
	withToken := func(token string) string {
		entry := map[string]any{"type": "http", "url": url, "headers": map[string]string{"Authorization": "Bearer " + token}}
		return writeConfig(t, map[string]any{"priv": entry},
			map[string]any{"servers": map[string]any{"priv": srv}, "defaults": map[string]any{"limits": map[string]any{"connect_timeout": "2s"}}})
	}
	m := startMount(t, withToken("alice"))
	// The body hostile's unlisted-crowd skills carry.
	const w0Body = "Found by a directory read, confirmed by skills/get.\n"
	w0, err := os.ReadFile(m.Path("priv", "walk", "w-0", "SKILL.md"))
	if err != nil || !bytes.HasSuffix(w0, []byte(w0Body)) {
		t.Fatalf("the pinned skill confirmed by a private skills/get: %q, %v", w0, err)
	}
	if st := readStatus(t, m)["priv"]; st.Catalog != "live" || st.Skills != 3 || st.CacheScope != "private" {
		t.Fatalf("first mount: %+v; want 3 skills, scope private", st)
	}
	m.Stop(t)
	kill()

	same := &mount{Dir: m.Dir, Cache: m.Cache, log: &syncBuffer{}, warnings: true}
	same.start(t, withToken("alice"))
	if st := readStatus(t, same)["priv"]; st.Catalog != "saved" || st.Skills != 3 {
		t.Errorf("restart, server down, same credentials: %+v; want the saved catalog", st)
	}
	if got, err := os.ReadFile(same.Path("priv", "walk", "w-0", "SKILL.md")); err != nil || !bytes.Equal(got, w0) {
		t.Errorf("the private skill, same credentials: %v", err)
	}
	same.Stop(t)

	other := &mount{Dir: m.Dir, Cache: m.Cache, log: &syncBuffer{}, warnings: true}
	other.start(t, withToken("mallory"))
	if st := readStatus(t, other)["priv"]; st.Catalog != "none" || st.Skills != 0 {
		t.Errorf("restart, server down, other credentials: %+v; want no catalog", st)
	}
	if _, err := os.Stat(other.Path("priv", "walk", "w-0")); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("stat priv/walk/w-0 under other credentials: %v, want ENOENT", err)
	}
}

// A SKILL.md that starts with a UTF-8 BOM is refused by `skillfs serve`,
// which serves files as they are on disk: a strict client (SKILL.md must
// begin with "---") would reject it, so it is never published, and a mount
// of that server does not show it; the skill beside it is served (issue 19
// item 5).
func TestServeNeverPublishesABOMSkill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"plain/SKILL.md": skillMD("plain", "A plain skill", "# plain\n"),
		"bom/SKILL.md":   "\uFEFF" + skillMD("bom", "A skill saved with a BOM", "# bom\n"),
	})
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, filepath.Join(t.TempDir(), "access.log"))}, nil)
	m := startMount(t, cfg)
	if got, err := os.ReadFile(m.Path("local", "plain", "SKILL.md")); err != nil || !bytes.HasPrefix(got, []byte("---\n")) {
		t.Errorf("the plain skill: %q, %v", got, err)
	}
	if _, err := os.Stat(m.Path("local", "bom")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat local/bom: %v, want ENOENT (serve must not publish it)", err)
	}
	if _, _, _, found := indexEntry(t, m, "local", "skill://bom/SKILL.md"); found {
		t.Errorf("index.json names skill://bom/SKILL.md: serve published it")
	}
}
