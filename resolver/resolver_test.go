package resolver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/skillserver"
	"github.com/skillfs/skillfs/verify"
)

// An honest in-process server over a pipe, and a Session on it.
type rig struct {
	o       *Session
	srv     *skillserver.Server
	dir     string
	catalog chan *Catalog
}

func newRig(t *testing.T, files map[string]string, edit func(*config.Origin)) *rig {
	t.Helper()
	return newRigWith(t, files, skillserver.Options{PollInterval: -1}, edit)
}

// newRigWith is newRig with the server's options.
func newRigWith(t *testing.T, files map[string]string, sopts skillserver.Options, edit func(*config.Origin)) *rig {
	t.Helper()
	r := &rig{dir: t.TempDir(), catalog: make(chan *Catalog, 8)}
	for p, c := range files {
		full := filepath.Join(r.dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := skillserver.New(r.dir, sopts)
	if err != nil {
		t.Fatal(err)
	}
	r.srv = srv
	ctx, cancel := context.WithCancel(context.Background())
	oc := config.Origin{Label: "t", Kind: config.Stdio, Command: "x", Limits: config.DefaultLimits()}
	oc.Limits.CallTimeout = 5 * time.Second
	if edit != nil {
		edit(&oc)
	}
	r.o = New(Options{
		Origin: oc,
		Dial: func(context.Context) (io.ReadWriteCloser, error) {
			c, s := net.Pipe()
			go func() { srv.ServeConn(ctx, s); s.Close() }()
			return c, nil
		},
		OnCatalog: func(c *Catalog) { r.catalog <- c },
	})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); r.o.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return r
}

func (r *rig) next(t *testing.T) *Catalog {
	t.Helper()
	select {
	case c := <-r.catalog:
		return c
	case <-time.After(5 * time.Minute):
		t.Fatal("no catalog within 5m")
	}
	return nil
}

var files = map[string]string{
	"a/SKILL.md":      "---\nname: a\ndescription: A\n---\nbody\n",
	"a/big.txt":       strings.Repeat("x", 100_000),
	"p/b/SKILL.md":    "---\nname: b\ndescription: B\n---\n",
	"p/b/x/y/z.md":    "z\n",
	"p/c/SKILL.md":    "---\nname: c\ndescription: C\n---\n",
	"p/c/ref/one.txt": "one\n",
}

func TestEnumerateAndFetch(t *testing.T) {
	r := newRig(t, files, nil)
	c := r.next(t)
	if len(c.Skills) != 3 || len(c.Rejected) != 0 || c.Truncated != "" {
		t.Fatalf("catalog: %d skills, %v rejected, truncated %q", len(c.Skills), c.Rejected, c.Truncated)
	}
	var big skill.Resource
	for _, s := range c.Skills {
		if res, ok := s.Entry.Resource("skill://a/big.txt"); ok {
			big = res
		}
	}
	b, err := r.o.Fetch(context.Background(), big)
	if err != nil || verify.CheckContent(big, b) != nil {
		t.Fatalf("fetch: %v", err)
	}
	if st := r.o.Status(); st.Reads != 1 || st.BytesFetched != 100_000 || st.State != StateConnected {
		t.Errorf("status: %+v", st)
	}
}

// The SDK's per-session read cache must not keep what skillfs fetched.
func TestFetchLeavesNothingInTheSDKCache(t *testing.T) {
	r := newRig(t, files, nil)
	c := r.next(t)
	for _, s := range c.Skills {
		for _, f := range s.Files {
			if _, err := r.o.Fetch(context.Background(), *f.Resource); err != nil {
				t.Fatal(err)
			}
		}
	}
	l, err := r.o.board.session(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cs := l.cs
	if p := cs.InitializeResult().ProtocolVersion; p < "2026-07-28" {
		t.Skipf("protocol %s has no read cache", p)
	}
	n := reflect.ValueOf(cs).Elem().FieldByName("readResourceCache").FieldByName("cachedValues").Len()
	if n != 0 {
		t.Errorf("go-sdk's read cache holds %d results after the fetches", n)
	}
	if st := r.o.Status(); st.Reads != 6 {
		t.Errorf("reads = %d, want 6 (evictions must not be sent)", st.Reads)
	}
}

func TestFetchRefusesWhatTheEntryDoesNotAllow(t *testing.T) {
	r := newRig(t, files, func(o *config.Origin) { o.Limits.Budget = 150_000 })
	r.next(t)
	// A declared size smaller than what the server sends: refused before
	// decoding, and the session survives.
	_, err := r.o.Fetch(context.Background(), skill.Resource{URI: "skill://a/big.txt", Size: 10, HasSize: true})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("fetch with a smaller declared size: %v, want ErrTooLarge", err)
	}
	if _, err := r.o.Fetch(context.Background(), skill.Resource{URI: "skill://p/b/x/y/z.md", Size: 2, HasSize: true}); err != nil {
		t.Fatalf("the session after a refused response: %v", err)
	}
	// Over the per-file cap by declaration: refused without a request.
	before := r.o.Status().Reads
	_, err = r.o.Fetch(context.Background(), skill.Resource{URI: "skill://a/big.txt", Size: 1 << 30, HasSize: true})
	if !errors.Is(err, ErrTooLarge) || r.o.Status().Reads != before {
		t.Errorf("declared over the cap: %v (reads %d → %d)", err, before, r.o.Status().Reads)
	}
	// The budget: 100 000 + 100 000 > 150 000.
	big := skill.Resource{URI: "skill://a/big.txt", Size: 100_000, HasSize: true}
	if _, err := r.o.Fetch(context.Background(), big); err != nil {
		t.Fatal(err)
	}
	if _, err := r.o.Fetch(context.Background(), big); !errors.Is(err, ErrOverBudget) {
		t.Errorf("second big fetch: %v, want ErrOverBudget", err)
	}
}

func TestGetSkillAndReadDir(t *testing.T) {
	r := newRig(t, files, nil)
	r.next(t)
	s, err := r.o.GetSkill(context.Background(), "skill://p/c/SKILL.md")
	if err != nil || s.Entry.Name() != "c" {
		t.Fatalf("GetSkill: %v", err)
	}
	if _, err := r.o.GetSkill(context.Background(), "skill://p/nope/SKILL.md"); !errors.Is(err, ErrNotServed) {
		t.Errorf("GetSkill of an unknown skill: %v, want ErrNotServed", err)
	}
	if _, err := r.o.GetSkill(context.Background(), "file:///etc/passwd"); verify.ReasonOf(err) != verify.BadScheme {
		t.Errorf("GetSkill of a file: URI: %v", err)
	}
	dir, _ := verify.ParseURI("skill://p")
	kids, err := r.o.ReadDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range kids {
		names = append(names, k.URI.Name())
		if !k.Dir {
			t.Errorf("%s should be a directory", k.URI)
		}
	}
	if strings.Join(names, ",") != "b,c" {
		t.Errorf("children of skill://p = %v", names)
	}
}

func TestListingCapsTruncate(t *testing.T) {
	r := newRig(t, files, func(o *config.Origin) { o.Limits.MaxListEntries = 2 })
	c := r.next(t)
	if len(c.Skills) != 2 || !strings.Contains(c.Truncated, "max_list_entries") {
		t.Errorf("skills %d, truncated %q", len(c.Skills), c.Truncated)
	}
}

// listCalls counts the skills/list requests of an access log.
type listCalls struct {
	mu sync.Mutex
	n  int
}

func (c *listCalls) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.HasPrefix(string(p), "skills/list") {
		c.n++
	}
	return len(p), nil
}

