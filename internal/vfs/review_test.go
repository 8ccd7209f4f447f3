package vfs_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/control/wire"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/vfs"
)

// allKept waits until the store holds every file of an approved skill:
// the approval keeps them for the diff of a later change.
func allKept(t *testing.T, f *fixture, path string) {
	t.Helper()
	waitFor(t, path+"'s files to be kept", func() bool {
		ins, err := f.fs.Consent().Inspect(context.Background(), vfs.SkillRef{Path: path})
		if err != nil {
			return false
		}
		for _, fs := range ins.Files {
			if !fs.Cached {
				return false
			}
		}
		return true
	})
}

// A changed skill's review is the unified diff of every changed file
// against the approved bytes, which the approval kept and names.
func TestReviewDiffsAgainstTheApprovedVersion(t *testing.T) {
	// Waits for a re-list (testRelistGap): beside the others.
	t.Parallel()
	f := newFixture(t, baseFiles, func(o *config.Origin) { required(o); o.Env = map[string]string{"TOKEN": "s3cret"} })
	if p, _ := f.pending("local/alpha"); p.Why != wire.WhyNew {
		t.Errorf("a skill never approved: why %q, want %q", p.Why, wire.WhyNew)
	}
	approve(t, f, "local/alpha")
	allKept(t, f, "local/alpha")
	writeFiles(t, f.dir, map[string]string{
		"alpha/refs/a.md": "changed\n",
		"alpha/refs/b.md": "new\n",
		"alpha/SKILL.md":  "---\nname: alpha\ndescription: Alpha skill, now different\n---\nbody\n",
	})
	if err := f.srv.Rescan(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "alpha to wait for approval again", func() bool { _, ok := f.pending("local/alpha"); return ok })
	p, _ := f.pending("local/alpha")
	if p.Why != wire.WhyFrontmatter {
		t.Errorf("why %q, want %q", p.Why, wire.WhyFrontmatter)
	}
	rv, err := f.fs.Consent().Review(context.Background(), vfs.SkillRef{Path: "local/alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if rv.Binding != p.Binding || rv.Why != wire.WhyFrontmatter || rv.Skill.Description != "Alpha skill, now different" {
		t.Errorf("review: %+v", rv)
	}
	if rv.Server.Label != "local" || len(rv.Server.Command) == 0 || !slices.Equal(rv.Server.Env, []string{"TOKEN"}) {
		t.Errorf("server: %+v", rv.Server)
	}
	got := map[string]wire.FileReview{}
	for _, fr := range rv.Files {
		got[fr.Path] = fr
	}
	for path, want := range map[string][]string{
		"local/alpha/SKILL.md":  {"--- a/local/alpha/SKILL.md", "+++ b/local/alpha/SKILL.md", "-description: Alpha skill\n", "+description: Alpha skill, now different\n", " body\n"},
		"local/alpha/refs/a.md": {"@@ -1 +1 @@\n-aaa\n+changed\n"},
		"local/alpha/refs/b.md": {"@@ -0,0 +1 @@\n+new\n"},
	} {
		fr, ok := got[path]
		if !ok {
			t.Errorf("%s not in the review: %+v", path, rv.Files)
			continue
		}
		for _, w := range want {
			if !strings.Contains(fr.Diff, w) {
				t.Errorf("%s: diff lacks %q:\n%s(note %q)", path, w, fr.Diff, fr.Note)
			}
		}
	}
	if len(rv.Files) != 3 {
		t.Errorf("%d files reviewed, want 3: %+v", len(rv.Files), rv.Files)
	}
	// The approval names the bytes it kept; they are held (never evicted).
	id := f.fs.Consent().Status().Origins[0].ID
	data, err := os.ReadFile(filepath.Join(f.cache, id, "approvals.json"))
	if err != nil {
		t.Fatal(err)
	}
	held, err := vfs.ApprovalsHeld(data)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(held, skill.Digest("sha256:"+sha("aaa\n"))) {
		t.Errorf("approvals.json holds %v, not the approved a.md", held)
	}
}

// A binary file's change is shown by size and digest.
func TestReviewShowsABinaryChangeBySizeAndDigest(t *testing.T) {
	// Waits for a re-list (testRelistGap): beside the others.
	t.Parallel()
	files := map[string]string{"alpha/SKILL.md": baseFiles["alpha/SKILL.md"], "alpha/logo.bin": "\x00\x01\x02"}
	f := newFixture(t, files, required)
	approve(t, f, "local/alpha")
	allKept(t, f, "local/alpha")
	writeFiles(t, f.dir, map[string]string{"alpha/logo.bin": "\x00\x01\x02\x03"})
	if err := f.srv.Rescan(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "alpha to wait for approval again", func() bool { _, ok := f.pending("local/alpha"); return ok })
	rv, err := f.fs.Consent().Review(context.Background(), vfs.SkillRef{Path: "local/alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rv.Files) != 1 || rv.Files[0].Diff != "" ||
		rv.Files[0].Note != "binary file 3 bytes, sha256:"+sha("\x00\x01\x02")+" -> 4 bytes, sha256:"+sha("\x00\x01\x02\x03") {
		t.Errorf("review of a binary change: %+v", rv.Files)
	}
	if p, _ := f.pending("local/alpha"); p.Why != wire.WhyContent {
		t.Errorf("why %q, want %q", p.Why, wire.WhyContent)
	}
}

// A changed server entry (another env value) is another identity: its
// approvals are not carried over, and the pending skill says why.
func TestPendingSaysTheServerEntryChanged(t *testing.T) {
	f := newFixture(t, baseFiles, required)
	approve(t, f, "local/alpha")
	f.stop()
	f.st.Close()
	f.start(t, func(o *config.Origin) { required(o); o.Env = map[string]string{"TOKEN": "another"} })
	waitFor(t, "alpha pending under the new identity", func() bool { _, ok := f.pending("local/alpha"); return ok })
	if f.exists("local/alpha") {
		t.Errorf("an approval was carried over to another identity of the label")
	}
	if p, _ := f.pending("local/alpha"); p.Why != wire.WhyServerEntry {
		t.Errorf("alpha: why %q, want %q", p.Why, wire.WhyServerEntry)
	}
	if p, _ := f.pending("local/team/delta"); p.Why != wire.WhyNew {
		t.Errorf("delta, never approved: why %q, want %q", p.Why, wire.WhyNew)
	}
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// textOf is n bytes of text in lines of 64 bytes, each line naming tag.
func textOf(tag string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		line := fmt.Sprintf("%s line %d", tag, i)
		line += strings.Repeat(".", 63-len(line)) + "\n"
		b.WriteString(line)
	}
	return b.String()[:n]
}

// The caps at their edges: a file of MaxKeptFile bytes is kept and
// diffed, one byte more is shown by size and digest; the files of one
// skill are kept, in URI order, while they fit MaxKeptSkill.
func TestReviewCaps(t *testing.T) {
	// Waits for a re-list (testRelistGap): beside the others.
	t.Parallel()
	md := baseFiles["alpha/SKILL.md"]
	files := map[string]string{
		"alpha/SKILL.md":   md,
		"alpha/a-edge.txt": textOf("edge", vfs.MaxKeptFile),
		"alpha/b-over.txt": textOf("over", vfs.MaxKeptFile+1),
		"alpha/c.txt":      textOf("c", vfs.MaxKeptFile),
		"alpha/d.txt":      textOf("d", vfs.MaxKeptFile),
		"alpha/e.txt":      textOf("e", vfs.MaxKeptFile-len(md)),
		"alpha/f.txt":      textOf("f", 200),
	}
	f := newFixture(t, files, required)
	approve(t, f, "local/alpha")
	// SKILL.md, a-edge, c, d and e make MaxKeptSkill exactly; f is past it.
	kept := []string{"alpha/SKILL.md", "alpha/a-edge.txt", "alpha/c.txt", "alpha/d.txt", "alpha/e.txt"}
	waitFor(t, "the kept files in the store", func() bool {
		ins, err := f.fs.Consent().Inspect(context.Background(), vfs.SkillRef{Path: "local/alpha"})
		if err != nil {
			return false
		}
		n := 0
		for _, fs := range ins.Files {
			if fs.Cached {
				n++
			}
		}
		return n >= len(kept)
	})
	changed := map[string]string{}
	for _, p := range []string{"alpha/a-edge.txt", "alpha/b-over.txt", "alpha/e.txt", "alpha/f.txt"} {
		changed[p] = strings.Replace(files[p], "line 2.", "LINE 2.", 1)
	}
	writeFiles(t, f.dir, changed)
	if err := f.srv.Rescan(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "alpha to wait for approval again", func() bool { _, ok := f.pending("local/alpha"); return ok })
	rv, err := f.fs.Consent().Review(context.Background(), vfs.SkillRef{Path: "local/alpha"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]wire.FileReview{}
	for _, fr := range rv.Files {
		got[strings.TrimPrefix(fr.Path, "local/")] = fr
	}
	if fr := got["alpha/a-edge.txt"]; !strings.Contains(fr.Diff, "+edge LINE 2.") {
		t.Errorf("a file of MaxKeptFile bytes: %+v", fr)
	}
	if fr := got["alpha/e.txt"]; !strings.Contains(fr.Diff, "+e LINE 2.") {
		t.Errorf("the last file within MaxKeptSkill: %+v", fr)
	}
	if fr := got["alpha/b-over.txt"]; fr.Diff != "" || !strings.Contains(fr.Note, "not kept") || !strings.Contains(fr.Note, fmt.Sprintf("over the diff cap of %d bytes a file", vfs.MaxKeptFile)) {
		t.Errorf("a file of MaxKeptFile+1 bytes: %+v", fr)
	}
	// Its approved bytes were not kept, so its new version is shown
	// whole, and the note says why.
	if fr := got["alpha/f.txt"]; !strings.Contains(fr.Diff, "--- /dev/null\n+++ b/local/alpha/f.txt\n@@ -0,0 +1,4 @@\n+f line 0.") ||
		!strings.Contains(fr.Diff, "+f LINE 2.") || !strings.Contains(fr.Note, "the approved version's bytes were not kept (over the caps at the approval); so the new version is shown in full") {
		t.Errorf("a file past MaxKeptSkill: %+v", fr)
	}
	if len(rv.Files) != 4 {
		t.Errorf("%d files reviewed, want 4: %+v", len(rv.Files), rv.Files)
	}
}

// The files an approval keeps are fetched by one queue per server, each
// digest once: three skills approved together that ship the same file
// cost one read of it, not three.
func TestKeptFilesAreFetchedOncePerDigest(t *testing.T) {
	files := map[string]string{}
	for _, n := range []string{"one", "two", "three"} {
		files[n+"/SKILL.md"] = "---\nname: " + n + "\ndescription: Skill " + n + "\n---\nbody\n"
		files[n+"/shared.md"] = "the same bytes in every skill\n"
	}
	f := newFixture(t, files, required)
	shared := func() int {
		n := 0
		for _, u := range f.access.reads() {
			if strings.HasSuffix(u, "/shared.md") {
				n++
			}
		}
		return n
	}
	before := shared()
	approve(t, f, "local/one", "local/two", "local/three")
	for _, n := range []string{"one", "two", "three"} {
		allKept(t, f, "local/"+n)
	}
	if got := shared() - before; got != 1 {
		t.Errorf("the shared file was read %d times to keep it for three approvals, want 1: %v", got, f.access.reads())
	}
}

// A server that fails every read of what approvals keep costs the log a
// line per skill, not one per file.
func TestKeepFailuresAreOneLinePerSkill(t *testing.T) {
	files := map[string]string{}
	for _, n := range []string{"one", "two"} {
		files[n+"/SKILL.md"] = "---\nname: " + n + "\ndescription: Skill " + n + "\n---\nbody\n"
		for i := range 5 {
			files[fmt.Sprintf("%s/refs/f%d.md", n, i)] = fmt.Sprintf("%s %d\n", n, i)
		}
	}
	f := newFixture(t, files, required)
	f.allowWarn = true // reads of files the server lost warn, as they should
	// The server still lists the files (it is not asked to rescan) but
	// can no longer read them.
	for _, n := range []string{"one", "two"} {
		if err := os.RemoveAll(filepath.Join(f.dir, n, "refs")); err != nil {
			t.Fatal(err)
		}
	}
	approve(t, f, "local/one", "local/two")
	const msg = "keeping an approved file for later diffs failed; a change to it will show its new version in full"
	waitFor(t, "the keeper to try every file", func() bool {
		return len(f.warn.Matching(slog.LevelInfo, msg))+len(f.warn.Matching(slog.LevelDebug, msg)) == 10
	})
	if info := f.warn.Matching(slog.LevelInfo, msg); len(info) != 2 {
		t.Errorf("%d lines at Info for 10 failed files of 2 skills, want 2:\n%v", len(info), info)
	}
}

// A server that stalls the reads of what approvals keep cannot hold up
// the stop: the keeper's read, like every read, ends with the origin's
// life (the reader binds it), not at the call timeout (ten minutes here).
func TestStalledKeepDoesNotHoldUpTheStop(t *testing.T) {
	f := newFixture(t, map[string]string{
		"one/SKILL.md":  "---\nname: one\ndescription: Skill one\n---\nbody\n",
		"one/refs/a.md": "kept\n",
	}, func(o *config.Origin) { required(o); o.Limits.CallTimeout = 10 * time.Minute })
	f.allowWarn = true // the stalled read ends with the origin
	stalled := make(chan struct{}, 1)
	release := make(chan struct{})
	f.access.setHook(func(line string) {
		if line == "resources/read skill://one/refs/a.md" {
			stalled <- struct{}{}
			<-release
		}
	})
	defer close(release)
	approve(t, f, "local/one")
	<-stalled // the keeper is waiting on the server
	done := make(chan struct{})
	go func() { f.stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the stop waited on the stalled keep")
	}
}

// A new skill's review carries what approving it means: every file with
// its size and flags, and its SKILL.md as verified, cut at
// MaxShownSkillMD with a note saying how much was shown.
func TestReviewOfANewSkillShowsItsSkillMDAndFiles(t *testing.T) {
	body := strings.Repeat("a line of a long skill body.\n", (wire.MaxShownSkillMD+4096)/29)
	md := "---\nname: alpha\ndescription: Alpha skill\n---\n" + body
	files := map[string]string{
		"alpha/SKILL.md":            md,
		"alpha/scripts/run.sh":      "#!/bin/sh\necho hi\n",
		"alpha/inner/SKILL.md":      "---\nname: inner\ndescription: Inner skill\n---\ninner\n",
		"alpha/refs/big.txt":        strings.Repeat("x", vfs.MaxKeptFile+1),
		"alpha/refs/plain-notes.md": "notes\n",
	}
	f := newFixture(t, files, required)
	rv, err := f.fs.Consent().Review(context.Background(), vfs.SkillRef{Path: "local/alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if rv.Why != wire.WhyNew || rv.SkillMDSize != int64(len(md)) || len(rv.SkillMD) > wire.MaxShownSkillMD || !strings.HasPrefix(md, string(rv.SkillMD)) {
		t.Errorf("SKILL.md: why %q, %d bytes shown of %d (file %d)", rv.Why, len(rv.SkillMD), rv.SkillMDSize, len(md))
	}
	if want := fmt.Sprintf("the first %d of its %d bytes", len(rv.SkillMD), len(md)); rv.SkillMDNote != want {
		t.Errorf("note %q, want %q", rv.SkillMDNote, want)
	}
	got := map[string]string{}
	for _, lf := range rv.Listing {
		got[lf.Path] = fmt.Sprintf("%d %v", lf.Size, lf.Flags)
	}
	want := map[string]string{
		"local/alpha/SKILL.md":            fmt.Sprintf("%d []", len(md)),
		"local/alpha/scripts/run.sh":      fmt.Sprintf("%d [script]", len(files["alpha/scripts/run.sh"])),
		"local/alpha/inner/SKILL.md":      fmt.Sprintf("%d [nested-skill]", len(files["alpha/inner/SKILL.md"])),
		"local/alpha/refs/big.txt":        fmt.Sprintf("%d [not-kept-for-diffs]", vfs.MaxKeptFile+1),
		"local/alpha/refs/plain-notes.md": "6 []",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("listing:\n got %v\nwant %v", got, want)
	}
}
