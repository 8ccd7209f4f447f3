package skillserver_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/verify"
)

// sha256Digest is the test's own digest, independent of the server's code.
func sha256Digest(b []byte) skill.Digest {
	sum := sha256.Sum256(b)
	return skill.Digest("sha256:" + hex.EncodeToString(sum[:]))
}

// relOf decodes a skill:// URI into the slash path below DIR it names.
func relOf(t *testing.T, uri string) string {
	t.Helper()
	rest, ok := strings.CutPrefix(uri, "skill://")
	if !ok {
		t.Fatalf("URI %q is not skill://", uri)
	}
	rel, err := url.PathUnescape(rest)
	if err != nil {
		t.Fatalf("URI %q: %v", uri, err)
	}
	return rel
}

// contentBytes returns the raw bytes of a resources/read result.
func contentBytes(t *testing.T, res *mcp.ReadResourceResult) ([]byte, *mcp.ResourceContents) {
	t.Helper()
	if len(res.Contents) != 1 {
		t.Fatalf("resources/read returned %d contents, want 1", len(res.Contents))
	}
	c := res.Contents[0]
	if c.Blob != nil {
		return c.Blob, c
	}
	return []byte(c.Text), c
}

func listAll(t *testing.T, p *peer) ([]skill.Entry, int) {
	t.Helper()
	var all []skill.Entry
	pages := 0
	cursor := ""
	for page := 0; ; page++ {
		if page > 1000 {
			t.Fatal("more than 1000 pages: the cursor never ends")
		}
		res, err := mcp.CallCustomMethod[*listParams, *listResult](t.Context(), p.cs, "skills/list", &listParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("skills/list (cursor %q): %v", cursor, err)
		}
		pages++
		all = append(all, res.Skills...)
		if res.NextCursor == "" {
			return all, pages
		}
		cursor = res.NextCursor
		if pages > 10000 {
			t.Fatal("skills/list does not end")
		}
	}
}

func wantInvalidParams(t *testing.T, what string, err error) {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("%s: got error %v, want JSON-RPC -32602", what, err)
	}
}

