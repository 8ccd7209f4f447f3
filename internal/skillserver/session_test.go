package skillserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/verify"
)

// session connects a go-sdk client to s over net.Pipe, as the mount's demo
// does, and returns it with a channel that receives list_changed.
func session(t *testing.T, s *Server, era string) (*mcp.ClientSession, chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c1, c2 := net.Pipe()
	served := make(chan error, 1)
	go func() { served <- s.ServeConn(ctx, c1) }()
	changed := make(chan struct{}, 16)
	listened := make(chan struct{})
	c := mcp.NewClient(&mcp.Implementation{Name: "test"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
	})
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				close(listened)
			}
			return next(ctx, method, req)
		}
	})
	mcp.AddSendingCustomMethod[*listSkillsParams, *listSkillsResult](c, skill.MethodList)
	mcp.AddSendingCustomMethod[*getSkillParams, *getSkillResult](c, skill.MethodGet)
	mcp.AddSendingCustomMethod[*readDirParams, *readDirResult](c, skill.MethodReadDir)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: c2, Writer: c2}, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatal(err)
	}
	if era >= "2026-07-28" {
		select {
		case <-listened:
		case <-time.After(2 * time.Minute):
			t.Fatal("subscriptions/listen was never acknowledged")
		}
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		if err := <-served; err != nil {
			t.Errorf("ServeConn: %v", err)
		}
	})
	return cs, changed
}

// wait waits for a list_changed notification; the bound only keeps a
// broken server from hanging the test.
func wait(t *testing.T, changed chan struct{}) {
	t.Helper()
	select {
	case <-changed:
	case <-time.After(2 * time.Minute):
		t.Fatal("no notifications/resources/list_changed")
	}
}

func TestServeConnRescanNotifies(t *testing.T) {
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			dir := tree(t, map[string]string{"s/SKILL.md": skillMD("s", ""), "s/a.md": "a"})
			s := newServer(t, dir)
			cs, changed := session(t, s, era)
			ctx := t.Context()

			// Unchanged: a rescan publishes nothing and notifies no one.
			if err := s.Rescan(); err != nil {
				t.Fatal(err)
			}
			// A changed file: same URI, same size, new bytes.
			os.WriteFile(filepath.Join(dir, "s", "a.md"), []byte("b"), 0o644)
			if err := s.Rescan(); err != nil {
				t.Fatal(err)
			}
			wait(t, changed)
			g, err := mcp.CallCustomMethod[*getSkillParams, *getSkillResult](ctx, cs, skill.MethodGet, &getSkillParams{GetParams: skill.GetParams{URI: "skill://s/SKILL.md"}})
			if err != nil {
				t.Fatal(err)
			}
			if r, _ := g.Skill.Resource("skill://s/a.md"); r.Digest != verify.DigestOf([]byte("b")) {
				t.Errorf("after the change skills/get says %+v", r)
			}
			// A new skill, and a removed file.
			os.MkdirAll(filepath.Join(dir, "t"), 0o755)
			os.WriteFile(filepath.Join(dir, "t", "SKILL.md"), []byte(skillMD("t", "")), 0o644)
			os.Remove(filepath.Join(dir, "s", "a.md"))
			if err := s.Rescan(); err != nil {
				t.Fatal(err)
			}
			wait(t, changed)
			l, err := mcp.CallCustomMethod[*listSkillsParams, *listSkillsResult](ctx, cs, skill.MethodList, &listSkillsParams{})
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Skills) != 2 || len(l.Skills[0].Resources) != 1 {
				t.Errorf("after adding t and removing a.md: %+v", l.Skills)
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://s/a.md"}); err == nil {
				t.Error("a removed file is still readable")
			}
			if len(changed) != 0 {
				t.Errorf("%d notifications more than changes", len(changed))
			}
		})
	}
}

// A read that finds the file changed since the scan rescans, so that the
// skills/get a host makes on the digest mismatch is current.
func TestReadOfChangedFileRescans(t *testing.T) {
	dir := tree(t, map[string]string{"s/SKILL.md": skillMD("s", ""), "s/a.md": "a"})
	s := newServer(t, dir)
	cs, _ := session(t, s, "2025-11-25")
	os.WriteFile(filepath.Join(dir, "s", "a.md"), []byte("changed"), 0o644)
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://s/a.md"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Contents[0].Text != "changed" {
		t.Errorf("read %q", res.Contents[0].Text)
	}
	g, err := mcp.CallCustomMethod[*getSkillParams, *getSkillResult](t.Context(), cs, skill.MethodGet, &getSkillParams{GetParams: skill.GetParams{URI: "skill://s/SKILL.md"}})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := g.Skill.Resource("skill://s/a.md"); r.Size != 7 {
		t.Errorf("skills/get after the read: %+v", r)
	}
}

