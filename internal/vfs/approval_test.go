package vfs_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/control/wire"
	"github.com/skillfs/skillfs/internal/testkit"
	"github.com/skillfs/skillfs/internal/vfs"
)

func required(o *config.Origin) { o.Approval = config.ApprovalRequired }

// waitFor polls cond with a generous deadline: re-lists are asynchronous.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.WaitFor(t, time.Minute, what, cond)
}

func (f *fixture) exists(p string) bool {
	_, err := f.fs.Stat(context.Background(), p)
	return err == nil
}

func (f *fixture) row(path string) (vfs.SkillInfo, bool) {
	for _, s := range f.fs.Consent().Skills() {
		if s.Path == path {
			return s, true
		}
	}
	return vfs.SkillInfo{}, false
}

func (f *fixture) pending(path string) (vfs.Pending, bool) {
	for _, p := range f.fs.Consent().Pending() {
		if p.Skill.Path == path {
			return p, true
		}
	}
	return vfs.Pending{}, false
}

func approve(t *testing.T, f *fixture, paths ...string) []vfs.SkillInfo {
	t.Helper()
	var refs []vfs.SkillRef
	for _, p := range paths {
		ins, err := f.fs.Consent().Inspect(context.Background(), vfs.SkillRef{Path: p})
		if err != nil {
			t.Fatalf("inspect %s: %v", p, err)
		}
		refs = append(refs, vfs.SkillRef{Path: p, Binding: ins.Binding})
	}
	rows, err := f.fs.Consent().Approve(refs, "")
	if err != nil {
		t.Fatalf("approve %v: %v", paths, err)
	}
	return rows
}

