package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/vfs"
)

// manyAPI has n pending skills of one server; its reviews carry what a
// hostile server could put in them.
type manyAPI struct {
	control.API
	n        int
	reviewed int
}

func (p *manyAPI) Status() vfs.Status {
	return vfs.Status{Origins: []vfs.OriginStatus{{Label: "acme"}}}
}
func (p *manyAPI) Skills() []vfs.SkillInfo { return nil }
func (p *manyAPI) Pending() []control.Pending {
	var out []control.Pending
	for i := range p.n {
		out = append(out, control.Pending{Skill: vfs.SkillInfo{Origin: "acme", URI: fmt.Sprintf("skill://s%03d/SKILL.md", i), Path: fmt.Sprintf("acme/s%03d", i)},
			Binding: fmt.Sprintf("sha256:%03d", i), Why: control.WhyContent, Changed: &control.ApprovalChange{Changed: []string{"SKILL.md"}}})
	}
	return out
}
func (p *manyAPI) Review(_ context.Context, ref control.SkillRef) (control.Review, error) {
	p.reviewed++
	return control.Review{
		Skill:   vfs.SkillInfo{Origin: "acme", URI: ref.URI, Path: "acme/x", Description: "looks fine\u202e\x1b]0;owned\x07"},
		Binding: "sha256:reviewed", Why: control.WhyContent,
		Server: control.ServerDesc{Label: "acme", Transport: "http", URL: "https://acme.example/mcp?token=***", Headers: []string{"Authorization"}},
		Files:  []control.FileReview{{Path: "acme/x/SKILL.md", Change: "changed", Diff: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+\x1b[2Jb\n"}},
	}, nil
}

// TestApproveReviewsAtMostMaxReviews: approve --all shows maxReviews skills
// in full and lists the rest; a server's escape sequences and bidi
// controls in the view are written as <U+XXXX>, never as themselves.
func TestApproveReviewsAtMostMaxReviews(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	api := &manyAPI{n: maxReviews + 1}
	srv, err := control.Serve(context.Background(), control.Options{Dir: dir, Mount: control.MountInfo{Path: "/m"}, API: api})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := control.Find([]string{dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	opts := approveOptions{controlOptions: controlOptions{out: &out}, all: "acme", in: strings.NewReader("n\n"), terminal: func() bool { return true }}
	if err := runApprove(context.Background(), c, opts, nil); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if api.reviewed != maxReviews {
		t.Errorf("%d skills reviewed, want %d", api.reviewed, maxReviews)
	}
	last := fmt.Sprintf("acme/s%03d", maxReviews)
	for _, w := range []string{"and 1 more, not shown in full", last + "  content changed", "  " + last + " binding sha256:050",
		"server       acme (http: https://acme.example/mcp?token=***; header Authorization: ***)",
		"looks fine<U+202E><U+001B>]0;owned<U+0007>", "+<U+001B>[2Jb\n", fmt.Sprintf("Approve %d skills? [y/N] ", maxReviews+1), "not approved"} {
		if !strings.Contains(got, w) {
			t.Errorf("output lacks %q:\n%s", w, got)
		}
	}
	if strings.ContainsAny(got, "\x1b\x07\u202e") {
		t.Errorf("the view writes a server's control characters as they are:\n%q", got)
	}
}