// checkConformance drives a running server as a SEP-2640 host would and
// checks everything it is told against the fixture, with the client's own
// sha256.
func checkConformance(t *testing.T, p *peer, fx *fixture, pageSize int) {
	ctx := t.Context()
	init := p.cs.InitializeResult()
	ext, ok := init.Capabilities.Extensions["io.modelcontextprotocol/skills"].(map[string]any)
	if !ok || ext["directoryRead"] != true {
		t.Fatalf("capabilities.extensions = %#v, want io.modelcontextprotocol/skills with directoryRead true", init.Capabilities.Extensions)
	}

	entries, pages := listAll(t, p)
	if want := (len(fx.skills) + pageSize - 1) / pageSize; pages != want {
		t.Errorf("skills/list took %d pages of %d, want %d", pages, pageSize, want)
	}
	var got []string
	for _, e := range entries {
		got = append(got, strings.TrimSuffix(relOf(t, e.URI), "/SKILL.md"))
	}
	if want := fx.skillFolders(); !slices.Equal(got, want) {
		t.Fatalf("listed skills:\n got %q\nwant %q", got, want)
	}

	served := map[string]bool{} // URIs of every file some skill lists
	for _, e := range entries {
		folder := strings.TrimSuffix(relOf(t, e.URI), "/SKILL.md")
		if !reflect.DeepEqual(e.Frontmatter, fx.skills[folder]) {
			t.Errorf("%s: frontmatter\n got %#v\nwant %#v", e.URI, e.Frontmatter, fx.skills[folder])
		}
		if e.Manifest != skill.Listed {
			t.Fatalf("%s: resources is %v, want a list", e.URI, e.Manifest)
		}
		var rels []string
		for _, r := range e.Resources {
			rels = append(rels, relOf(t, r.URI))
		}
		sort.Strings(rels)
		if want := fx.skillFiles(folder); !slices.Equal(rels, want) {
			t.Errorf("%s: resources\n got %q\nwant %q", e.URI, rels, want)
		}
		for _, r := range e.Resources {
			if !r.HasSize {
				t.Errorf("%s: no size", r.URI)
			}
			served[r.URI] = true
		}

		g, err := mcp.CallCustomMethod[*getParams, *getResult](ctx, p.cs, "skills/get", &getParams{URI: e.URI})
		if err != nil {
			t.Errorf("skills/get %s: %v", e.URI, err)
		} else {
			if !reflect.DeepEqual(g.Skill, e) {
				t.Errorf("skills/get %s differs from the listing:\n get  %#v\n list %#v", e.URI, g.Skill, e)
			}
			checkGetCacheable(t, init.ProtocolVersion, e.URI, g)
		}
	}

	// Read every listed file and verify it as a host must: size first, then
	// sha256, then against the bytes on disk.
	for _, e := range entries {
		for _, r := range e.Resources {
			res, err := p.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
			if err != nil {
				t.Errorf("resources/read %s: %v", r.URI, err)
				continue
			}
			b, c := contentBytes(t, res)
			if int64(len(b)) != r.Size {
				t.Errorf("%s: read %d bytes, listing says %d", r.URI, len(b), r.Size)
			}
			if d := sha256Digest(b); d != r.Digest {
				t.Errorf("%s: read digest %s, listing says %s", r.URI, d, r.Digest)
			}
			if want := fx.files[relOf(t, r.URI)]; string(b) != string(want) {
				t.Errorf("%s: bytes differ from the file on disk", r.URI)
			}
			if strings.HasSuffix(r.URI, "/SKILL.md") && c.MIMEType != "text/markdown" {
				t.Errorf("%s: mimeType %q, want text/markdown", r.URI, c.MIMEType)
			}
			if strings.HasSuffix(r.URI, ".bin") && c.Blob == nil {
				t.Errorf("%s: binary file not sent as a blob", r.URI)
			}
			if strings.HasSuffix(r.URI, ".md") && c.Text == "" {
				t.Errorf("%s: UTF-8 file not sent as text", r.URI)
			}
		}
	}

	// resources/list: every served file, across the SDK's pages.
	listed := map[string]bool{}
	for r, err := range p.cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		listed[r.URI] = true
	}
	if !reflect.DeepEqual(listed, served) {
		t.Errorf("resources/list has %d URIs, the skills list %d", len(listed), len(served))
	}

	// resources/directory/read from every top-level folder down reaches
	// exactly the served files.
	var queue []string
	for uri := range served {
		top := "skill://" + strings.SplitN(strings.TrimPrefix(uri, "skill://"), "/", 2)[0]
		if !slices.Contains(queue, top) {
			queue = append(queue, top)
		}
	}
	walked := map[string]bool{}
	skillMDs := 0
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		cursor := ""
		for page := 0; ; page++ {
			if page > 1000 {
				t.Fatal("more than 1000 pages: the cursor never ends")
			}
			res, err := mcp.CallCustomMethod[*dirParams, *dirResult](ctx, p.cs, "resources/directory/read", &dirParams{URI: dir, Cursor: cursor})
			if err != nil {
				t.Fatalf("resources/directory/read %s: %v", dir, err)
			}
			for _, c := range res.Resources {
				if !strings.HasPrefix(c.URI, dir+"/") || strings.Contains(strings.TrimPrefix(c.URI, dir+"/"), "/") {
					t.Errorf("directory %s lists %s, which is not a direct child", dir, c.URI)
					continue
				}
				// A host builds `ls` from the names: each child, SKILL.md
				// and folders included, is named by its last segment.
				if u, err := verify.ParseURI(c.URI); err != nil || c.Name != u.Name() {
					t.Errorf("directory %s lists %s named %q, want its last segment", dir, c.URI, c.Name)
				}
				if strings.HasSuffix(c.URI, "/SKILL.md") {
					skillMDs++
				}
				if c.MIMEType == "inode/directory" {
					queue = append(queue, c.URI)
				} else {
					walked[c.URI] = true
				}
			}
			if res.NextCursor == "" {
				break
			}
			cursor = res.NextCursor
		}
	}
	if !reflect.DeepEqual(walked, served) {
		t.Errorf("directory reads reach %d files, the skills list %d", len(walked), len(served))
	}
	if skillMDs < len(entries) {
		t.Errorf("directory reads reach %d SKILL.md files, want at least %d", skillMDs, len(entries))
	}

	// What must fail with -32602.
	someFile := entries[0].Resources[len(entries[0].Resources)-1].URI
	for _, uri := range []string{"skill://nope/SKILL.md", someFile, "skill://bad-name/SKILL.md", "skill://bom/SKILL.md", "not a uri", ""} {
		_, err := mcp.CallCustomMethod[*getParams, *getResult](ctx, p.cs, "skills/get", &getParams{URI: uri})
		wantInvalidParams(t, "skills/get "+uri, err)
	}
	for _, uri := range []string{"skill://nope", someFile, "skill://bad-name", "skill://solo-00/", "file:///etc"} {
		_, err := mcp.CallCustomMethod[*dirParams, *dirResult](ctx, p.cs, "resources/directory/read", &dirParams{URI: uri})
		wantInvalidParams(t, "resources/directory/read "+uri, err)
	}
	for _, uri := range []string{"skill://bad-name/SKILL.md", "skill://bom/SKILL.md", "skill://solo-00/leak.txt", "skill://README.md", "skill://solo-00/.git/HEAD"} {
		_, err := p.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		wantInvalidParams(t, "resources/read "+uri, err)
	}
	_, err := mcp.CallCustomMethod[*listParams, *listResult](ctx, p.cs, "skills/list", &listParams{Cursor: "!!not-a-cursor"})
	wantInvalidParams(t, "skills/list with a bad cursor", err)

	for _, rel := range fx.refused {
		line := fmt.Sprintf("skillfs serve: warning: skipped %s: ", filepath.Join(fx.dir, filepath.FromSlash(rel)))
		if !strings.Contains(p.stderr.String(), line) {
			t.Errorf("stderr does not report %s; stderr:\n%s", rel, p.stderr)
		}
	}
}