func (c *listCalls) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// The next page is asked for while one is checked, but only when the
// page cannot end the listing: the server sees the requests a
// page-by-page listing sends, and the catalog keeps the listing's order.
func TestListingAsksAheadOnlyWhenNoCapCanStopIt(t *testing.T) {
	many := map[string]string{}
	var want []string
	for i := range 9 {
		name := fmt.Sprintf("s%d", i)
		many[name+"/SKILL.md"] = "---\nname: " + name + "\ndescription: S\n---\n"
		many[name+"/ref.md"] = "ref " + name
		want = append(want, "skill://"+name+"/SKILL.md")
	}
	uris := func(c *Catalog) []string {
		var out []string
		for _, s := range c.Skills {
			out = append(out, s.URI.String())
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		edit      func(*config.Origin)
		calls     int
		skills    int
		truncated string
	}{
		{"no cap", nil, 5, 9, ""},
		// Reached exactly at the end of the second page: no third page.
		{"entries", func(o *config.Origin) { o.Limits.MaxListEntries = 4 }, 2, 4, "max_list_entries"},
		{"resources", func(o *config.Origin) { o.Limits.MaxListResources = 8 }, 2, 4, "max_list_resources"},
		{"pages", func(o *config.Origin) { o.Limits.MaxListPages = 3 }, 3, 6, "max_list_pages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := &listCalls{}
			r := newRigWith(t, many, skillserver.Options{PollInterval: -1, PageSize: 2, AccessLog: calls}, tc.edit)
			c := r.next(t)
			if got := uris(c); !reflect.DeepEqual(got, want[:tc.skills]) {
				t.Errorf("skills %v, want %v", got, want[:tc.skills])
			}
			if !strings.Contains(c.Truncated, tc.truncated) || (tc.truncated == "") != (c.Truncated == "") {
				t.Errorf("truncated %q, want %q", c.Truncated, tc.truncated)
			}
			if n := calls.count(); n != tc.calls {
				t.Errorf("%d skills/list requests, want %d", n, tc.calls)
			}
		})
	}
}

