package skillserver

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/testkit"
	"github.com/skillfs/skillfs/verify"
)

// testLogger fails the test on any Warn or Error: trouble the server only
// logs would otherwise go unnoticed.
func testLogger(t testing.TB) *slog.Logger { return testkit.NewLog(t).Logger() }

// tree writes files (slash path → content) below a new temporary DIR. The
// files are dated an hour back, so that the scanner's cache trusts them
// (see racyWindow).
func tree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		age(t, p)
	}
	return dir
}

func age(t testing.TB, path string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

func skillMD(name, extra string) string {
	return "---\nname: " + name + "\ndescription: the " + name + " skill\n" + extra + "---\nbody\n"
}

func newServer(t testing.TB, dir string) *Server {
	t.Helper()
	s, err := New(dir, Options{Logger: testLogger(t), PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func skillURIs(s *Server) []string {
	var out []string
	for _, e := range s.Skills() {
		out = append(out, e.URI)
	}
	return out
}

// problemFor returns the reason reported for the path below dir, or "".
func problemFor(s *Server, dir, rel string) string {
	want := filepath.Join(dir, filepath.FromSlash(rel))
	for _, p := range s.Problems() {
		if p.Path == want {
			return p.Reason
		}
	}
	return ""
}

func TestRefusals(t *testing.T) {
	ok := map[string]string{"good/SKILL.md": skillMD("good", "")}
	for _, tc := range []struct {
		name   string
		files  map[string]string
		path   string // reported path below DIR
		reason string // substring of the reason
	}{
		{"name differs from folder", map[string]string{"x/SKILL.md": skillMD("y", "")}, "x/SKILL.md", "name-mismatch"},
		{"no frontmatter", map[string]string{"x/SKILL.md": "# x\n"}, "x/SKILL.md", "frontmatter-invalid"},
		{"unclosed frontmatter", map[string]string{"x/SKILL.md": "---\nname: x\n"}, "x/SKILL.md", "frontmatter-invalid"},
		{"invalid YAML", map[string]string{"x/SKILL.md": "---\nname: [x\n---\n"}, "x/SKILL.md", "frontmatter-invalid"},
		{"frontmatter not a mapping", map[string]string{"x/SKILL.md": "---\n- x\n---\n"}, "x/SKILL.md", "frontmatter-invalid"},
		{"no name", map[string]string{"x/SKILL.md": "---\ndescription: d\n---\n"}, "x/SKILL.md", "bad-name"},
		{"invalid name", map[string]string{"X_y/SKILL.md": "---\nname: X_y\ndescription: d\n---\n"}, "X_y/SKILL.md", "bad-name"},
		{"no description", map[string]string{"x/SKILL.md": "---\nname: x\n---\n"}, "x/SKILL.md", "missing-description"},
		{"blank description", map[string]string{"x/SKILL.md": "---\nname: x\ndescription: \"  \"\n---\n"}, "x/SKILL.md", "missing-description"},
		{"SKILL.md directly in DIR", map[string]string{"SKILL.md": skillMD("top", "")}, "SKILL.md", "no skill path"},
		{"case collision", map[string]string{"x/SKILL.md": skillMD("x", ""), "x/A.md": "a", "x/a.md": "a"}, "x/SKILL.md", "collision"},
		{"top-level folder not a reg-name", map[string]string{"a b/x/SKILL.md": skillMD("x", "")}, "a b", "authority"},
		{"top-level folder reserved", map[string]string{"@gh/x/SKILL.md": skillMD("x", "")}, "@gh", "authority"},
		{"control character in a name", map[string]string{"x/SKILL.md": skillMD("x", ""), "x/a\x01b.md": "a"}, "x/a\x01b.md", "control character"},
		{"backslash in a name", map[string]string{"x/SKILL.md": skillMD("x", ""), "x/a\\b.md": "a"}, "x/a\\b.md", "backslash"},
		{"invisible character in a name", map[string]string{"x/SKILL.md": skillMD("x", ""), "x/a\u202eb.md": "a"}, "x/a\u202eb.md", "invisible"},
		{"invalid UTF-8 name", map[string]string{"x/SKILL.md": skillMD("x", ""), "x/a\xffb.md": "a"}, "x/a\xffb.md", "UTF-8"},
		{"too deep", map[string]string{"x/SKILL.md": skillMD("x", ""), "x/" + strings.Repeat("d/", 31) + "f": "f"}, "x/" + strings.Repeat("d/", 31) + "f", "too-deep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range ok {
				files[k] = v
			}
			for k, v := range tc.files {
				files[k] = v
			}
			dir := tree(t, files)
			s := newServer(t, dir)
			if got := problemFor(s, dir, tc.path); !strings.Contains(got, tc.reason) {
				t.Errorf("problem for %s = %q, want it to mention %q; all: %v", tc.path, got, tc.reason, s.Problems())
			}
			if !slices.Contains(skillURIs(s), "skill://good/SKILL.md") {
				t.Errorf("the good skill is not served next to the refused one: %v", skillURIs(s))
			}
			for _, e := range s.Skills() {
				for _, r := range e.Resources {
					if strings.Contains(r.URI, "%5C") || strings.Contains(r.URI, "%01") {
						t.Errorf("refused file published as %s", r.URI)
					}
				}
			}
		})
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	t.Run("files", func(t *testing.T) {
		files := map[string]string{"many/SKILL.md": skillMD("many", ""), "few/SKILL.md": skillMD("few", "")}
		for i := range maxResources { // with SKILL.md: one over
			files[fmt.Sprintf("many/f/%03d.txt", i)] = "x"
		}
		for i := range maxResources - 1 { // with SKILL.md: exactly the limit
			files[fmt.Sprintf("few/f/%03d.txt", i)] = "x"
		}
		dir := tree(t, files)
		s := newServer(t, dir)
		if got := problemFor(s, dir, "many/SKILL.md"); !strings.Contains(got, "over-limit") {
			t.Errorf("513 files: problem %q, want over-limit", got)
		}
		if !slices.Equal(skillURIs(s), []string{"skill://few/SKILL.md"}) {
			t.Errorf("served %v, want only the skill at the limit", skillURIs(s))
		}
	})
	t.Run("bytes", func(t *testing.T) {
		dir := tree(t, map[string]string{"big/SKILL.md": skillMD("big", ""), "fits/SKILL.md": skillMD("fits", "")})
		// Sparse files: with SKILL.md, big is one byte over and fits exactly at.
		for name, over := range map[string]int64{"big": 1, "fits": 0} {
			md, err := os.Stat(filepath.Join(dir, name, "SKILL.md"))
			if err != nil {
				t.Fatal(err)
			}
			size := maxSkillBytes - md.Size() + over
			f, err := os.Create(filepath.Join(dir, name, "blob.bin"))
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(size); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
		s := newServer(t, dir)
		if got := problemFor(s, dir, "big/SKILL.md"); !strings.Contains(got, "over-limit") {
			t.Errorf("16 MiB + 1: problem %q, want over-limit", got)
		}
		if !slices.Equal(skillURIs(s), []string{"skill://fits/SKILL.md"}) {
			t.Errorf("served %v, want only the skill at the limit", skillURIs(s))
		}
	})
}

func TestSymlinks(t *testing.T) {
	dir := tree(t, map[string]string{
		"s/SKILL.md":        skillMD("s", ""),
		"s/real.md":         "real",
		"shared/common.md":  "common",
		"other/SKILL.md":    skillMD("other", ""),
		"other/sub/deep.md": "deep",
	})
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("secret"), 0o644)
	link := func(target, rel string) {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
			t.Fatal(err)
		}
	}
	link("real.md", "s/rel-link.md")                          // relative, inside
	link(filepath.Join(dir, "s", "real.md"), "s/abs-link.md") // absolute, inside
	link("../shared", "s/shared")                             // folder inside DIR
	link(outside, "s/out.md")                                 // outside
	link("..", "s/loop")                                      // loops back to DIR
	link(".", "other/sub/self")                               // loops to its own folder
	link("missing.md", "s/dangling.md")                       // broken
	link(filepath.Dir(outside), "s/outdir")                   // folder outside

	s := newServer(t, dir)
	e := s.Skills()[1] // skill://s/SKILL.md
	if e.URI != "skill://s/SKILL.md" {
		t.Fatalf("skills %v", skillURIs(s))
	}
	var got []string
	for _, r := range e.Resources {
		got = append(got, r.URI)
	}
	want := []string{"skill://s/SKILL.md", "skill://s/abs-link.md", "skill://s/real.md", "skill://s/rel-link.md", "skill://s/shared/common.md"}
	if !slices.Equal(got, want) {
		t.Errorf("resources\n got %v\nwant %v", got, want)
	}
	real, _ := e.Resource("skill://s/real.md")
	viaLink, _ := e.Resource("skill://s/rel-link.md")
	if real.Digest != viaLink.Digest {
		t.Errorf("a symlink inside DIR is not served with its target's bytes")
	}
	for rel, why := range map[string]string{
		"s/out.md":       "outside DIR",
		"s/outdir":       "outside DIR",
		"s/loop":         "loops back",
		"other/sub/self": "loops back",
		"s/dangling.md":  "broken symlink",
	} {
		if got := problemFor(s, dir, rel); !strings.Contains(got, why) {
			t.Errorf("%s: problem %q, want %q", rel, got, why)
		}
	}
}

// A symlink re-pointed outside DIR after the scan is refused at read time.
func TestReadRefusesLinkRepointedOutside(t *testing.T) {
	dir := tree(t, map[string]string{"s/SKILL.md": skillMD("s", ""), "s/real.md": "real"})
	if err := os.Symlink("real.md", filepath.Join(dir, "s", "l.md")); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, dir)
	f := s.lib.cat.Load().files["skill://s/l.md"]
	if f == nil {
		t.Fatal("link not served")
	}
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("real"), 0o644)
	os.Remove(filepath.Join(dir, "s", "l.md"))
	os.Symlink(outside, filepath.Join(dir, "s", "l.md"))
	if b, err := s.lib.sc.readServed(f.path); !errors.Is(err, errOutside) {
		t.Errorf("read through a link now pointing outside: %q, %v; want errOutside", b, err)
	}
}

