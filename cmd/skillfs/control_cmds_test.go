package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/exitcode"
	"github.com/skillfs/skillfs/internal/vfs"
)

// pendingAPI has one pending skill per label and records approvals.
type pendingAPI struct {
	control.API
	approved []control.SkillRef
}

func (p *pendingAPI) Status() vfs.Status {
	return vfs.Status{Origins: []vfs.OriginStatus{{Label: "acme"}}}
}
func (p *pendingAPI) Skills() []vfs.SkillInfo { return nil }
func (p *pendingAPI) Pending() []control.Pending {
	return []control.Pending{
		{Skill: vfs.SkillInfo{Origin: "acme", URI: "skill://new/SKILL.md", Path: "acme/new", Flags: []string{"hooks"}}, Binding: "sha256:new"},
		{Skill: vfs.SkillInfo{Origin: "acme", URI: "skill://changed/SKILL.md", Path: "acme/changed"}, Binding: "sha256:changed",
			Changed: &control.ApprovalChange{Added: []string{"b.md"}, Changed: []string{"SKILL.md"}, Frontmatter: []string{"description"}}},
	}
}

// Review shows each pending skill with its row's binding.
func (p *pendingAPI) Review(_ context.Context, ref control.SkillRef) (control.Review, error) {
	for _, q := range p.Pending() {
		if q.Skill.URI == ref.URI {
			return control.Review{Skill: q.Skill, Binding: q.Binding, Changed: q.Changed, Why: q.Why,
				Server: control.ServerDesc{Label: "acme", Transport: "stdio", Command: []string{"acme-server", "--token-file", "t"}, Env: []string{"TOKEN"}}}, nil
		}
	}
	return control.Review{}, control.NotFound("no %s", ref)
}

func (p *pendingAPI) Approve(refs []control.SkillRef, _ string) ([]vfs.SkillInfo, error) {
	p.approved = append(p.approved, refs...)
	var out []vfs.SkillInfo
	for _, r := range refs {
		out = append(out, vfs.SkillInfo{Path: "acme/" + strings.TrimSuffix(strings.TrimPrefix(r.URI, "skill://"), "/SKILL.md"), Approval: "approved"})
	}
	return out, nil
}

func TestApproveAsksOnTheTerminal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	api := &pendingAPI{}
	srv, err := control.Serve(context.Background(), control.Options{Dir: dir, Mount: control.MountInfo{Path: "/m"}, API: api})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := control.Find([]string{dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		answer   string
		approved int
		want     string
	}{
		{"n\n", 0, "not approved"},
		{"\n", 0, "not approved"},
		{"y\n", 2, "approved acme/new"},
	} {
		api.approved = nil
		var out bytes.Buffer
		opts := approveOptions{controlOptions: controlOptions{out: &out}, in: strings.NewReader(tc.answer), terminal: func() bool { return true }}
		if err := runApprove(context.Background(), c, opts, []string{"acme/new", "/m/acme/changed/SKILL.md"}); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		for _, w := range []string{"acme/new", "new", "hooks", "acme/changed", "+b.md ~SKILL.md frontmatter: description", "Approve 2 skills? [y/N] ", "  acme/new binding sha256:new", "acme (stdio: acme-server --token-file t; env TOKEN=***)", tc.want} {
			if !strings.Contains(got, w) {
				t.Errorf("answer %q: output lacks %q:\n%s", tc.answer, w, got)
			}
		}
		if len(api.approved) != tc.approved {
			t.Errorf("answer %q: approved %v", tc.answer, api.approved)
		}
	}
	// Each approval names the binding that was shown.
	if r := api.approved[1]; r.URI != "skill://changed/SKILL.md" || r.Binding != "sha256:changed" {
		t.Errorf("an absolute path to SKILL.md became %+v", r)
	}
	if r := api.approved[0]; r.Binding != "sha256:new" {
		t.Errorf("acme/new was approved as %+v", r)
	}
	var out bytes.Buffer
	opts := approveOptions{controlOptions: controlOptions{out: &out}, terminal: func() bool { return false }}
	err = runApprove(context.Background(), c, opts, []string{"acme/new"})
	if exitcode.Of(err) != exitUsage || !strings.Contains(err.Error(), "pass --yes") {
		t.Errorf("without a terminal: %v", err)
	}
}