// Under approval: required nothing is in the tree until approved, and the
// index lists every skill as pending from the listing alone.
func TestApprovalPendingIsInvisibleAndListed(t *testing.T) {
	f := newFixture(t, baseFiles, required)
	if got := f.ls(t, "local"); len(got) != 0 {
		t.Errorf("ls local = %v, want nothing before approval", got)
	}
	for _, p := range []string{"local/alpha", "local/alpha/SKILL.md", "local/team/beta/data.txt"} {
		if _, err := f.fs.Stat(context.Background(), p); !errors.Is(err, vfs.ErrNotExist) {
			t.Errorf("stat %s: %v, want ErrNotExist", p, err)
		}
	}
	ps := f.fs.Consent().Pending()
	if len(ps) != 5 {
		t.Fatalf("pending = %d skills, want 5: %+v", len(ps), ps)
	}
	beta, _ := f.pending("local/team/beta")
	if beta.Skill.Name != "beta" || beta.Skill.Description != "Beta skill" || beta.Skill.State != "pending" ||
		beta.Skill.Approval != "pending" || beta.Changed != nil || !slices.Contains(beta.Skill.Flags, "allowed-tools") {
		t.Errorf("beta pending: %+v", beta)
	}
	if g, _ := f.pending("local/team/beta/gamma"); g.Skill.NestedIn != "local/team/beta" {
		t.Errorf("gamma nested_in = %q", g.Skill.NestedIn)
	}
	// The generated files count them and name none: every string of a
	// pending row is the server's.
	md, _ := f.fs.ReadFile(context.Background(), ".skillfs/index.md")
	if !bytes.Contains(md, []byte("5 skills wait for the user's approval")) {
		t.Errorf("index.md does not count the pending skills:\n%s", md)
	}
	ij, _ := f.fs.ReadFile(context.Background(), ".skillfs/index.json")
	if !bytes.Contains(ij, []byte(`"pending_approval": {`)) || !bytes.Contains(ij, []byte(`"local": 5`)) {
		t.Errorf("index.json does not count the pending skills:\n%s", ij)
	}
	for name, b := range map[string][]byte{"index.md": md, "index.json": ij} {
		for _, leak := range []string{"Beta skill", "local/team/beta", "skill://"} {
			if bytes.Contains(b, []byte(leak)) {
				t.Errorf("%s shows %q of a pending skill:\n%s", name, leak, b)
			}
		}
	}
	if n := len(f.access.reads()); n != 0 {
		t.Errorf("listing pending skills fetched %d files", n)
	}
	// The skill appears at once; then the approval keeps its files'
	// bytes for the diff of a later change (review.go), fetching alpha's
	// files and nothing else.
	rows := approve(t, f, "local/alpha")
	if len(rows) != 1 || rows[0].Approval != "approved" || rows[0].State != "available" {
		t.Errorf("approve rows: %+v", rows)
	}
	deadline := time.Now().Add(time.Minute)
	for len(f.access.reads()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := f.access.reads(); len(got) != 2 || !strings.Contains(strings.Join(got, " "), "alpha/SKILL.md") || !strings.Contains(strings.Join(got, " "), "alpha/refs/a.md") {
		t.Errorf("approving alpha fetched %v, want its two files", got)
	}
	if got := f.ls(t, "local"); !slices.Equal(got, []string{"alpha"}) {
		t.Errorf("ls local after approving alpha = %v", got)
	}
	if b, err := f.read(t, "local/alpha/refs/a.md"); err != nil || string(b) != "aaa\n" {
		t.Errorf("read approved file: %q, %v", b, err)
	}
	if _, ok := f.pending("local/alpha"); ok {
		t.Errorf("alpha still pending")
	}
	rows = approve(t, f, "local/alpha")
	if !strings.Contains(rows[0].Detail, "already approved") {
		t.Errorf("approving twice: %+v", rows[0])
	}
	// A ref that names a file is bad input, one that names nothing is not
	// found, each as the control endpoint reports it (400 and 404).
	var re *vfs.RefError
	if _, err := f.fs.Consent().Approve([]vfs.SkillRef{{Path: "local/alpha/SKILL.md", Binding: "x"}}, ""); !errors.As(err, &re) || !errors.Is(err, wire.ErrInvalid) {
		t.Errorf("approve a file path: %v, want a RefError that Is wire.ErrInvalid", err)
	}
	_, err := f.fs.Consent().Approve([]vfs.SkillRef{{Path: "local/nope", Binding: "x"}}, "")
	if !errors.Is(err, vfs.ErrNotExist) || !errors.Is(err, wire.ErrNotFound) || err.Error() != "no skill local/nope on this mount (see `skillfs list`)" {
		t.Errorf("approve an unknown path: %v, want ErrNotExist and wire.ErrNotFound", err)
	}
	// Revoking takes it away at once.
	if _, err := f.fs.Consent().Revoke([]vfs.SkillRef{{Origin: "local", URI: "skill://alpha/SKILL.md"}}); err != nil {
		t.Fatal(err)
	}
	if f.exists("local/alpha") {
		t.Errorf("alpha still in the tree after revoke")
	}
	if p, ok := f.pending("local/alpha"); !ok || p.Changed != nil {
		t.Errorf("alpha after revoke: %+v, %v; want pending as never approved", p, ok)
	}
}

// A server-side change of an approved skill takes it out of the tree at
// once, an open file of it fails with not-approved rather than serve new
// bytes, and pending says what changed; re-approving serves the new bytes.
func TestApprovalChangedEntryLeavesTheTree(t *testing.T) {
	// Waits for a re-list (testRelistGap): beside the others.
	t.Parallel()
	f := newFixture(t, baseFiles, required)
	f.allowWarn = true // the failed read of the open file is logged
	approve(t, f, "local/alpha")
	_, fl, err := f.fs.Lookup(context.Background(), "local/alpha/refs/a.md")
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Forget()
	if b, err := fl.Read(context.Background(), 0, 2); err != nil || string(b) != "aa" {
		t.Fatalf("first read: %q, %v", b, err)
	}
	writeFiles(t, f.dir, map[string]string{
		"alpha/refs/a.md": "changed\n",
		"alpha/refs/b.md": "new\n",
		"alpha/SKILL.md":  "---\nname: alpha\ndescription: Alpha skill, now different\n---\nbody\n",
	})
	if err := f.srv.Rescan(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "alpha to leave the tree", func() bool { return !f.exists("local/alpha") })
	_, err = fl.Read(context.Background(), 2, 10)
	var re *vfs.ReadError
	if !errors.As(err, &re) || re.Reason != vfs.ReasonNotApproved {
		t.Fatalf("read of the open file after the change: %v, want reason %q", err, vfs.ReasonNotApproved)
	}
	p, ok := f.pending("local/alpha")
	if !ok || p.Skill.Approval != "changed" || p.Changed == nil {
		t.Fatalf("pending alpha: %+v, %v", p, ok)
	}
	if !slices.Equal(p.Changed.Added, []string{"local/alpha/refs/b.md"}) ||
		!slices.Equal(p.Changed.Changed, []string{"local/alpha/SKILL.md", "local/alpha/refs/a.md"}) ||
		!slices.Equal(p.Changed.Frontmatter, []string{"description"}) || len(p.Changed.Removed) != 0 {
		t.Errorf("changed: %+v", p.Changed)
	}
	ins, err := f.fs.Consent().Inspect(context.Background(), vfs.SkillRef{Path: "local/alpha"})
	if err != nil || ins.Approval == nil || ins.Approval.State != "changed" || ins.Approval.Bound == nil ||
		ins.Approval.Bound.Frontmatter["description"] != "Alpha skill" || len(ins.Files) != 3 {
		t.Errorf("inspect: %+v, %v", ins, err)
	}
	// A person may read the pending SKILL.md, verified, to decide.
	md, err := f.fs.Consent().ShowSkillMD(context.Background(), vfs.SkillRef{Path: "local/alpha"})
	if err != nil || !bytes.Contains(md, []byte("now different")) {
		t.Errorf("show pending SKILL.md: %q, %v", md, err)
	}
	if f.exists("local/alpha/SKILL.md") {
		t.Errorf("showing the SKILL.md put the skill in the tree")
	}
	var all []vfs.SkillRef
	for _, p := range f.fs.Consent().Pending() {
		all = append(all, vfs.SkillRef{Origin: p.Skill.Origin, URI: p.Skill.URI, Binding: p.Binding})
	}
	rows, err := f.fs.Consent().Approve(all, "local")
	if err != nil || len(rows) != 5 {
		t.Fatalf("approve all: %d rows, %v", len(rows), err)
	}
	if b, err := f.read(t, "local/alpha/refs/a.md"); err != nil || string(b) != "changed\n" {
		t.Errorf("read after re-approval: %q, %v", b, err)
	}
	if len(f.fs.Consent().Pending()) != 0 {
		t.Errorf("pending after approve all: %+v", f.fs.Consent().Pending())
	}
}

// A nested skill is its own approval; its files remain plain files of the
// enclosing skill once that one is approved.
func TestApprovalNestedSkill(t *testing.T) {
	f := newFixture(t, baseFiles, required)
	approve(t, f, "local/team/beta/gamma")
	if got := f.ls(t, "local/team/beta"); !slices.Equal(got, []string{"gamma"}) {
		t.Errorf("ls beta (pending) with gamma approved = %v", got)
	}
	if b, err := f.read(t, "local/team/beta/gamma/notes.txt"); err != nil || string(b) != "gamma notes\n" {
		t.Errorf("gamma's file: %q, %v", b, err)
	}
	for _, p := range []string{"local/team/beta/SKILL.md", "local/team/beta/data.txt"} {
		if f.exists(p) {
			t.Errorf("%s of the pending enclosing skill is visible", p)
		}
	}
	approve(t, f, "local/team/beta")
	if _, err := f.fs.Consent().Revoke([]vfs.SkillRef{{Path: "local/team/beta/gamma"}}); err != nil {
		t.Fatal(err)
	}
	if b, err := f.read(t, "local/team/beta/gamma/notes.txt"); err != nil || string(b) != "gamma notes\n" {
		t.Errorf("gamma's file as a plain file of beta: %q, %v", b, err)
	}
	if p, ok := f.pending("local/team/beta/gamma"); !ok || p.Skill.NestedIn != "local/team/beta" {
		t.Errorf("gamma after revoke: %+v, %v", p, ok)
	}
}

// Approvals survive a restart on the same store, and are not inherited
// when the same label points at another identity (a changed env).
func TestApprovalSurvivesRestartNotIdentityChange(t *testing.T) {
	f := newFixture(t, baseFiles, required)
	approve(t, f, "local/alpha")
	fi, err := os.Stat(filepath.Join(f.cache, f.fs.Consent().Status().Origins[0].ID, "approvals.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("approvals.json: %v, %v", fi, err)
	}
	restart := func(edit func(*config.Origin)) {
		f.stop()
		f.st.Close()
		f.start(t, edit)
	}
	restart(required)
	waitFor(t, "alpha after a restart", func() bool { return f.exists("local/alpha/SKILL.md") })
	if _, ok := f.pending("local/alpha"); ok {
		t.Errorf("alpha pending after a restart")
	}
	restart(func(o *config.Origin) {
		required(o)
		o.Env = map[string]string{"TOKEN": "another"}
	})
	if f.exists("local/alpha") {
		t.Errorf("an approval was inherited by another identity of the label")
	}
	if _, ok := f.pending("local/alpha"); !ok {
		t.Errorf("alpha not pending under the new identity")
	}
}

// A skill confirmed with skills/get is pending like a listed one.
func TestApprovalGetIsPending(t *testing.T) {
	f := newFixture(t, baseFiles, func(o *config.Origin) { required(o); o.Limits.MaxListPages = 1 })
	f.allowWarn = true // the truncated listing is logged
	si, err := f.fs.Consent().Get(context.Background(), "local", "skill://team/delta/SKILL.md")
	if err != nil || si.State != "pending" || si.Path != "local/team/delta" || si.Source != "get" {
		t.Fatalf("get: %+v, %v", si, err)
	}
	if f.exists("local/team/delta/SKILL.md") {
		t.Errorf("a skill confirmed with skills/get is visible before approval")
	}
	approve(t, f, "local/team/delta")
	if b, err := f.read(t, "local/team/delta/SKILL.md"); err != nil || !bytes.Contains(b, []byte("name: delta")) {
		t.Errorf("read after approval: %q, %v", b, err)
	}
	if _, err := f.fs.Consent().Get(context.Background(), "nope", "skill://x/SKILL.md"); !errors.Is(err, vfs.ErrNotExist) {
		t.Errorf("get from an unknown origin: %v", err)
	}
}

// Without approval: required nothing changes: every skill is in the tree,
// rows carry no approval, and approving or revoking is an error that says
// how to turn approval on.
func TestApprovalOffIsTodaysBehaviour(t *testing.T) {
	f := newFixture(t, baseFiles, nil)
	if len(f.fs.Consent().Pending()) != 0 || !f.exists("local/alpha/SKILL.md") {
		t.Fatalf("approval off: pending %v", f.fs.Consent().Pending())
	}
	if r, _ := f.row("local/alpha"); r.Approval != "" {
		t.Errorf("row approval %q", r.Approval)
	}
	ins0, _ := f.fs.Consent().Inspect(context.Background(), vfs.SkillRef{Path: "local/alpha"})
	var re *vfs.RefError
	if _, err := f.fs.Consent().Approve([]vfs.SkillRef{{Path: "local/alpha", Binding: ins0.Binding}}, ""); !errors.As(err, &re) || !strings.Contains(err.Error(), `"approval": "required"`) {
		t.Errorf("approve with approval off: %v", err)
	}
	if _, err := f.fs.Consent().Approve(nil, "local"); !errors.As(err, &re) || !strings.Contains(err.Error(), "approval is off") {
		t.Errorf("approve --all with approval off: %v", err)
	}
	if _, err := f.fs.Consent().Revoke([]vfs.SkillRef{{Path: "local/alpha"}}); !errors.As(err, &re) || !strings.Contains(err.Error(), "approval is off") {
		t.Errorf("revoke with approval off: %v", err)
	}
	ins, err := f.fs.Consent().Inspect(context.Background(), vfs.SkillRef{Path: "local/alpha"})
	if err != nil || ins.Approval.State != "not-required" {
		t.Errorf("inspect: %+v, %v", ins.Approval, err)
	}
}

// Approve --all approves the listed skills still held, leaves out one the
// server stopped listing (its row says so), and refuses a ref without the
// shown binding or with another one.
func TestApproveAllAsListed(t *testing.T) {
	f := newFixture(t, baseFiles, required)
	var refs []vfs.SkillRef
	for _, p := range f.fs.Consent().Pending() {
		refs = append(refs, vfs.SkillRef{Origin: p.Skill.Origin, URI: p.Skill.URI, Binding: p.Binding})
	}
	gone := vfs.SkillRef{Origin: "local", URI: "skill://no-longer/SKILL.md", Binding: "sha256:00"}
	rows, err := f.fs.Consent().Approve(append([]vfs.SkillRef{gone}, refs...), "local")
	if err != nil || len(rows) != len(refs)+1 {
		t.Fatalf("approve --all: %d rows, %v", len(rows), err)
	}
	if rows[0].State != "removed" || !strings.Contains(rows[0].Detail, "no longer") {
		t.Errorf("row of a skill no longer listed: %+v", rows[0])
	}
	for _, r := range rows[1:] {
		if r.Approval != "approved" {
			t.Errorf("listed skill not approved: %+v", r)
		}
	}
	f2 := newFixture(t, baseFiles, required)
	p := f2.fs.Consent().Pending()[0]
	if _, err := f2.fs.Consent().Approve([]vfs.SkillRef{{Origin: "local", URI: p.Skill.URI, Binding: "sha256:other"}}, ""); !errors.Is(err, vfs.ErrChanged) {
		t.Errorf("approve with another binding: %v, want ErrChanged", err)
	}
	var re *vfs.RefError
	if _, err := f2.fs.Consent().Approve([]vfs.SkillRef{{Origin: "local", URI: p.Skill.URI}}, ""); !errors.As(err, &re) {
		t.Errorf("approve without a binding: %v, want a RefError", err)
	}
	if len(f2.fs.Consent().Pending()) != len(refs) {
		t.Errorf("a refused approval approved something: %d pending", len(f2.fs.Consent().Pending()))
	}
}