func TestSpecialFiles(t *testing.T) {
	dir := tree(t, map[string]string{"s/SKILL.md": skillMD("s", ""), "s/a.md": "a"})
	if err := syscall.Mkfifo(filepath.Join(dir, "s", "pipe"), 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	s := newServer(t, dir) // would hang if the FIFO were opened
	if got := problemFor(s, dir, "s/pipe"); !strings.Contains(got, "named pipe") {
		t.Errorf("FIFO: problem %q", got)
	}
	if n := len(s.Skills()[0].Resources); n != 2 {
		t.Errorf("skill has %d resources, want SKILL.md and a.md", n)
	}
	// A regular file replaced by a FIFO after the scan is not opened for
	// reading (which would block) either.
	p := filepath.Join(dir, "s", "a.md")
	os.Remove(p)
	syscall.Mkfifo(p, 0o644)
	if _, err := s.lib.sc.readServed(p); !errors.Is(err, errNotRegular) {
		t.Errorf("read of a FIFO: %v, want errNotRegular", err)
	}
}

// Root reads every file whatever its mode, so unreadable files are made by
// replacing the scanner's open.
func TestUnreadableFile(t *testing.T) {
	dir := tree(t, map[string]string{
		"s/SKILL.md": skillMD("s", ""), "s/secret.md": "x", "s/ok.md": "ok",
		"t/SKILL.md": skillMD("t", ""),
	})
	sc, err := newScanner(dir)
	if err != nil {
		t.Fatal(err)
	}
	sc.openFile = func(name string) (*os.File, error) {
		if strings.HasSuffix(name, "secret.md") || strings.HasSuffix(name, filepath.Join("t", "SKILL.md")) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EACCES}
		}
		return openNoFollow(name)
	}
	cat, err := sc.scan()
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.skills) != 1 || cat.skills[0].URI != "skill://s/SKILL.md" {
		t.Fatalf("skills %v, want only s (t's SKILL.md is unreadable)", cat.skills)
	}
	var got []string
	for _, r := range cat.skills[0].Resources {
		got = append(got, r.URI)
	}
	if want := []string{"skill://s/SKILL.md", "skill://s/ok.md"}; !slices.Equal(got, want) {
		t.Errorf("resources %v, want %v", got, want)
	}
	reasons := map[string]string{}
	for _, p := range cat.problems {
		reasons[p.Path] = p.Reason
	}
	if r := reasons[filepath.Join(dir, "s", "secret.md")]; !strings.Contains(r, "permission denied") {
		t.Errorf("unreadable file: %q", r)
	}
	if r := reasons[filepath.Join(dir, "t", "SKILL.md")]; !strings.Contains(r, "cannot read SKILL.md") {
		t.Errorf("unreadable SKILL.md: %q", r)
	}
}

