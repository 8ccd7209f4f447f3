package hostile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"

	"github.com/skillfs/skillfs/integration/hostile"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/testkit"
)

// TestListing lists a server with every fixture and checks that it lists
// exactly what Describe says, honest skills first, and that skills/get
// answers the same entry for each.
func TestListing(t *testing.T) {
	for _, era := range []string{eraOld, eraNew} {
		t.Run(era, func(t *testing.T) {
			cs := connect(t, newServer(t, hostile.Options{}), era)
			raws, cursors := listAll(t, cs, 100)
			var want []skill.Entry
			for _, f := range append([]string{hostile.HonestA, hostile.HonestB}, hostile.Fixtures()...) {
				skills, err := hostile.Describe(f, "")
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range skills {
					want = append(want, s.Entry)
				}
			}
			if len(raws) != len(want) {
				t.Fatalf("listed %d entries, want %d", len(raws), len(want))
			}
			if len(cursors) < 2 {
				t.Errorf("the listing took %d pages; want paging to be exercised", len(cursors)+1)
			}
			for i, raw := range raws {
				got := decodeEntry(t, raw)
				if g, w := mustJSON(t, got), mustJSON(t, want[i]); g != w {
					t.Errorf("entry %d:\n got %.400s\nwant %.400s", i, g, w)
				}
				e, err := getSkill(t.Context(), cs, got.URI)
				if err != nil {
					t.Errorf("skills/get %s: %v", got.URI, err)
				} else if g, w := mustJSON(t, e), mustJSON(t, got); g != w {
					t.Errorf("skills/get %s differs from the listing:\n got %.400s\nwant %.400s", got.URI, g, w)
				}
			}
			if _, err := getSkill(t.Context(), cs, "skill://nowhere/SKILL.md"); !isCode(err, jsonrpc.CodeInvalidParams) {
				t.Errorf("skills/get of an unknown skill: %v, want -32602", err)
			}
			if _, err := mcp.CallCustomMethod[*listParams, *listResult](t.Context(), cs, "skills/list", &listParams{Cursor: "bogus"}); !isCode(err, jsonrpc.CodeInvalidParams) {
				t.Errorf("skills/list with a bogus cursor: %v, want -32602", err)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFixtureReads serves each fixture alone, reads every file it serves
// with a go-sdk client (or, for the few texts of MiBs, streams it) and
// checks, recomputing sha256 and sizes on the client, that honest files
// are honest and each misbehaving one misbehaves exactly as its Behaviour
// says.
func TestFixtureReads(t *testing.T) {
	for _, fixture := range append([]string{hostile.HonestA, hostile.HonestB}, hostile.Fixtures()...) {
		t.Run(fixture, func(t *testing.T) {
			t.Parallel()
			var exited atomic.Int32
			opts := hostile.Options{Fixtures: []string{fixture}}
			if fixture == hostile.DieMidRead {
				opts.Exit = func(code int) { exited.Store(int32(code)) }
				opts.Logger = testLogger(t)
			}
			s := newServer(t, opts)
			cs := connect(t, s, eraNew)
			// Big texts are streamed on a session of their own
			// (stream_test.go), opened on the first.
			var rc *rawClient
			raw := func() *rawClient {
				if rc == nil {
					rc = rawSession(t, s)
				}
				return rc
			}
			raws, _ := listAll(t, cs, 10)
			listed := map[string]skill.Entry{}
			for _, raw := range raws {
				e := decodeEntry(t, raw)
				listed[e.URI] = e
			}
			skills, err := hostile.Describe(fixture, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, sk := range skills {
				e, ok := listed[sk.Entry.URI]
				if !ok {
					t.Fatalf("%s is not listed", sk.Entry.URI)
				}
				for _, f := range sk.Files {
					checkFile(t, cs, raw, e, f)
				}
			}
			if fixture == hostile.DieMidRead {
				if got := exited.Load(); got != hostile.ExitDied {
					t.Errorf("exit code %d, want %d", got, hostile.ExitDied)
				}
				if _, err := read(t.Context(), cs, "skill://honest-a/SKILL.md"); err == nil {
					t.Error("the session still answers after the server died")
				}
			}
		})
	}
}

// sameAsRead are big generated files served exactly as one the tests do
// read, budget-1's big.txt: filler of a URI's label (640 KiB for the
// budget files, 6 MiB for declared-total-over's parts), served honest;
// reading 6 MiB through JSON costs seconds under the race detector. Their
// listing's digests and sizes are still checked against the honest bytes.
var sameAsRead = map[string]bool{
	"skill://budget-2/big.txt":                     true,
	"skill://budget-3/big.txt":                     true,
	"skill://declared-total-over/parts/part-1.txt": true,
	"skill://declared-total-over/parts/part-2.txt": true,
	"skill://declared-total-over/parts/part-3.txt": true,
}

// streamedSize is the size over which checkFile streams a text
// (rawClient.readText) rather than read it whole with go-sdk.
const streamedSize = 1 << 20

// checkFile reads f and checks it against its Behaviour and entry e, on
// cs or, for a big text, on the session raw returns.
func checkFile(t *testing.T, cs *mcp.ClientSession, raw func() *rawClient, e skill.Entry, f hostile.File) {
	t.Helper()
	ctx := t.Context()
	// The honest bytes' size and digest, and the bytes themselves of a
	// file read whole: a big one is only summed, as it is read.
	sum := newTextSum()
	if _, err := f.WriteTo(sum); err != nil {
		t.Fatal(err)
	}
	var honest []byte
	if sum.size <= streamedSize {
		honest = f.Bytes()
	}
	r, inManifest := e.Resource(f.URI)
	if e.Manifest == skill.Listed && inManifest != f.Listed {
		t.Errorf("%s: in resources %v, want %v", f.URI, inManifest, f.Listed)
	}
	// old-revision lists no sizes: only the digest describes the bytes.
	sizeOK := func(n int) bool { return !r.HasSize || int64(n) == r.Size }
	if inManifest && (sum.digest() != r.Digest || !sizeOK(int(sum.size))) {
		t.Errorf("%s: the listing's digest and size do not describe the honest bytes", f.URI)
	}
	if inManifest && r.HasSize == (e.URI == "skill://old-revision/SKILL.md") {
		t.Errorf("%s: size present %v; only old-revision leaves sizes out", f.URI, r.HasSize)
	}
	matches := func(b []byte) bool { return sha(b) == r.Digest && sizeOK(len(b)) }

	switch f.Behaviour {
	case hostile.Honest, hostile.Phased, hostile.Restarted, hostile.DiesWhenDying:
		if sameAsRead[f.URI] {
			return
		}
		if honest == nil {
			got, err := raw().readText(f.URI)
			if err != nil {
				t.Errorf("read %s: %v", f.URI, err)
				return
			}
			if d := got.digest(); got.size != sum.size || d != sum.digest() || (inManifest && (d != r.Digest || !sizeOK(int(got.size)))) {
				t.Errorf("read %s: %d bytes, not the honest %d", f.URI, got.size, sum.size)
			}
			if f.URI == e.URI {
				checkFrontmatter(t, e, got.head)
			}
			return
		}
		got, err := read(ctx, cs, f.URI)
		if err != nil {
			t.Errorf("read %s: %v", f.URI, err)
			return
		}
		if !bytes.Equal(got, honest) || (inManifest && !matches(got)) {
			t.Errorf("read %s: %d bytes, not the honest %d", f.URI, len(got), len(honest))
		}
		if f.URI == e.URI {
			checkFrontmatter(t, e, got)
		}
	case hostile.Tampered:
		got, err := read(ctx, cs, f.URI)
		if err != nil || int64(len(got)) != r.Size || sha(got) == r.Digest {
			t.Errorf("read %s: %d bytes (err %v), want %d bytes that do not match the digest", f.URI, len(got), err, r.Size)
		}
	case hostile.Longer:
		got, err := read(ctx, cs, f.URI)
		if err != nil || int64(len(got)) <= r.Size || sha(got[:r.Size]) != r.Digest {
			t.Errorf("read %s: %d bytes (err %v), want the %d declared ones and more", f.URI, len(got), err, r.Size)
		}
	case hostile.Shorter:
		got, err := read(ctx, cs, f.URI)
		if err != nil || int64(len(got)) >= r.Size || !bytes.HasPrefix(honest, got) {
			t.Errorf("read %s: %d bytes (err %v), want a prefix shorter than %d", f.URI, len(got), err, r.Size)
		}
	case hostile.Rotated:
		var reads [][]byte
		for range 3 {
			got, err := read(ctx, cs, f.URI)
			if err != nil {
				t.Fatalf("read %s: %v", f.URI, err)
			}
			reads = append(reads, got)
		}
		if !matches(reads[0]) {
			t.Errorf("read %s: the first read is not honest", f.URI)
		}
		for i, b := range reads[1:] {
			if int64(len(b)) != r.Size || matches(b) {
				t.Errorf("read %s #%d: %d bytes, want %d that do not match the digest", f.URI, i+2, len(b), r.Size)
			}
		}
		if bytes.Equal(reads[1], reads[2]) {
			t.Errorf("read %s: the second and third reads are equal; want a new rotation each time", f.URI)
		}
	case hostile.Slow:
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err := read(short, cs, f.URI)
		cancel()
		if err == nil {
			t.Errorf("read %s answered within 200ms; want %v", f.URI, hostile.SlowReadDelay)
		}
		got, err := read(ctx, cs, f.URI)
		if err != nil || !matches(got) {
			t.Errorf("read %s: %v, want the honest bytes eventually", f.URI, err)
		}
	case hostile.Hang:
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err := read(short, cs, f.URI)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("read %s: %v, want no answer before the deadline", f.URI, err)
		}
		if _, err := read(ctx, cs, "skill://honest-a/SKILL.md"); err != nil {
			t.Errorf("after the hung read, the session no longer works: %v", err)
		}
	case hostile.Die:
		if _, err := read(ctx, cs, f.URI); err == nil {
			t.Errorf("read %s answered; want the server to die", f.URI)
		}
	case hostile.BadBase64:
		if _, err := read(ctx, cs, f.URI); err == nil || !strings.Contains(err.Error(), "base64") {
			t.Errorf("read %s: %v, want a base64 decoding error", f.URI, err)
		}
		if _, err := read(ctx, cs, e.URI); err != nil {
			t.Errorf("after the bad blob, the session no longer works: %v", err)
		}
	case hostile.WrongURI:
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: f.URI})
		if err != nil || len(res.Contents) != 1 || res.Contents[0].URI == f.URI || res.Contents[0].Text != string(honest) {
			t.Errorf("read %s: %v, want the honest bytes under another URI", f.URI, err)
		}
	case hostile.TwoContents:
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: f.URI})
		if err != nil || len(res.Contents) != 2 {
			t.Fatalf("read %s: %v, want two contents", f.URI, err)
		}
		for _, c := range res.Contents {
			if c.URI != f.URI || !matches([]byte(c.Text)) {
				t.Errorf("read %s: a content for %s that is not the honest bytes", f.URI, c.URI)
			}
		}
	case hostile.HugeText:
		got, err := raw().readText(f.URI)
		if err != nil || got.size != hostile.MalformedHugeTextSize || r.Size != 10 {
			t.Errorf("read %s: %v, or not %d bytes for a declared size of %d", f.URI, err, hostile.MalformedHugeTextSize, r.Size)
		}
	case hostile.TextAndBlob:
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: f.URI})
		if err != nil || len(res.Contents) != 1 || !matches([]byte(res.Contents[0].Text)) || !matches(res.Contents[0].Blob) {
			t.Errorf("read %s: %v, want the honest bytes as text and as blob", f.URI, err)
		}
	default:
		t.Errorf("%s: no check for behaviour %q", f.URI, f.Behaviour)
	}
}

