package resolver

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/integration/hostile"
	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/skillserver"
	"github.com/skillfs/skillfs/verify"
)

// capFiles are three skills of 1, 2 and 3 resources, listed in this order.
var capFiles = map[string]string{
	"a/SKILL.md":   "---\nname: a\ndescription: A\n---\n",
	"b/SKILL.md":   "---\nname: b\ndescription: B\n---\n",
	"b/x.txt":      "x",
	"c/SKILL.md":   "---\nname: c\ndescription: C\n---\n",
	"c/x.txt":      "x",
	"c/y/z.txt":    "z",
	"zz/README.md": "not a skill",
}

func skillNames(c *Catalog) string {
	var names []string
	for _, s := range c.Skills {
		names = append(names, s.Entry.Name())
	}
	return strings.Join(names, ",")
}

// TestListResourcesCapAtTheEdge: a listing of exactly max_list_resources
// resources is kept whole; one fewer drops the skill that would cross it,
// whole, and says why.
func TestListResourcesCapAtTheEdge(t *testing.T) {
	full := newRig(t, capFiles, nil).next(t)
	if skillNames(full) != "a,b,c" || full.Resources != 6 || full.Truncated != "" {
		t.Fatalf("uncapped: skills %s, %d resources, truncated %q", skillNames(full), full.Resources, full.Truncated)
	}
	at := newRig(t, capFiles, func(o *config.Origin) { o.Limits.MaxListResources = 6 }).next(t)
	if skillNames(at) != "a,b,c" || at.Truncated != "" {
		t.Errorf("at the cap: skills %s, truncated %q; want all, not truncated", skillNames(at), at.Truncated)
	}
	over := newRig(t, capFiles, func(o *config.Origin) { o.Limits.MaxListResources = 5 }).next(t)
	if skillNames(over) != "a,b" || over.Resources != 3 || !strings.Contains(over.Truncated, "max_list_resources") {
		t.Errorf("one over the cap: skills %s, %d resources, truncated %q; want a,b, 3 and the reason", skillNames(over), over.Resources, over.Truncated)
	}
}

// TestListBytesCapAtTheEdge: the same for max_list_bytes, measured on the
// entries as received.
func TestListBytesCapAtTheEdge(t *testing.T) {
	full := newRig(t, capFiles, nil).next(t)
	if full.Bytes <= 0 {
		t.Fatalf("uncapped listing counted %d bytes", full.Bytes)
	}
	at := newRig(t, capFiles, func(o *config.Origin) { o.Limits.MaxListBytes = full.Bytes }).next(t)
	if skillNames(at) != "a,b,c" || at.Truncated != "" || at.Bytes != full.Bytes {
		t.Errorf("at the cap: skills %s, %d bytes, truncated %q; want all, not truncated", skillNames(at), at.Bytes, at.Truncated)
	}
	over := newRig(t, capFiles, func(o *config.Origin) { o.Limits.MaxListBytes = full.Bytes - 1 }).next(t)
	if skillNames(over) != "a,b" || !strings.Contains(over.Truncated, "max_list_bytes") || over.Bytes >= full.Bytes {
		t.Errorf("one over the cap: skills %s, %d bytes, truncated %q; want a,b and the reason", skillNames(over), over.Bytes, over.Truncated)
	}
}

// hostileRig is a Session on an in-process hostile server.
func hostileRig(t *testing.T, opts hostile.Options, edit func(*config.Origin)) (*Session, chan *Catalog) {
	t.Helper()
	srv, err := hostile.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	oc := config.Origin{Label: "h", Kind: config.Stdio, Command: "x", Limits: config.DefaultLimits()}
	oc.Limits.CallTimeout = 10 * time.Second
	if edit != nil {
		edit(&oc)
	}
	cats := make(chan *Catalog, 8)
	o := New(Options{
		Origin: oc,
		Dial: func(context.Context) (io.ReadWriteCloser, error) {
			c, s := net.Pipe()
			go func() { srv.Serve(ctx, &mcp.IOTransport{Reader: s, Writer: s}); s.Close() }()
			return c, nil
		},
		OnCatalog: func(c *Catalog) { cats <- c },
	})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); o.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return o, cats
}

func nextCatalog(t *testing.T, cats chan *Catalog) *Catalog {
	t.Helper()
	select {
	case c := <-cats:
		return c
	case <-time.After(5 * time.Minute):
		t.Fatal("no catalog within 5m")
	}
	return nil
}