func TestUnreadableFileByMode(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode; TestUnreadableFile covers this")
	}
	dir := tree(t, map[string]string{"s/SKILL.md": skillMD("s", ""), "s/secret.md": "x"})
	os.Chmod(filepath.Join(dir, "s", "secret.md"), 0)
	s := newServer(t, dir)
	if got := problemFor(s, dir, "s/secret.md"); !strings.Contains(got, "permission denied") {
		t.Errorf("problem %q", got)
	}
}

func TestUnreadableDir(t *testing.T) {
	if _, err := New(filepath.Join(t.TempDir(), "missing"), Options{}); err == nil {
		t.Error("New on a missing folder succeeded")
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := New(f, Options{}); err == nil {
		t.Error("New on a file succeeded")
	}
}

func TestNestedAndHidden(t *testing.T) {
	dir := tree(t, map[string]string{
		"outer/SKILL.md":                skillMD("outer", ""),
		"outer/.gitignore":              "*.tmp\n",
		"outer/.git/HEAD":               "ref\n",
		"outer/inner/SKILL.md":          skillMD("inner", ""),
		"outer/inner/ref.md":            "ref",
		"outer/bad/SKILL.md":            skillMD("wrong", ""),
		"outer/bad/x.md":                "x",
		"acme/billing/refunds/SKILL.md": skillMD("refunds", ""),
	})
	s := newServer(t, dir)
	if got, want := skillURIs(s), []string{"skill://acme/billing/refunds/SKILL.md", "skill://outer/SKILL.md", "skill://outer/inner/SKILL.md"}; !slices.Equal(got, want) {
		t.Fatalf("skills %v, want %v", got, want)
	}
	var outer []string
	for _, r := range s.Skills()[1].Resources {
		outer = append(outer, r.URI)
	}
	// The nested skill's files and the refused nested SKILL.md are the
	// enclosing skill's files; .git is not.
	want := []string{"skill://outer/SKILL.md", "skill://outer/.gitignore", "skill://outer/bad/SKILL.md", "skill://outer/bad/x.md", "skill://outer/inner/SKILL.md", "skill://outer/inner/ref.md"}
	if !slices.Equal(outer, want) {
		t.Errorf("outer resources\n got %v\nwant %v", outer, want)
	}
	cat := s.lib.cat.Load()
	for _, d := range []string{"skill://acme", "skill://acme/billing", "skill://acme/billing/refunds", "skill://outer", "skill://outer/inner"} {
		if _, ok := cat.dirs[d]; !ok {
			t.Errorf("no directory %s", d)
		}
	}
	if _, ok := cat.dirs["skill://outer/.git"]; ok {
		t.Error(".git is a served directory")
	}
	if md := cat.files["skill://outer/inner/SKILL.md"].res; md.Name != "inner" || md.Description != "the inner skill" || md.MIMEType != "text/markdown" {
		t.Errorf("SKILL.md resource metadata %+v", md)
	}
}

// The frontmatter in the listing is the SKILL.md's, field by field, as
// verify compares it.
func TestFrontmatterVerbatim(t *testing.T) {
	md := "---\nname: s\ndescription: d\nlicense: MIT\nmetadata:\n  version: \"1.10\"\nallowed-tools: Read Grep\nx-extra:\n  version: 1.10\n  n: 007\n  when: 2024-01-02\n  list: [a, 1, true, null]\n---\nbody\n"
	dir := tree(t, map[string]string{"s/SKILL.md": md})
	s := newServer(t, dir)
	e := s.Skills()[0]
	if err := verify.CompareFrontmatter([]byte(md), e.Frontmatter); err != nil {
		t.Errorf("listing frontmatter differs from SKILL.md: %v", err)
	}
	if _, err := verify.CheckEntry(e, verify.EntryOptions{Strict: true}); err != nil {
		t.Errorf("published entry fails the host's check: %v", err)
	}
}

func TestDigestCache(t *testing.T) {
	dir := tree(t, map[string]string{"s/SKILL.md": skillMD("s", ""), "s/a.md": "a", "s/b.md": "b", "t/SKILL.md": skillMD("t", "")})
	s := newServer(t, dir)
	read := s.lib.sc.hashed
	if read != 4 {
		t.Fatalf("first scan read %d files, want 4", read)
	}
	if err := s.Rescan(); err != nil {
		t.Fatal(err)
	}
	if s.lib.sc.hashed != read {
		t.Errorf("rescanning an unchanged tree read %d files", s.lib.sc.hashed-read)
	}
	a := filepath.Join(dir, "s", "a.md")
	os.WriteFile(a, []byte("changed"), 0o644)
	age(t, a)
	if err := s.Rescan(); err != nil {
		t.Fatal(err)
	}
	if got := s.lib.sc.hashed - read; got != 1 {
		t.Errorf("rescan after one change read %d files, want 1", got)
	}
	r, _ := s.Skills()[0].Resource("skill://s/a.md")
	if r.Digest != verify.DigestOf([]byte("changed")) || r.Size != 7 {
		t.Errorf("after the change: %+v", r)
	}
	read = s.lib.sc.hashed
	s.Rescan()
	if s.lib.sc.hashed != read {
		t.Errorf("a second rescan read %d files", s.lib.sc.hashed-read)
	}
}

// A file changed just before it was read is read again on the next scan:
// a second change within the same timestamp tick would leave its key as
// it was.
func TestRacyEntriesAreReread(t *testing.T) {
	dir := tree(t, map[string]string{"s/SKILL.md": skillMD("s", ""), "s/old.md": "old"})
	fresh := filepath.Join(dir, "s", "fresh.md")
	os.WriteFile(fresh, []byte("fresh"), 0o644) // mtime now
	s := newServer(t, dir)
	read := s.lib.sc.hashed
	s.Rescan()
	if got := s.lib.sc.hashed - read; got != 1 {
		t.Errorf("rescan read %d files, want 1 (the fresh one)", got)
	}
	age(t, fresh) // now long ago (and its ctime moved: read once more)
	s.Rescan()
	read = s.lib.sc.hashed
	s.Rescan()
	if got := s.lib.sc.hashed - read; got != 0 {
		t.Errorf("rescan of a settled tree read %d files", got)
	}
}

// Every name the walker publishes becomes a URI that go-sdk can register
// (url.Parse) and that verify parses back to the same names.
func FuzzServedURI(f *testing.F) {
	for _, s := range []string{"acme/billing/SKILL.md", "a/b c.md", "x/ünï", "x/100%", "a!$&'()*+,;=/b:@", "a/\u202e", "a%41/b", "-/~", "x/a\\b", "A/B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		segs := strings.Split(p, "/")
		for _, s := range segs {
			if s == "" {
				return
			}
		}
		u, err := uriOf(segs)
		if err != nil {
			return
		}
		s := u.String()
		if _, err := url.Parse(s); err != nil {
			t.Fatalf("%q → %s, which url.Parse refuses: %v", p, s, err)
		}
		back, err := verify.ParseURI(s)
		if err != nil {
			t.Fatalf("%q → %s, which verify refuses: %v", p, s, err)
		}
		if got := strings.Join(append([]string{back.Authority}, back.Segments...), "/"); got != p {
			t.Fatalf("%q → %s → %q", p, s, got)
		}
		if c, ok := canonicalURI(s); !ok || c != s {
			t.Fatalf("canonicalURI(%s) = %q, %v", s, c, ok)
		}
	})
}

