package vfs

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/store"
	"github.com/skillfs/skillfs/resolver"
	"github.com/skillfs/skillfs/verify"
)

func requiredOrigin(env string) config.Origin {
	return config.Origin{Label: "o", Kind: config.Stdio, Command: "srv", Env: map[string]string{"TOKEN": env},
		Limits: config.DefaultLimits(), Approval: config.ApprovalRequired}
}

func newBook(t *testing.T, root string, oc config.Origin) *approvalBook {
	t.Helper()
	st, err := store.Open(root, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b, err := st.Bucket(oc.ID())
	if err != nil {
		t.Fatal(err)
	}
	return newApprovalBook(oc, b, slog.New(slog.DiscardHandler), func() time.Time { return time.Unix(100, 0) })
}

// An approval binds the full resource set and the frontmatter: any change
// of a digest, a size, a file added or removed, or a frontmatter field
// makes it no longer apply, and the diff names each.
func TestBindingDiff(t *testing.T) {
	oc := requiredOrigin("a")
	base := checkedSkill(t, "s", "First", map[string]string{"SKILL.md": "x", "a.md": "a", "b.md": "b"})
	same := checkedSkill(t, "s", "First", map[string]string{"SKILL.md": "x", "b.md": "b", "a.md": "a"})
	if ch := diffBindings("o", bindingOf(oc, base), bindingOf(oc, same)); ch != nil {
		t.Errorf("the same entry differs: %+v", ch)
	}
	next := checkedSkill(t, "s", "Second", map[string]string{"SKILL.md": "x", "a.md": "A", "c.md": "c"})
	got := diffBindings("o", bindingOf(oc, base), bindingOf(oc, next))
	want := &ApprovalChange{Added: []string{"o/s/c.md"}, Removed: []string{"o/s/b.md"}, Changed: []string{"o/s/a.md"}, Frontmatter: []string{"description"}}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("diff = %+v, want %+v", got, want)
	}
	// A size alone (same digest) is a change too: the set is (uri, size, digest).
	sized := checkedSkill(t, "s", "First", map[string]string{"SKILL.md": "x", "a.md": "a", "b.md": "b"})
	sized.Entry.Resources = slices.Clone(sized.Entry.Resources)
	for i := range sized.Entry.Resources {
		if sized.Entry.Resources[i].URI == "skill://s/a.md" {
			sized.Entry.Resources[i].Size++
		}
	}
	if ch := diffBindings("o", bindingOf(oc, base), bindingOf(oc, sized)); ch == nil || !slices.Equal(ch.Changed, []string{"o/s/a.md"}) {
		t.Errorf("a changed size: %+v", ch)
	}
}

// Approvals are saved, survive a new book on the same store, keep
// frontmatter numbers as written, and are not inherited by another
// fingerprint of the same label.
func TestApprovalBookPersistsPerIdentity(t *testing.T) {
	root := t.TempDir()
	oc := requiredOrigin("a")
	s := checkedSkill(t, "s", "First", map[string]string{"SKILL.md": "x"})
	s.Entry.Frontmatter["version"] = json.Number("1.0")
	b := newBook(t, root, oc)
	if st := b.state(s); st != approvalPending {
		t.Fatalf("before approval: %q", st)
	}
	if _, err := b.approve(s); err != nil {
		t.Fatal(err)
	}
	if st := b.state(s); st != approvalApproved {
		t.Fatalf("after approval: %q", st)
	}
	again := newBook(t, root, oc)
	again.load()
	if st := again.state(s); st != approvalApproved {
		t.Errorf("after reloading: %q", st)
	}
	// Another token: another store bucket, and even a copied approvals
	// file is refused by the fingerprint it records.
	other := requiredOrigin("b")
	ob := newBook(t, root, other)
	data, err := again.store.Load(store.ApprovalsSidecar)
	if err != nil {
		t.Fatal(err)
	}
	if err := ob.saver.Write(data); err != nil {
		t.Fatal(err)
	}
	ob.log = slog.New(slog.DiscardHandler)
	ob.load()
	if st := ob.state(s); st != approvalPending {
		t.Errorf("an approval copied to another fingerprint: %q, want pending", st)
	}
	if had, err := again.revoke(s.URI.String()); !had || err != nil {
		t.Errorf("revoke: %v, %v", had, err)
	}
	third := newBook(t, root, oc)
	third.load()
	if st := third.state(s); st != approvalPending {
		t.Errorf("after revoking and reloading: %q", st)
	}
}