// TestHeavyListingStopsAtTheCaps: endless pages of 512-resource skills stop
// at the first cap reached, never part of a skill, with no page asked for
// after it.
func TestHeavyListingStopsAtTheCaps(t *testing.T) {
	h := hostile.Heavy{Entries: 10, Resources: 50}
	for _, tc := range []struct {
		name  string
		edit  func(*config.Origin)
		cause string
	}{
		{"resources", func(o *config.Origin) { o.Limits.MaxListResources = 1234 }, "max_list_resources"},
		{"bytes", func(o *config.Origin) { o.Limits.MaxListBytes = 100 << 10 }, "max_list_bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cats := hostileRig(t, hostile.Options{Fixtures: []string{}, Mode: hostile.ModeHeavyList, Heavy: h}, tc.edit)
			c := nextCatalog(t, cats)
			if !strings.Contains(c.Truncated, tc.cause) {
				t.Errorf("truncated %q, want %s", c.Truncated, tc.cause)
			}
			n := 0
			for _, s := range c.Skills {
				n += len(s.Files)
				if strings.HasPrefix(s.Entry.Name(), "heavy-") && len(s.Files) != h.Resources {
					t.Errorf("%s kept with %d of its %d files", s.URI, len(s.Files), h.Resources)
				}
			}
			if n != c.Resources || n > 1234 || len(c.Skills) < 3 {
				t.Errorf("%d skills, %d resources kept (counted %d)", len(c.Skills), n, c.Resources)
			}
		})
	}
}

// TestPrivateListingWithheldFromASharedMount: a private listing is
// withheld (but kept, for saving) when the mount is shared, and directory
// reads of a private server fail with ErrPrivate; a public one is shown.
func TestPrivateListingWithheldFromASharedMount(t *testing.T) {
	for _, tc := range []struct {
		scope    string
		shared   bool
		withheld bool
	}{
		{"", true, true}, // the hostile default: private
		{"private", false, false},
		{"public", true, false},
		{"none", true, false},
		{"per-user", true, true}, // unknown: not permission to share
	} {
		o, cats := hostileRig(t, hostile.Options{Fixtures: []string{}, CacheScope: tc.scope}, func(o *config.Origin) { o.Shared = tc.shared })
		c := nextCatalog(t, cats)
		if (c.Withheld != "") != tc.withheld || len(c.Skills) != 2 {
			t.Errorf("scope %q shared %v: withheld %q with %d skills; want withheld %v and both skills kept", tc.scope, tc.shared, c.Withheld, len(c.Skills), tc.withheld)
		}
		wantScope := ScopePublic
		if tc.scope == "" || tc.scope == "private" || tc.scope == "per-user" {
			wantScope = ScopePrivate
		}
		if c.CacheScope != wantScope {
			t.Errorf("scope %q: catalog scope %q, want %q", tc.scope, c.CacheScope, wantScope)
		}
		dir, _ := verify.ParseURI("skill://honest-a")
		_, err := o.ReadDir(t.Context(), dir)
		if got := errors.Is(err, ErrPrivate); got != tc.withheld {
			t.Errorf("scope %q shared %v: directory read %v", tc.scope, tc.shared, err)
		}
	}
}

// TestNoSkillsGetWithoutTheExtension: the Final text has clients call
// skills/get only after the server declared the extension. Asked for a
// skill (skillfs get, a pin, a stale read's refresh) on a server that did
// not, the session says so and sends nothing.
func TestNoSkillsGetWithoutTheExtension(t *testing.T) {
	log := filepath.Join(t.TempDir(), "access.log")
	o, cats := hostileRig(t, hostile.Options{Fixtures: []string{}, Mode: hostile.ModeNoExtension, AccessLog: log}, nil)
	nextCatalog(t, cats)
	_, err := o.GetSkill(context.Background(), "skill://honest-a/SKILL.md")
	if !errors.Is(err, ErrNoSkills) {
		t.Errorf("GetSkill on a server without the extension: %v, want ErrNoSkills", err)
	}
	b, err := os.ReadFile(log)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "skills/") {
		t.Errorf("the server received a skills method:\n%s", b)
	}
}

// TestSkillsGetOnlyForASkillMD: skills/get's params.uri must be a
// SKILL.md's URI (the Final text); any other is refused before anything
// is sent.
func TestSkillsGetOnlyForASkillMD(t *testing.T) {
	var log syncLog
	r := newRigWith(t, files, skillserver.Options{PollInterval: -1, AccessLog: &log}, nil)
	r.next(t)
	for _, uri := range []string{"skill://a/big.txt", "skill://p/b", "skill://a/SKILL.md/x"} {
		_, err := r.o.GetSkill(context.Background(), uri)
		if verify.ReasonOf(err) != verify.NotSkillMD {
			t.Errorf("GetSkill(%s): %v, want %s", uri, err, verify.NotSkillMD)
		}
	}
	if s, err := r.o.GetSkill(context.Background(), "skill://a/SKILL.md"); err != nil || s.URI.String() != "skill://a/SKILL.md" {
		t.Errorf("GetSkill of a SKILL.md: %v", err)
	}
	if got := log.String(); strings.Count(got, "skills/get ") != 1 {
		t.Errorf("skills/get requests sent:\n%s\nwant the SKILL.md's only", got)
	}
}

// syncLog is an access log tests read while the server writes it.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