// The streaming UTF-8 check agrees with utf8.Valid however the stream is cut.
func FuzzUTF8Checker(f *testing.F) {
	for _, s := range []string{"", "abc", "ü", "\xff", "日本語", "\xe6\x97", "a\xf0\x9f\x98\x80b", "\xed\xa0\x80"} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, b []byte, step uint8) {
		n := int(step%7) + 1
		u := &utf8Checker{ok: true}
		for i := 0; i < len(b); i += n {
			u.Write(b[i:min(i+n, len(b))])
		}
		if got, want := u.valid(), utf8.Valid(b); got != want {
			t.Fatalf("%q in chunks of %d: valid %v, want %v", b, n, got, want)
		}
	})
}

func TestCursorRoundTrip(t *testing.T) {
	for _, c := range []struct{ scope, key string }{{scopeList, "skill://a/SKILL.md"}, {"skill://%C3%BC", "skill://%C3%BC/x"}, {"skill://a/b", "skill://a/b/c"}} {
		got, err := decodeCursor(c.scope, encodeCursor(c.scope, c.key))
		if err != nil || got != c.key {
			t.Errorf("cursor of %q in %q decodes to %q, %v", c.key, c.scope, got, err)
		}
	}
	for _, c := range []string{"!!", "", "a b", "garbage", base64.RawURLEncoding.EncodeToString([]byte("skill://a/SKILL.md")),
		encodeCursor("skill://a", "skill://a/x"), encodeCursor(scopeList, "x"), encodeCursor(scopeList, "skill://"), encodeCursor(scopeList, "skill://\xff")} {
		if _, err := decodeCursor(scopeList, c); err == nil {
			t.Errorf("decodeCursor(skills/list, %q) accepted", c)
		}
	}
	for _, c := range []string{encodeCursor(scopeList, "skill://a/SKILL.md"), encodeCursor("skill://b", "skill://b/x"), encodeCursor("skill://a", "skill://b/x"), encodeCursor("skill://a", "skill://ab/x")} {
		if _, err := decodeCursor("skill://a", c); err == nil {
			t.Errorf("decodeCursor(skill://a, %q) accepted", c)
		}
	}
}

func TestSkillsAreCopies(t *testing.T) {
	dir := tree(t, map[string]string{"s/SKILL.md": skillMD("s", "metadata:\n  k: v\n")})
	s := newServer(t, dir)
	e := s.Skills()[0]
	e.Frontmatter["name"] = "changed"
	e.Frontmatter["metadata"].(map[string]any)["k"] = "changed"
	e.Resources[0].Digest = skill.Digest("x")
	again := s.Skills()[0]
	if again.Name() != "s" || again.Frontmatter["metadata"].(map[string]any)["k"] != "v" || again.Resources[0].Digest == "x" {
		t.Error("changing a returned entry changed the catalog")
	}
}