// checkGetCacheable checks what the Final SEP-2640 text asks of a
// skills/get result: in the 2026-07-28 protocol resultType "complete" and
// the REQUIRED ttlMs and cacheScope; in the older one, none of them.
func checkGetCacheable(t *testing.T, era, uri string, g *getResult) {
	t.Helper()
	if era >= "2026-07-28" {
		if g.ResultType != "complete" || g.TTLMs == nil || *g.TTLMs < 0 || g.CacheScope == nil || *g.CacheScope != "public" {
			t.Errorf("skills/get %s: resultType %q, ttlMs %v, cacheScope %v; want complete, a ttlMs >= 0, public", uri, g.ResultType, g.TTLMs, g.CacheScope)
		}
		return
	}
	if g.TTLMs != nil || g.CacheScope != nil {
		t.Errorf("skills/get %s in %s: ttlMs %v, cacheScope %v; the older protocol has neither", uri, era, g.TTLMs, g.CacheScope)
	}
}

// checkStderr fails the test on anything the server printed besides the
// skipped lines at start and the listening line: a warning or error logged
// while a client did nothing wrong is a fault.
func checkStderr(t *testing.T, stderr *lockedBuffer) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if line != "" && !strings.HasPrefix(line, "skillfs serve: warning: skipped ") && !servingLine.MatchString(line) {
			t.Errorf("unexpected output on stderr: %s", line)
		}
	}
}

// TestConformance is the done-when test: a tree of a few hundred files,
// served by the built binary over stdio and HTTP in both protocol eras, is
// listed, read back and verified by a go-sdk client.
func TestConformance(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, 36)
	if len(fx.files) < 300 {
		t.Fatalf("fixture has %d files; the test wants a few hundred", len(fx.files))
	}
	const pageSize = 7
	for _, tr := range transports {
		for _, era := range eras {
			t.Run(tr.name+"/"+era, func(t *testing.T) {
				t.Parallel()
				p := tr.start(t, fx.dir, era, "--page-size", fmt.Sprint(pageSize), "--poll", "-1s")
				if got := p.cs.InitializeResult().ProtocolVersion; got != era {
					t.Fatalf("negotiated protocol %s, want %s", got, era)
				}
				checkConformance(t, p, fx, pageSize)
				checkStderr(t, p.stderr)
			})
		}
	}
}

// TestChangeNotifies changes a file on disk under a running server and
// expects notifications/resources/list_changed, then the new digest from
// skills/get and the new bytes from resources/read.
func TestChangeNotifies(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		for _, era := range eras {
			t.Run(tr.name+"/"+era, func(t *testing.T) {
				t.Parallel()
				fx := newFixture(t, 3)
				p := tr.start(t, fx.dir, era, "--poll", "20ms")
				if era >= "2026-07-28" {
					select { // subscriptions/listen is in place
					case <-p.listened:
					case <-giveUp():
						t.Fatal("subscriptions/listen was never acknowledged")
					}
				}
				const uri = "skill://team-1/skill-01/SKILL.md"
				before, err := mcp.CallCustomMethod[*getParams, *getResult](t.Context(), p.cs, "skills/get", &getParams{URI: uri})
				if err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(fx.dir, "team-1", "skill-01", "references", "guide.md")
				content := changeUntilNotified(t, p, path)

				guide := "skill://team-1/skill-01/references/guide.md"
				res, err := p.cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: guide})
				if err != nil {
					t.Fatal(err)
				}
				if b, _ := contentBytes(t, res); string(b) != content {
					t.Fatalf("read %q after the change, want %q", b, content)
				}
				after, err := mcp.CallCustomMethod[*getParams, *getResult](t.Context(), p.cs, "skills/get", &getParams{URI: uri})
				if err != nil {
					t.Fatal(err)
				}
				r, ok := after.Skill.Resource(guide)
				if !ok {
					t.Fatalf("%s lost %s", uri, guide)
				}
				if want := sha256Digest([]byte(content)); r.Digest != want || r.Size != int64(len(content)) {
					t.Errorf("after the change skills/get says %s/%d, want %s/%d", r.Digest, r.Size, want, len(content))
				}
				old, _ := before.Skill.Resource(guide)
				if old.Digest == r.Digest {
					t.Errorf("digest did not change")
				}
				checkStderr(t, p.stderr)
			})
		}
	}
}

// changeUntilNotified rewrites path until a list_changed notification
// arrives, and returns what it wrote last. It rewrites more than once
// because an HTTP client of the 2025-11-25 protocol opens its event stream
// in the background, and a notification sent before that is lost.
func changeUntilNotified(t *testing.T, p *peer, path string) string {
	t.Helper()
	for i := 0; i < 200; i++ {
		content := fmt.Sprintf("# Guide, version %d\n", i)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.changed:
			return content
		case <-afterPoll():
		}
	}
	t.Fatal("no notifications/resources/list_changed after 200 changes")
	return ""
}