func TestDirectoryRead(t *testing.T) {
	files := map[string]string{"acme/tools/s/SKILL.md": skillMD("s", "")}
	for i := range 5 {
		files[fmt.Sprintf("acme/tools/s/f%d.md", i)] = "x"
	}
	files["acme/tools/s/sub/deep.md"] = "deep"
	dir := tree(t, files)
	s, err := New(dir, Options{Logger: testLogger(t), PollInterval: -1, PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			cs, _ := session(t, s, era)
			read := func(uri string) []skill.DirChild {
				var out []skill.DirChild
				cursor := ""
				for page := 0; ; page++ {
					if page > 1000 {
						t.Fatal("more than 1000 pages: the cursor never ends")
					}
					res, err := mcp.CallCustomMethod[*readDirParams, *readDirResult](t.Context(), cs, skill.MethodReadDir, &readDirParams{ReadDirParams: skill.ReadDirParams{URI: uri, Cursor: cursor}})
					if err != nil {
						t.Fatalf("%s: %v", uri, err)
					}
					if len(res.Resources) > 2 {
						t.Errorf("page of %d, page size 2", len(res.Resources))
					}
					if (res.ResultType == "complete") != (era >= "2026-07-28") || (res.TTLMs != nil) != (era >= "2026-07-28") {
						t.Errorf("resultType %q, ttlMs %v in %s", res.ResultType, res.TTLMs, era)
					}
					out = append(out, res.Resources...)
					if res.NextCursor == "" {
						return out
					}
					cursor = res.NextCursor
				}
			}
			names := func(rs []skill.DirChild) []string {
				var out []string
				for _, r := range rs {
					out = append(out, r.Name+"|"+r.MIMEType)
				}
				return out
			}
			if got, want := names(read("skill://acme")), []string{"tools|inode/directory"}; !slices.Equal(got, want) {
				t.Errorf("skill://acme: %v, want %v", got, want)
			}
			got := names(read("skill://acme/tools/s"))
			// SKILL.md by its file name, not its skill's (issue 8, item 17).
			want := []string{"SKILL.md|text/markdown", "f0.md|text/markdown", "f1.md|text/markdown", "f2.md|text/markdown", "f3.md|text/markdown", "f4.md|text/markdown", "sub|inode/directory"}
			if !slices.Equal(got, want) {
				t.Errorf("skill root:\n got %v\nwant %v", got, want)
			}
			// Another spelling of the same URI is the same directory.
			if got := names(read("SKILL://acme/%74ools/s/sub")); !slices.Equal(got, []string{"deep.md|text/markdown"}) {
				t.Errorf("sub: %v", got)
			}
			for _, uri := range []string{"skill://acme/tools/s/f0.md", "skill://acme/nope", "skill://acme/tools/s/", "skill://", "skill://acme/tools/s/../s"} {
				_, err := mcp.CallCustomMethod[*readDirParams, *readDirResult](t.Context(), cs, skill.MethodReadDir, &readDirParams{ReadDirParams: skill.ReadDirParams{URI: uri}})
				var je *jsonrpc.Error
				if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
					t.Errorf("%s: %v, want -32602", uri, err)
				}
			}
		})
	}
}

func TestListPaging(t *testing.T) {
	files := map[string]string{}
	for i := range 7 {
		files[fmt.Sprintf("s%d/SKILL.md", i)] = skillMD(fmt.Sprintf("s%d", i), "")
	}
	dir := tree(t, files)
	s, err := New(dir, Options{Logger: testLogger(t), PollInterval: -1, PageSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := session(t, s, "2026-07-28")
	var got []string
	pages := 0
	cursor := ""
	for page := 0; ; page++ {
		if page > 1000 {
			t.Fatal("more than 1000 pages: the cursor never ends")
		}
		res, err := mcp.CallCustomMethod[*listSkillsParams, *listSkillsResult](t.Context(), cs, skill.MethodList, &listSkillsParams{ListParams: skill.ListParams{Cursor: cursor}})
		if err != nil {
			t.Fatal(err)
		}
		if res.ResultType != "complete" || res.TTLMs == nil || res.CacheScope == "" {
			t.Errorf("2026-07-28 result lacks resultType/ttlMs/cacheScope: %+v", res)
		}
		pages++
		for _, e := range res.Skills {
			got = append(got, e.Name())
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	if want := []string{"s0", "s1", "s2", "s3", "s4", "s5", "s6"}; pages != 3 || !slices.Equal(got, want) {
		t.Errorf("%d pages of %v, want 3 of %v", pages, got, want)
	}
	// skills/get answers for another spelling of a skill's URI.
	g, err := mcp.CallCustomMethod[*getSkillParams, *getSkillResult](t.Context(), cs, skill.MethodGet, &getSkillParams{GetParams: skill.GetParams{URI: "skill://s3/%53KILL.md"}})
	if err != nil || g.Skill.URI != "skill://s3/SKILL.md" {
		t.Errorf("skills/get by another spelling: %v, %v", g, err)
	}
}

// BenchmarkScan measures New and an unchanged Rescan on 10,000 skills of
// four files each (40,000 files), the size the brief asks to cope with.
// Registration of every file as an mcp resource is part of New.
func BenchmarkScan(b *testing.B) {
	dir := b.TempDir()
	for i := range 10000 {
		d := filepath.Join(dir, fmt.Sprintf("team-%02d", i%100), fmt.Sprintf("skill-%05d", i))
		os.MkdirAll(filepath.Join(d, "references"), 0o755)
		os.WriteFile(filepath.Join(d, "SKILL.md"), []byte(skillMD(fmt.Sprintf("skill-%05d", i), "")), 0o644)
		for _, f := range []string{"a.md", "b.py", "references/c.md"} {
			os.WriteFile(filepath.Join(d, f), []byte(fmt.Sprintf("%s of %d\n", f, i)), 0o644)
			age(b, filepath.Join(d, f))
		}
		age(b, filepath.Join(d, "SKILL.md"))
	}
	var s *Server
	b.Run("New", func(b *testing.B) {
		for b.Loop() {
			var err error
			if s, err = New(dir, Options{PollInterval: -1}); err != nil {
				b.Fatal(err)
			}
		}
		if n := len(s.Skills()); n != 10000 {
			b.Fatalf("%d skills", n)
		}
	})
	b.Run("RescanUnchanged", func(b *testing.B) {
		for b.Loop() {
			if err := s.Rescan(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
