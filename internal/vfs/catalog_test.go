package vfs

import (
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/store"
	"github.com/skillfs/skillfs/resolver"
	"github.com/skillfs/skillfs/verify"
)

// These tests drive the catalog alone: no MCP session, no kernel; the
// store is a temporary directory.

type changeLog struct {
	mu             sync.Mutex
	files, dirs    []string
	added, removed []string
	calls          int
}

func (c *changeLog) record(ch Change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	c.files = append(c.files, ch.Files...)
	c.dirs = append(c.dirs, ch.Dirs...)
	c.added = append(c.added, ch.Added...)
	c.removed = append(c.removed, ch.Removed...)
}

func (c *changeLog) take() (files, dirs []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	files, dirs = c.files, c.dirs
	c.files, c.dirs = nil, nil
	return files, dirs
}

func newTestCatalog(t *testing.T, root string) (*catalog, *changeLog) {
	t.Helper()
	st, err := store.Open(root, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	oc := config.Origin{Label: "o", Kind: config.Stdio, Command: "srv", Limits: config.DefaultLimits()}
	b, err := st.Bucket(oc.ID())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(100, 0)
	c := newCatalog(oc, b, slog.New(slog.DiscardHandler), func() time.Time { return now }, now)
	log := &changeLog{}
	c.onChange = log.record
	return c, log
}

func TestCatalogPutReplaceConfirm(t *testing.T) {
	c, changes := newTestCatalog(t, t.TempDir())
	a := checkedSkill(t, "a", "First", map[string]string{"SKILL.md": "x", "notes.md": "n1"})
	c.put(&resolver.Catalog{Skills: []*verify.Skill{a}})
	if n := c.current().nodes["a/notes.md"]; n == nil || n.isDir() {
		t.Fatal("a listed skill's file is not in the tree")
	}
	if _, dirs := changes.take(); !slices.Contains(dirs, "a") || !slices.Contains(dirs, "") {
		t.Errorf("put announced dirs %v; want the skill's and the root", dirs)
	}

	// A skills/get refresh replaces one entry.
	a2 := checkedSkill(t, "a", "First", map[string]string{"SKILL.md": "x", "notes.md": "n2"})
	c.replace(a, a2)
	if files, _ := changes.take(); !slices.Equal(files, []string{"a/notes.md"}) {
		t.Errorf("replace announced files %v; want a/notes.md", files)
	}
	if got := c.current().nodes["a/notes.md"].file.f.Resource.Digest; got != verify.DigestOf([]byte("n2")) {
		t.Errorf("after replace the tree holds digest %s", got)
	}

	// An unlisted skill confirmed with skills/get stays across re-lists
	// that do not carry it.
	u := checkedSkill(t, "u", "Unlisted", map[string]string{"SKILL.md": "u"})
	c.confirm(u)
	c.put(&resolver.Catalog{Skills: []*verify.Skill{a2}})
	t2 := c.current()
	if n := t2.nodes["u"]; n == nil || n.skill == nil || n.skill.source != "get" {
		t.Fatal("a confirmed skill left the tree at the next re-list")
	}
	if n := t2.nodes["a"]; n == nil || n.skill == nil || n.skill.source != "list" {
		t.Error("a listed skill lost its source")
	}
}

func TestCatalogSavedAndLoaded(t *testing.T) {
	root := t.TempDir()
	c, _ := newTestCatalog(t, root)
	a := checkedSkill(t, "a", "First", map[string]string{"SKILL.md": "x"})
	c.put(&resolver.Catalog{Skills: []*verify.Skill{a}, CacheScope: resolver.ScopePublic})

	again, changes := newTestCatalog(t, root)
	if !again.loadSaved() {
		t.Fatal("the saved catalog was not loaded")
	}
	tr := again.current()
	if tr.source != "saved" || tr.nodes["a/SKILL.md"] == nil {
		t.Errorf("loaded tree: source %q, a/SKILL.md present %v", tr.source, tr.nodes["a/SKILL.md"] != nil)
	}
	if _, dirs := changes.take(); !slices.Contains(dirs, "a") {
		t.Errorf("loading announced dirs %v", dirs)
	}

	// A live catalog that arrived first is kept.
	live, _ := newTestCatalog(t, root)
	b := checkedSkill(t, "b", "Second", map[string]string{"SKILL.md": "y"})
	live.put(&resolver.Catalog{Skills: []*verify.Skill{b}})
	live.loadSaved()
	if tr := live.current(); tr.source != "live" || tr.nodes["b"] == nil {
		t.Errorf("a saved catalog replaced the live one: source %q", tr.source)
	}
}

// TestCatalogChangeNamesEntries: a swap's Change names the entries that
// appeared and left, so that a mount can tell the kernel about them without
// reading the tree back.
func TestCatalogChangeNamesEntries(t *testing.T) {
	c, changes := newTestCatalog(t, t.TempDir())
	a := checkedSkill(t, "a", "First", map[string]string{"SKILL.md": "x"})
	b := checkedSkill(t, "b", "Second", map[string]string{"SKILL.md": "y", "refs/r.md": "r"})
	c.put(&resolver.Catalog{Skills: []*verify.Skill{a}})
	take := func() (added, removed []string) {
		changes.mu.Lock()
		defer changes.mu.Unlock()
		added, removed = changes.added, changes.removed
		changes.added, changes.removed = nil, nil
		return added, removed
	}
	take()

	c.put(&resolver.Catalog{Skills: []*verify.Skill{a, b}})
	added, removed := take()
	if want := []string{"b", "b/SKILL.md", "b/refs", "b/refs/r.md"}; !slices.Equal(added, want) || len(removed) != 0 {
		t.Errorf("a new skill: added %v, removed %v; want added %v", added, removed, want)
	}

	c.put(&resolver.Catalog{Skills: []*verify.Skill{a}})
	added, removed = take()
	if want := []string{"b", "b/SKILL.md", "b/refs", "b/refs/r.md"}; !slices.Equal(removed, want) || len(added) != 0 {
		t.Errorf("a skill gone: added %v, removed %v; want removed %v", added, removed, want)
	}

	// A new version of a file is neither: its name stays.
	a2 := checkedSkill(t, "a", "First", map[string]string{"SKILL.md": "x2"})
	c.put(&resolver.Catalog{Skills: []*verify.Skill{a2}})
	if added, removed = take(); len(added)+len(removed) != 0 {
		t.Errorf("a changed file: added %v, removed %v; want none", added, removed)
	}
}
