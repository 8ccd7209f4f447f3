package verify

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseURIAccepts(t *testing.T) {
	tests := []struct {
		in        string
		want      URI
		canonical string
		path      string
	}{
		{"skill://git-workflow/SKILL.md", URI{"skill", "git-workflow", []string{"SKILL.md"}}, "skill://git-workflow/SKILL.md", "git-workflow/SKILL.md"},
		{"skill://acme/billing/refunds/examples/email.md", URI{"skill", "acme", []string{"billing", "refunds", "examples", "email.md"}}, "skill://acme/billing/refunds/examples/email.md", "acme/billing/refunds/examples/email.md"},
		{"skill://a", URI{"skill", "a", nil}, "skill://a", "a"},
		{"SKILL://a/b", URI{"skill", "a", []string{"b"}}, "skill://a/b", "a/b"},
		{"sKiLl://Acme/B", URI{"skill", "Acme", []string{"B"}}, "skill://Acme/B", "Acme/B"},
		{"skill://a/%78", URI{"skill", "a", []string{"x"}}, "skill://a/x", "a/x"},
		{"skill://a/%7e%2d", URI{"skill", "a", []string{"~-"}}, "skill://a/~-", "a/~-"},
		{"skill://a/with%20space", URI{"skill", "a", []string{"with space"}}, "skill://a/with%20space", "a/with space"},
		{"skill://a/q%3Fh%23", URI{"skill", "a", []string{"q?h#"}}, "skill://a/q%3Fh%23", "a/q?h#"},
		{"skill://a/pct%25", URI{"skill", "a", []string{"pct%"}}, "skill://a/pct%25", "a/pct%"},
		{"skill://a/caf%c3%a9", URI{"skill", "a", []string{"café"}}, "skill://a/caf%C3%A9", "a/café"},
		{"skill://a/café", URI{"skill", "a", []string{"café"}}, "skill://a/caf%C3%A9", "a/café"},
		{"skill://a/b:c@d!$&'()*+,;=", URI{"skill", "a", []string{"b:c@d!$&'()*+,;="}}, "skill://a/b:c@d!$&'()*+,;=", "a/b:c@d!$&'()*+,;="},
		{"skill://a%3Ab/x", URI{"skill", "a:b", []string{"x"}}, "skill://a%3Ab/x", "a:b/x"},
		{"skill://...x/..y", URI{"skill", "...x", []string{"..y"}}, "skill://...x/..y", "...x/..y"},
		{"github://owner/repo/skills/refunds/SKILL.md", URI{"github", "owner", []string{"repo", "skills", "refunds", "SKILL.md"}}, "github://owner/repo/skills/refunds/SKILL.md", "@github/owner/repo/skills/refunds/SKILL.md"},
		{"GitHub://o/r", URI{"github", "o", []string{"r"}}, "github://o/r", "@github/o/r"},
		{"x-my.scheme+v1://a/b", URI{"x-my.scheme+v1", "a", []string{"b"}}, "x-my.scheme+v1://a/b", "@x-my.scheme+v1/a/b"},
		// "@" authorities are only reserved under skill.
		{"github://%40o/r", URI{"github", "@o", []string{"r"}}, "github://%40o/r", "@github/@o/r"},
		// ZWJ is allowed in names (Persian, Indic scripts).
		{"skill://a/x%E2%80%8Dy", URI{"skill", "a", []string{"x\u200dy"}}, "skill://a/x%E2%80%8Dy", "a/x\u200dy"},
	}
	for _, tt := range tests {
		u, err := ParseURI(tt.in)
		if err != nil {
			t.Errorf("ParseURI(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(u, tt.want) {
			t.Errorf("ParseURI(%q) = %#v, want %#v", tt.in, u, tt.want)
		}
		if got := u.String(); got != tt.canonical {
			t.Errorf("ParseURI(%q).String() = %q, want %q", tt.in, got, tt.canonical)
		}
		if got := u.Path(); got != tt.path {
			t.Errorf("ParseURI(%q).Path() = %q, want %q", tt.in, got, tt.path)
		}
		checkRoundTrips(t, u)
	}
}

// checkRoundTrips asserts the documented invariants of a valid URI.
func checkRoundTrips(t *testing.T, u URI) {
	t.Helper()
	again, err := ParseURI(u.String())
	if err != nil || !reflect.DeepEqual(again, u) {
		t.Errorf("ParseURI(%q) = %#v, %v; want %#v", u.String(), again, err, u)
	}
	back, err := URIFromPath(u.Path())
	if err != nil || !reflect.DeepEqual(back, u) {
		t.Errorf("URIFromPath(%q) = %#v, %v; want %#v", u.Path(), back, err, u)
	}
	if !u.Equal(again) {
		t.Errorf("%#v not Equal to its reparse", u)
	}
}

func TestParseURIRejects(t *testing.T) {
	long := strings.Repeat("x", 256)
	deep := "skill://a" + strings.Repeat("/d", MaxDepth) // 33 components
	tests := []struct {
		in   string
		want Reason
	}{
		{"", BadURI},
		// file in every spelling, by scheme.
		{"file:///etc/passwd", BadScheme},
		{"file:/etc/passwd", BadScheme},
		{"FILE:x", BadScheme},
		{"File://host/etc/passwd", BadScheme},
		{"fIlE:", BadScheme},
		{"file:", BadScheme},
		{"http://example.com/x", BadScheme},
		{"HTTPS://example.com/x", BadScheme},
		{"data:text/plain,hello", BadScheme},
		{"javascript:alert(1)", BadScheme},
		{"ftp://h/x", BadScheme},
		{"ws://h/x", BadScheme},
		{"wss://h/x", BadScheme},
		{"jar:file:///x!/y", BadScheme},
		{"blob:https://h/uuid", BadScheme},
		// Not a scheme at all, so not an absolute URI.
		{" file:///etc/passwd", BadURI},
		{"file%3A///etc/passwd", BadURI},
		{"1skill://a/b", BadURI},
		{"sk_ill://a/b", BadURI},
		{":x", BadURI},
		// Relative references.
		{"a/SKILL.md", BadURI},
		{"/etc/passwd", BadURI},
		{"//a/b", BadURI},
		{"../x", BadURI},
		{"SKILL.md", BadURI},
		{"a/b:c", BadURI},
		// No authority.
		{"skill:x", BadURI},
		{"skill:/x/SKILL.md", BadURI},
		{"skill:///x/SKILL.md", BadURI},
		{"skill://", BadURI},
		{"skill:", BadURI},
		// Query, fragment, userinfo, port, IP literal.
		{"skill://a/b?x=1", BadURI},
		{"skill://a/b#frag", BadURI},
		{"skill://a?x", BadURI},
		{"skill://user@a/b", BadURI},
		{"skill://a:80/b", BadURI},
		{"skill://[::1]/b", BadURI},
		// Bad percent-encoding.
		{"skill://a/%zz", BadURI},
		{"skill://a/%4", BadURI},
		{"skill://a/b%", BadURI},
		{"skill://%/b", BadURI},
		// Raw characters RFC 3986 forbids.
		{"skill://a/b c", BadURI},
		{"skill://a/b\"c", BadURI},
		{"skill://a/b<c", BadURI},
		{"skill://a/b>c", BadURI},
		{"skill://a/b\\c", BadURI},
		{"skill://a\\b/c", BadURI},
		{"skill://a/b^c", BadURI},
		{"skill://a/b`c", BadURI},
		{"skill://a/b{c", BadURI},
		{"skill://a/b|c", BadURI},
		{"skill://a/b}c", BadURI},
		{"skill://a/b\x00c", BadURI},
		{"skill://a/b\x01c", BadURI},
		{"skill://a/b\x7fc", BadURI},
		{"skill://a/b\nc", BadURI},
		{"skill://a/\xff", BadURI},
		// Segments, after decoding.
		{"skill://a//b", BadSegment},
		{"skill://a/", BadSegment},
		{"skill://a/b/", BadSegment},
		{"skill://a/./b", BadSegment},
		{"skill://a/../b", BadSegment},
		{"skill://a/..", BadSegment},
		{"skill://a/%2e%2e/b", BadSegment},
		{"skill://a/%2E%2E", BadSegment},
		{"skill://a/.%2e/b", BadSegment},
		{"skill://a/%2e/b", BadSegment},
		{"skill://a/x%2Fy", BadSegment},
		{"skill://a/x%2fy", BadSegment},
		{"skill://a/x%5Cy", BadSegment},
		{"skill://a/%00", BadSegment},
		{"skill://a/x%01", BadSegment},
		{"skill://a/x%1F", BadSegment},
		{"skill://a/x%7F", BadSegment},
		{"skill://a/x%C2%85", BadSegment}, // U+0085, a C1 control
		{"skill://a/x\u0085", BadSegment}, // raw C1
		{"skill://a/%FF", BadSegment},     // invalid UTF-8 once decoded
		{"skill://a/%C0%AE%C0%AE", BadSegment},
		{"skill://a/x%E2%80%AEy", BadSegment}, // U+202E RLO
		{"skill://a/x\u202ey", BadSegment},
		{"skill://a/x\u2066y", BadSegment},
		{"skill://a/x%F3%A0%80%81", BadSegment}, // U+E0001 tag
		{"skill://a/x%E2%80%8By", BadSegment},   // ZWSP
		{"skill://a/x%EF%BB%BFy", BadSegment},   // BOM
		{"skill://%2e%2e/x", BadSegment},
		{"skill://./x", BadSegment},
		{"skill://../x", BadSegment},
		{"skill://%2F/x", BadSegment},
		{"skill://%00/x", BadSegment},
		// Lengths and depth.
		{"skill://a/" + long, TooLong},
		{"skill://" + long + "/x", TooLong},
		{"skill://a/" + strings.Repeat("%78", 256), TooLong},
		{"skill://a/" + strings.Repeat("b/", 2100) + "c", TooLong},
		// Within 4096 bytes raw, but its canonical form is longer.
		{"skill://a/" + strings.Repeat(strings.Repeat("é", 100)+"/", 15) + "x", TooLong},
		{deep, TooDeep},
		{"skill://a" + strings.Repeat("/%64", MaxDepth), TooDeep},
		// Reserved @scheme namespace.
		{"skill://%40github/x", ReservedName},
		{"skill://%40/x", ReservedName},
	}
	for _, tt := range tests {
		u, err := ParseURI(tt.in)
		if got := ReasonOf(err); got != tt.want {
			t.Errorf("ParseURI(%q) = %#v, %v; want reason %q", tt.in, u, err, tt.want)
		}
		if err != nil && !reflect.DeepEqual(u, URI{}) {
			t.Errorf("ParseURI(%q) returned %#v with an error", tt.in, u)
		}
	}
}

func TestParseURIBounds(t *testing.T) {
	// The limits themselves are accepted.
	ok := []string{
		"skill://a/" + strings.Repeat("x", MaxSegmentLength),
		"skill://" + strings.Repeat("x", MaxSegmentLength),
		"skill://a" + strings.Repeat("/d", MaxDepth-1),
	}
	// Exactly MaxURILength bytes.
	exact := "skill://a/"
	for len(exact)+201 < MaxURILength {
		exact += strings.Repeat("y", 200) + "/"
	}
	exact += strings.Repeat("z", MaxURILength-len(exact))
	ok = append(ok, exact)
	for _, s := range ok {
		u, err := ParseURI(s)
		if err != nil {
			t.Errorf("ParseURI(%d bytes, depth %d): %v", len(s), strings.Count(s, "/")-1, err)
			continue
		}
		checkRoundTrips(t, u)
	}
	if _, err := ParseURI(exact + "z"); ReasonOf(err) != TooLong {
		t.Errorf("ParseURI(%d bytes) = %v, want too-long", len(exact)+1, err)
	}

	// The canonical form is bounded too, exactly: raw non-ASCII triples in
	// length once percent-encoded.
	raw := "skill://a"
	for i := 0; i < 16; i++ {
		raw += "/" + strings.Repeat("é", 40) // 80 bytes raw, 240 canonical
	}
	raw += "/" + strings.Repeat("x", MaxURILength-(9+16*241)-1)
	u, err := ParseURI(raw)
	if err != nil || len(u.String()) != MaxURILength {
		t.Fatalf("ParseURI(%d raw bytes) = %v; canonical %d bytes", len(raw), err, len(u.String()))
	}
	if _, err := ParseURI(raw + "x"); ReasonOf(err) != TooLong || len(raw) >= MaxURILength/2 {
		t.Errorf("ParseURI(%d raw bytes, %d canonical) = %v, want too-long", len(raw)+1, MaxURILength+1, err)
	}
}

func TestCanonicalIdentity(t *testing.T) {
	same := [][]string{
		{"skill://a/x", "skill://a/%78", "SKILL://a/x", "Skill://a/%78"},
		{"skill://a/caf%C3%A9", "skill://a/café", "skill://a/caf%c3%a9"},
		{"skill://a/%21", "skill://a/!"},
	}
	for _, group := range same {
		var first string
		for i, s := range group {
			u, err := ParseURI(s)
			if err != nil {
				t.Fatalf("ParseURI(%q): %v", s, err)
			}
			if i == 0 {
				first = u.String()
			} else if u.String() != first {
				t.Errorf("%q canonicalises to %q, %q to %q; want the same", group[0], first, s, u.String())
			}
		}
	}
	differ := [][2]string{
		{"skill://a/x", "skill://A/x"}, // authority case is kept
		{"skill://a/x", "skill://a/X"},
		{"skill://a/x", "other://a/x"},
		{"skill://a/b/c", "skill://a/b%2Fc"}, // rejected anyway, see below
	}
	for _, d := range differ[:3] {
		u, _ := ParseURI(d[0])
		v, _ := ParseURI(d[1])
		if u.String() == v.String() || u.Equal(v) || u.Path() == v.Path() {
			t.Errorf("%q and %q are one resource or one path; want distinct", d[0], d[1])
		}
	}
	if _, err := ParseURI(differ[3][1]); ReasonOf(err) != BadSegment {
		t.Errorf("ParseURI(%q) = %v, want bad-segment", differ[3][1], err)
	}
}

func TestURIFromPath(t *testing.T) {
	ok := map[string]URI{
		"a":                 {"skill", "a", nil},
		"a/b/SKILL.md":      {"skill", "a", []string{"b", "SKILL.md"}},
		"@github/o/r/F":     {"github", "o", []string{"r", "F"}},
		"@github/o":         {"github", "o", nil},
		"@github/@o/x":      {"github", "@o", []string{"x"}},
		"a/with space/q?#%": {"skill", "a", []string{"with space", "q?#%"}},
		"a/café":            {"skill", "a", []string{"café"}},
	}
	for p, want := range ok {
		u, err := URIFromPath(p)
		if err != nil || !reflect.DeepEqual(u, want) {
			t.Errorf("URIFromPath(%q) = %#v, %v; want %#v", p, u, err, want)
			continue
		}
		if u.Path() != p {
			t.Errorf("URIFromPath(%q).Path() = %q", p, u.Path())
		}
		checkRoundTrips(t, u)
	}
	bad := []struct {
		p    string
		want Reason
	}{
		{"", BadSegment},
		{"/a", BadSegment},
		{"a/", BadSegment},
		{"a//b", BadSegment},
		{"a/./b", BadSegment},
		{"a/../b", BadSegment},
		{"..", BadSegment},
		{"a/b\\c", BadSegment},
		{"a/b\x00", BadSegment},
		{"a/b\x1b[31m", BadSegment},
		{"a/\xff", BadSegment},
		{"a/" + strings.Repeat("x", 256), TooLong},
		{"a" + strings.Repeat("/d", MaxDepth), TooDeep},
		{"@skill/a/b", ReservedName},
		{"@GitHub/o/r", BadURI},
		{"@github", BadURI},
		{"@/x", BadURI},
		{"@1x/y", BadURI},
		{"@file/etc/passwd", BadScheme},
		{"@http/h/x", BadScheme},
	}
	for _, tt := range bad {
		u, err := URIFromPath(tt.p)
		if ReasonOf(err) != tt.want {
			t.Errorf("URIFromPath(%q) = %#v, %v; want reason %q", tt.p, u, err, tt.want)
		}
	}
}

// The skill namespace and the @scheme namespace never meet: a skill
// authority that would sit beside "@github" is rejected, so no two valid
// URIs share a path.
func TestPathCollisionFree(t *testing.T) {
	uris := []string{
		"skill://github/o/r", "github://o/r", "skill://%40github/o/r",
		"skill://a/b", "skill://a%2Fb", "skill://A/b", "other://a/b", "skill://a/b/c",
	}
	paths := map[string]string{}
	for _, s := range uris {
		u, err := ParseURI(s)
		if err != nil {
			continue
		}
		if prev, ok := paths[u.Path()]; ok {
			t.Errorf("%q and %q share the path %q", prev, s, u.Path())
		}
		paths[u.Path()] = s
	}
	if len(paths) != 6 {
		t.Errorf("got %d valid URIs, want 6: %v", len(paths), paths)
	}
}

func TestURINavigation(t *testing.T) {
	u, err := ParseURI("skill://acme/billing/refunds/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	if u.Name() != "SKILL.md" || u.Depth() != 4 {
		t.Errorf("Name, Depth = %q, %d; want SKILL.md, 4", u.Name(), u.Depth())
	}
	dir, ok := u.Parent()
	if !ok || dir.String() != "skill://acme/billing/refunds" || dir.Name() != "refunds" {
		t.Fatalf("Parent = %v, %v", dir, ok)
	}
	if !u.Within(dir) || dir.Within(u) || dir.Within(dir) || u.Within(u) {
		t.Errorf("Within is not a strict prefix relation")
	}
	root := dir
	for {
		p, ok := root.Parent()
		if !ok {
			break
		}
		if !root.Within(p) {
			t.Errorf("%v not within its parent %v", root, p)
		}
		root = p
	}
	if root.String() != "skill://acme" || root.Name() != "acme" || root.Depth() != 1 || root.Segments != nil {
		t.Errorf("root = %#v", root)
	}
	if !u.Within(root) {
		t.Errorf("%v not within %v", u, root)
	}
	// Parent must not alias the child's segments.
	p, _ := u.Parent()
	c, err := p.Child("other.md")
	if err != nil {
		t.Fatal(err)
	}
	if u.Name() != "SKILL.md" || c.String() != "skill://acme/billing/refunds/other.md" {
		t.Errorf("Child aliased its parent: u=%v c=%v", u, c)
	}
	for _, tt := range []struct {
		other string
		in    bool
	}{
		{"skill://acme/billing/refunds/x/y", true},
		{"skill://acme/billing/refundsx/y", false},
		{"skill://acme/billing/x", false},
		{"other://acme/billing/refunds/x", false},
		{"skill://Acme/billing/refunds/x", false},
		{"skill://acme/billing/refunds", false},
	} {
		o, err := ParseURI(tt.other)
		if err != nil {
			t.Fatal(err)
		}
		if o.Within(dir) != tt.in {
			t.Errorf("%q.Within(%v) = %v, want %v", tt.other, dir, !tt.in, tt.in)
		}
	}
	for _, tt := range []struct {
		name string
		want Reason
	}{
		{"", BadSegment},
		{".", BadSegment},
		{"..", BadSegment},
		{"a/b", BadSegment},
		{"a\\b", BadSegment},
		{"a\x00", BadSegment},
		{strings.Repeat("n", 256), TooLong},
	} {
		if _, err := dir.Child(tt.name); ReasonOf(err) != tt.want {
			t.Errorf("Child(%q) = %v, want %q", tt.name, err, tt.want)
		}
	}
	deep, _ := ParseURI("skill://a" + strings.Repeat("/d", MaxDepth-1))
	if _, err := deep.Child("x"); ReasonOf(err) != TooDeep {
		t.Errorf("Child beyond MaxDepth = %v, want too-deep", err)
	}
	if _, ok := (URI{}).Parent(); ok {
		t.Errorf("zero URI has a parent")
	}
	if (URI{}).String() != "" {
		t.Errorf("zero URI String() = %q", URI{}.String())
	}
}

func TestErrorType(t *testing.T) {
	_, err := ParseURI("file:///etc/passwd")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T is not *Error", err)
	}
	if e.Subject != "file:///etc/passwd" || e.Detail == "" {
		t.Errorf("error = %#v", e)
	}
	if got := err.Error(); !strings.HasPrefix(got, "bad-scheme: file:///etc/passwd: ") {
		t.Errorf("Error() = %q", got)
	}
	wrapped := errors.Join(errors.New("read"), err)
	if !errors.Is(wrapped, &Error{Reason: BadScheme}) || errors.Is(wrapped, &Error{Reason: BadURI}) {
		t.Errorf("errors.Is does not match on Reason alone")
	}
	if ReasonOf(wrapped) != BadScheme || ReasonOf(errors.New("x")) != "" || ReasonOf(nil) != "" {
		t.Errorf("ReasonOf wrong")
	}
	if got := WithSubject(err, "acme: x"); ReasonOf(got) != BadScheme || got.(*Error).Subject != "acme: x" || e.Subject != "file:///etc/passwd" {
		t.Errorf("WithSubject = %#v, original now %#v", got, e)
	}
	if plain := errors.New("x"); WithSubject(plain, "s") != plain {
		t.Errorf("WithSubject changed a foreign error")
	}
	// Subjects from servers are safe to print.
	_, err = ParseURI("skill://a/\x1b[31mred\u202e" + strings.Repeat("z", 1000))
	s := err.(*Error).Subject
	if strings.ContainsAny(s, "\x1b\u202e") || len(s) > maxSubject+10 {
		t.Errorf("unsafe subject %q", s)
	}
	if (&Error{Reason: BadURI}).Error() != "bad-uri" {
		t.Errorf("empty parts not left out: %q", (&Error{Reason: BadURI}).Error())
	}
}