func TestPinsAreConfirmed(t *testing.T) {
	r := newRig(t, files, func(o *config.Origin) {
		o.Limits.MaxListEntries = 1
		o.Pin = []string{"skill://p/c/SKILL.md", "skill://p/missing/SKILL.md"}
	})
	c := r.next(t)
	if !c.Pinned["skill://p/c/SKILL.md"] {
		t.Errorf("pinned: %v", c.Pinned)
	}
	var rejected []string
	for _, rej := range c.Rejected {
		rejected = append(rejected, rej.URI+":"+string(rej.Reason))
	}
	if len(rejected) != 1 || !strings.Contains(rejected[0], "missing") {
		t.Errorf("rejected: %v", rejected)
	}
}

// ttlConn is the server's end of a pipe that marks every resources/read
// result cacheable for a minute, as a server may: go-sdk then keeps the
// result for the URI and answers a later read of it from its cache.
type ttlConn struct {
	net.Conn
	reads *atomic.Int64 // results the server sent
}

func (c ttlConn) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(`"contents":[`)) {
		c.reads.Add(1)
		q := bytes.ReplaceAll(p, []byte(`"ttlMs":0`), []byte(`"ttlMs":60000`))
		if !bytes.Contains(q, []byte(`"ttlMs":60000`)) {
			q = bytes.Replace(q, []byte(`"contents":[`), []byte(`"ttlMs":60000,"contents":[`), 1)
		}
		if _, err := c.Conn.Write(q); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// The transport takes a file's text out of the message go-sdk decodes,
// and go-sdk caches what it decoded: a read after another, or beside it,
// of a URI the server says may be cached must still get the file, not the
// "" left in go-sdk's cache.
func TestFetchAgainOfACacheableURI(t *testing.T) {
	r := &rig{dir: writeFiles(t, files), catalog: make(chan *Catalog, 8)}
	var served atomic.Int64
	srv, err := skillserver.New(r.dir, skillserver.Options{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	oc := config.Origin{Label: "t", Kind: config.Stdio, Command: "x", Limits: config.DefaultLimits()}
	r.o = New(Options{
		Origin: oc,
		Dial: func(context.Context) (io.ReadWriteCloser, error) {
			c, s := net.Pipe()
			go func() { srv.ServeConn(ctx, ttlConn{s, &served}); s.Close() }()
			return c, nil
		},
		OnCatalog: func(c *Catalog) { r.catalog <- c },
	})
	var wg sync.WaitGroup
	wg.Go(func() { r.o.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })

	c := r.next(t)
	var big skill.Resource
	for _, s := range c.Skills {
		if res, ok := s.Entry.Resource("skill://a/big.txt"); ok {
			big = res
		}
	}
	for range 3 {
		b, err := r.o.Fetch(context.Background(), big)
		if err != nil || verify.CheckContent(big, b) != nil {
			t.Fatalf("fetch again: %d bytes, %v", len(b), err)
		}
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			b, err := r.o.Fetch(context.Background(), big)
			if err == nil {
				err = verify.CheckContent(big, b)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent fetch: %v", err)
		}
	}
	if n := served.Load(); n != 11 {
		t.Errorf("the server answered %d reads, want 11: each fetch asks it", n)
	}
}