// A dynamic skill has no manifest to bind: under required it is refused,
// held out of the tree, and shown as rejected with its reason.
func TestDynamicSkillRefusedUnderRequired(t *testing.T) {
	oc := requiredOrigin("a")
	b := newBook(t, t.TempDir(), oc)
	dyn, err := verify.CheckEntry(skill.Entry{URI: "skill://d/SKILL.md", Frontmatter: map[string]any{"name": "d", "description": "D"}, Manifest: skill.Dynamic}, verify.EntryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st := b.state(dyn); st != approvalRefused {
		t.Fatalf("state %q, want refused", st)
	}
	tr := buildGated("o", &resolver.Catalog{Skills: []*verify.Skill{dyn}}, "live", nil, time.Unix(1, 0), nil, b.state, nil)
	if len(tr.skills) != 0 || tr.nodes["d"] != nil || len(tr.waiting) != 1 || !tr.heldAt("d/SKILL.md") {
		t.Errorf("a refused dynamic skill was placed: %d skills, node %v", len(tr.skills), tr.nodes["d"])
	}
	rows := indexRows{label: oc.Label, t: tr, required: b.required()}
	si := rows.waiting(tr.waiting[0])
	if si.State != "rejected" || si.Reason != ReasonNotApprovable || si.Approval != approvalRefused {
		t.Errorf("index row: %+v", si)
	}
	if _, err := b.approve(dyn); err != nil {
		t.Fatal(err)
	}
	if st := b.state(dyn); st != approvalRefused {
		t.Errorf("an approval recorded for a dynamic skill made it %q", st)
	}
}

// A nested skill approved inside a pending one is placed with exactly its
// own manifest; the enclosing skill's other files are not in the tree.
func TestNestedApprovedInsidePending(t *testing.T) {
	outerFiles := map[string]string{"SKILL.md": "o", "x.md": "x", "in/SKILL.md": "i", "in/n.md": "n"}
	outer := checkedSkill(t, "out", "Outer", outerFiles)
	inE := skill.Entry{URI: "skill://out/in/SKILL.md", Frontmatter: map[string]any{"name": "in", "description": "Inner"}}
	for _, rel := range []string{"SKILL.md", "n.md"} {
		body := outerFiles["in/"+rel]
		inE.Resources = append(inE.Resources, skill.Resource{URI: "skill://out/in/" + rel, Digest: verify.DigestOf([]byte(body)), Size: int64(len(body)), HasSize: true})
	}
	inner, err := verify.CheckEntry(inE, verify.EntryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	admit := func(s *verify.Skill) string {
		if s == inner {
			return approvalApproved
		}
		return approvalPending
	}
	tr := buildGated("o", &resolver.Catalog{Skills: []*verify.Skill{outer, inner}}, "live", nil, time.Unix(1, 0), nil, admit, nil)
	var got []string
	for p, n := range tr.nodes {
		if !n.isDir() {
			got = append(got, p)
		}
	}
	slices.Sort(got)
	if want := []string{"out/in/SKILL.md", "out/in/n.md"}; !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
	if !tr.heldAt("out/x.md") || tr.heldAt("out/in/n.md") {
		t.Errorf("heldAt: out/x.md %v, out/in/n.md %v", tr.heldAt("out/x.md"), tr.heldAt("out/in/n.md"))
	}
	if c := tr.catalog(); len(c.Skills) != 2 || c.Skills[0] != outer {
		t.Errorf("the held catalog lost the pending skill or its order: %v", c.Skills)
	}
}

// Once its origin has stopped (stop, when the supervisor ends) the book
// writes nothing: an approve or revoke that comes later fails, changes
// nothing in memory, and leaves approvals.json as it was, so that it
// never lands in a store a new session of the origin has taken over.
func TestApprovalsAfterStopAreRefused(t *testing.T) {
	root := t.TempDir()
	oc := requiredOrigin("a")
	one := checkedSkill(t, "one", "First", map[string]string{"SKILL.md": "x"})
	two := checkedSkill(t, "two", "Second", map[string]string{"SKILL.md": "y"})
	b := newBook(t, root, oc)
	if _, err := b.approve(one); err != nil {
		t.Fatal(err)
	}
	before, err := b.store.Load(store.ApprovalsSidecar)
	if err != nil {
		t.Fatal(err)
	}
	b.stop()
	if _, err := b.approve(two); !errors.Is(err, store.ErrStopped) {
		t.Errorf("approve after stop: %v, want ErrStopped", err)
	}
	if had, err := b.revoke(one.URI.String()); had || !errors.Is(err, store.ErrStopped) {
		t.Errorf("revoke after stop: %v, %v; want ErrStopped", had, err)
	}
	if st := b.state(two); st != approvalPending {
		t.Errorf("refused approval: %q, want pending", st)
	}
	if st := b.state(one); st != approvalApproved {
		t.Errorf("refused revoke: %q, want approved", st)
	}
	after, err := b.store.Load(store.ApprovalsSidecar)
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("approvals.json changed after stop (%v):\n%s\nwant\n%s", err, after, before)
	}
}