// checkFrontmatter parses a served SKILL.md's frontmatter with yaml.v3 and
// compares it with the entry's, in the JSON data model. Only
// frontmatter-mismatch may differ, and only in its description.
func checkFrontmatter(t *testing.T, e skill.Entry, md []byte) {
	t.Helper()
	rest, ok := bytes.CutPrefix(md, []byte("---\n"))
	block, _, found := bytes.Cut(rest, []byte("\n---\n"))
	if !ok || !found {
		t.Errorf("%s: no frontmatter block", e.URI)
		return
	}
	var fm map[string]any
	if err := yaml.Unmarshal(block, &fm); err != nil {
		t.Errorf("%s: frontmatter: %v", e.URI, err)
		return
	}
	got, want := mustJSON(t, fm), mustJSON(t, e.Frontmatter)
	if strings.HasPrefix(e.URI, "skill://frontmatter-mismatch/") {
		if got == want || fm["description"] == e.Frontmatter["description"] {
			t.Errorf("%s: the served frontmatter matches the listing; want another description", e.URI)
		}
		fm["description"] = e.Frontmatter["description"]
		got = mustJSON(t, fm)
	}
	if got != want {
		t.Errorf("%s: served frontmatter %s, listed %s", e.URI, got, want)
	}
}

// TestFixtureShapes checks what each fixture's entries say on the wire.
func TestFixtureShapes(t *testing.T) {
	cs := connect(t, newServer(t, hostile.Options{}), eraNew)
	raws, _ := listAll(t, cs, 100)
	byURI := map[string]skill.Entry{}
	rawByURI := map[string]map[string]json.RawMessage{}
	for _, raw := range raws {
		e := decodeEntry(t, raw)
		byURI[e.URI] = e
		var m map[string]json.RawMessage
		json.Unmarshal(raw, &m)
		rawByURI[e.URI] = m
	}
	entry := func(uri string) skill.Entry {
		t.Helper()
		e, ok := byURI[uri]
		if !ok {
			t.Fatalf("%s is not listed", uri)
		}
		return e
	}
	hasResource := func(uri, res string) {
		t.Helper()
		e := entry(uri)
		if _, ok := e.Resource(res); !ok {
			t.Errorf("%s: %s is not in resources", uri, res)
		}
	}
	hasResource("skill://file-uri-triple/SKILL.md", "file:///etc/passwd")
	hasResource("skill://file-uri-noauth/SKILL.md", "file:/etc/passwd")
	hasResource("skill://outside-dotdot/SKILL.md", "skill://outside-dotdot/../other/SKILL.md")
	hasResource("skill://outside-dotdot-encoded/SKILL.md", "skill://outside-dotdot-encoded/%2e%2e/other/SKILL.md")
	hasResource("skill://outside-authority/SKILL.md", "skill://someone-else/x.md")
	hasResource("skill://outside-scheme/SKILL.md", "other://outside-scheme/x.md")
	hasResource("skill://case-collision/SKILL.md", "skill://case-collision/Skill.md")

	if nm := entry("skill://name-mismatch/SKILL.md"); nm.Name() != "renamed-skill" {
		t.Errorf("name-mismatch: frontmatter.name %q", nm.Name())
	}
	oversize := entry("skill://oversize-skillmd/SKILL.md")
	if r, _ := oversize.Resource(oversize.URI); r.Size != 16<<20+1<<10 {
		t.Errorf("oversize-skillmd: SKILL.md size %d", r.Size)
	}
	if n := len(entry("skill://too-many-resources/SKILL.md").Resources); n != 513 {
		t.Errorf("too-many-resources: %d resources", n)
	}
	var total int64
	for _, r := range entry("skill://declared-total-over/SKILL.md").Resources {
		if r.Size > 16<<20 {
			t.Errorf("declared-total-over: %s alone is over 16 MiB", r.URI)
		}
		total += r.Size
	}
	if total <= 16<<20 {
		t.Errorf("declared-total-over: %d bytes in total, want more than 16 MiB", total)
	}
	for _, b := range []string{"budget-1", "budget-2", "budget-3"} {
		e := entry("skill://" + b + "/SKILL.md")
		if r, _ := e.Resource("skill://" + b + "/big.txt"); r.Size != 640<<10 {
			t.Errorf("%s: big.txt is %d bytes", b, r.Size)
		}
	}
	if got := string(rawByURI["skill://dynamic/SKILL.md"]["resources"]); got != `"dynamic"` {
		t.Errorf("dynamic: resources %s", got)
	}
	if _, ok := rawByURI["skill://no-resources/SKILL.md"]["resources"]; ok {
		t.Error("no-resources: the entry has resources")
	}
	if got := mustJSON(t, entry("skill://allowed-tools/SKILL.md").Frontmatter["allowed-tools"]); got != `["Bash","Write"]` {
		t.Errorf("allowed-tools: %s", got)
	}
	inner := entry("skill://nested-outer/inner-tools/SKILL.md")
	for _, k := range []string{"allowed-tools", "hooks"} {
		if inner.Frontmatter[k] == nil {
			t.Errorf("nested-outer/inner-tools: no %s", k)
		}
	}
	outer := entry("skill://nested-outer/SKILL.md")
	for _, r := range inner.Resources {
		if o, ok := outer.Resource(r.URI); !ok || o != r {
			t.Errorf("nested-outer does not list the nested file %s as the nested skill does", r.URI)
		}
	}
	a, b := entry("skill://team-a/dupe/SKILL.md"), entry("skill://team-b/dupe/SKILL.md")
	if a.Name() != "dupe" || b.Name() != "dupe" || a.Resources[0].Digest == b.Resources[0].Digest {
		t.Errorf("same-name: %q and %q, want two different skills named dupe", a.Name(), b.Name())
	}

	md, err := read(t.Context(), cs, "skill://tag-chars/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	tags := 0
	for _, r := range string(md) {
		if r >= 0xE0000 && r <= 0xE007F {
			tags++
		}
	}
	if tags < 20 || !bytes.Contains(md, []byte("<!--")) || !utf8.Valid(md) {
		t.Errorf("tag-chars: %d tag characters, HTML comment %v", tags, bytes.Contains(md, []byte("<!--")))
	}
}

// TestDirectoryReads checks resources/directory/read: real trees, the
// unlisted file, the escaping children and the endless cursor.
func TestDirectoryReads(t *testing.T) {
	cs := connect(t, newServer(t, hostile.Options{PageSize: 5}), eraNew)
	ctx := t.Context()
	readDir := func(uri string) []string {
		t.Helper()
		var out []string
		cursor := ""
		for range 200 {
			res, err := mcp.CallCustomMethod[*dirParams, *dirResult](ctx, cs, "resources/directory/read", &dirParams{URI: uri, Cursor: cursor})
			if err != nil {
				t.Fatalf("directory read %s: %v", uri, err)
			}
			for _, r := range res.Resources {
				name := r.URI
				if r.MIMEType == "inode/directory" {
					name += "/"
				}
				out = append(out, name)
			}
			if res.NextCursor == "" {
				return out
			}
			cursor = res.NextCursor
		}
		t.Fatalf("directory read %s did not end", uri)
		return nil
	}
	for _, tc := range []struct {
		dir  string
		want []string
	}{
		{"skill://honest-a", []string{"skill://honest-a/SKILL.md", "skill://honest-a/references/", "skill://honest-a/scripts/"}},
		{"skill://honest-a/references", []string{"skill://honest-a/references/guide.md"}},
		{"skill://team-a", []string{"skill://team-a/dupe/"}},
		{"skill://unlisted-file", []string{"skill://unlisted-file/SKILL.md", "skill://unlisted-file/listed.md", "skill://unlisted-file/unlisted.md"}},
		{"skill://nested-outer", []string{"skill://nested-outer/SKILL.md", "skill://nested-outer/guide.md", "skill://nested-outer/inner-tools/"}},
		{"skill://escaping-children", []string{
			"skill://escaping-children/SKILL.md", "skill://escaping-children/notes.md", "skill://escaping-children/sub/",
			"skill://escaping-children/../etc/", "file:///etc/", "skill://other/x", "skill://honest-a/SKILL.md", "skill://escaping-children/sub/deeper.md",
		}},
	} {
		if got := readDir(tc.dir); !slices.Equal(got, tc.want) {
			t.Errorf("directory read %s:\n got %q\nwant %q", tc.dir, got, tc.want)
		}
	}
	if n := len(readDir("skill://too-many-resources/files")); n != 512 {
		t.Errorf("too-many-resources/files: %d children over pages of 5", n)
	}
	for _, uri := range []string{"skill://honest-a/SKILL.md", "skill://nowhere", "file:///etc"} {
		if _, err := mcp.CallCustomMethod[*dirParams, *dirResult](ctx, cs, "resources/directory/read", &dirParams{URI: uri}); !isCode(err, jsonrpc.CodeInvalidParams) {
			t.Errorf("directory read %s: %v, want -32602", uri, err)
		}
	}

	seen := map[string]bool{}
	cursor := ""
	for page := range 20 {
		res, err := mcp.CallCustomMethod[*dirParams, *dirResult](ctx, cs, "resources/directory/read", &dirParams{URI: "skill://endless-dir-cursor", Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if res.NextCursor == "" || seen[res.NextCursor] || len(res.Resources) != 2 {
			t.Fatalf("endless-dir-cursor page %d: cursor %q (seen %v), %d children", page, res.NextCursor, seen[res.NextCursor], len(res.Resources))
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
}

// TestStale flips the state file through the three phases and checks what
// skills/list, skills/get and resources/read say in each, on one session.
func TestStale(t *testing.T) {
	state := t.TempDir() + "/state.json"
	cs := connect(t, newServer(t, hostile.Options{Fixtures: []string{hostile.Stale}, StateFile: state}), eraNew)
	ctx := t.Context()
	skills, _ := hostile.Describe(hostile.Stale, "")
	data := skills[0].Files[1]
	a, b := data.Bytes(), data.Updated()
	if data.URI != "skill://stale/data.txt" || bytes.Equal(a, b) || b == nil {
		t.Fatalf("stale: %s, content A %q, B %q", data.URI, a, b)
	}
	digest := func(e skill.Entry) skill.Digest {
		r, _ := e.Resource(data.URI)
		return r.Digest
	}
	for _, tc := range []struct {
		phase              string
		list, get, content []byte
	}{
		{"", a, a, a}, // no state file
		{"a", a, a, a},
		{"b", a, a, b},
		{"c", a, b, b},
		{"a", a, a, a},
	} {
		if tc.phase != "" {
			if err := hostile.WriteState(state, hostile.State{Phase: tc.phase}); err != nil {
				t.Fatal(err)
			}
		}
		raws, _ := listAll(t, cs, 10)
		var listed skill.Entry
		for _, raw := range raws {
			if e := decodeEntry(t, raw); e.URI == "skill://stale/SKILL.md" {
				listed = e
			}
		}
		got, err := getSkill(ctx, cs, "skill://stale/SKILL.md")
		if err != nil {
			t.Fatal(err)
		}
		content, err := read(ctx, cs, data.URI)
		if err != nil {
			t.Fatal(err)
		}
		if digest(listed) != sha(tc.list) || digest(got) != sha(tc.get) || !bytes.Equal(content, tc.content) {
			t.Errorf("phase %q: list advertises A=%v, get A=%v, read %q", tc.phase, digest(listed) == sha(a), digest(got) == sha(a), content)
		}
	}
}

// TestStateFileInvalid: a broken state file keeps the phase last read.
func TestStateFileInvalid(t *testing.T) {
	state := t.TempDir() + "/state.json"
	s := newServer(t, hostile.Options{Fixtures: []string{hostile.Stale}, StateFile: state, Logger: testLogger(t, "state file ignored")})
	cs := connect(t, s, eraNew)
	skills, _ := hostile.Describe(hostile.Stale, "")
	data := skills[0].Files[1]
	if err := hostile.WriteState(state, hostile.State{Phase: "b"}); err != nil {
		t.Fatal(err)
	}
	if got, err := read(t.Context(), cs, data.URI); err != nil || !bytes.Equal(got, data.Updated()) {
		t.Fatalf("phase b: read %q (%v)", got, err)
	}
	for _, broken := range []string{`{"phase":`, `{"phase":"z"}`} {
		if err := writeFile(state, broken); err != nil {
			t.Fatal(err)
		}
		if got, err := read(t.Context(), cs, data.URI); err != nil || !bytes.Equal(got, data.Updated()) {
			t.Errorf("state %s: read %q (%v), want phase b kept", broken, got, err)
		}
	}
}

// TestVariants serves same-uri-other-origin twice: one URI, two contents,
// each honest.
func TestVariants(t *testing.T) {
	var contents [][]byte
	for _, v := range []string{"left", "right"} {
		cs := connect(t, newServer(t, hostile.Options{Fixtures: []string{hostile.SameURIOtherOrigin}, Variant: v}), eraNew)
		e, err := getSkill(t.Context(), cs, "skill://shared/SKILL.md")
		if err != nil {
			t.Fatal(err)
		}
		md, err := read(t.Context(), cs, "skill://shared/SKILL.md")
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := e.Resource(e.URI); r.Digest != sha(md) || !bytes.Contains(md, []byte(v)) {
			t.Errorf("variant %s: SKILL.md not honest or not the variant's: %q", v, md)
		}
		skills, _ := hostile.Describe(hostile.SameURIOtherOrigin, v)
		if !bytes.Equal(skills[0].Files[0].Bytes(), md) {
			t.Errorf("variant %s: Describe disagrees with the server", v)
		}
		contents = append(contents, md)
	}
	if bytes.Equal(contents[0], contents[1]) {
		t.Error("both variants serve the same SKILL.md")
	}
}

func TestNewRefuses(t *testing.T) {
	for _, opts := range []hostile.Options{
		{Fixtures: []string{"no-such-fixture"}},
		{Mode: "no-such-mode"},
	} {
		if _, err := hostile.New(opts); err == nil {
			t.Errorf("New(%+v) succeeded", opts)
		}
	}
	if _, err := hostile.Describe("no-such-fixture", ""); err == nil {
		t.Error("Describe of an unknown fixture succeeded")
	}
	if hostile.Files("no-such-fixture") != nil {
		t.Error("Files of an unknown fixture is not nil")
	}
	if got := hostile.Files(hostile.HonestA); len(got) != 3 || string(got["skill://honest-a/scripts/run.sh"]) != "#!/bin/sh\necho honest-a\n" {
		t.Errorf("Files(honest-a) = %q", got)
	}
}

// TestHangEndsWithServer: a hung read does not keep Serve from returning
// when its context ends (Main's SIGTERM) or the client hangs up, although
// the client never cancels the read.
func TestHangEndsWithServer(t *testing.T) {
	for _, how := range []string{"context", "hang-up"} {
		t.Run(how, func(t *testing.T) {
			access := t.TempDir() + "/access.log"
			s := newServer(t, hostile.Options{Fixtures: []string{hostile.HangRead}, AccessLog: access})
			// go-sdk's ClientSession.Close waits for the hung call, so
			// the client hangs up by closing its end of the pipe.
			c1, c2 := net.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			served := make(chan error, 1)
			go func() { served <- s.Serve(ctx, &mcp.IOTransport{Reader: c1, Writer: c1}) }()
			cs, err := newClient(t).Connect(t.Context(), &mcp.IOTransport{Reader: c2, Writer: c2}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			go read(context.Background(), cs, "skill://hang-read/SKILL.md")
			testkit.WaitFor(t, 5*time.Minute, "the read to reach the server", func() bool {
				log, _ := os.ReadFile(access)
				return bytes.Contains(log, []byte("resources/read skill://hang-read/SKILL.md"))
			})
			if how == "context" {
				cancel()
			} else {
				c2.Close()
			}
			select {
			case err := <-served:
				if err != nil {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(time.Minute):
				t.Fatal("Serve did not return while a read hung")
			}
		})
	}
}
