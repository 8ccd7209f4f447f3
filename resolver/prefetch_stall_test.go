package resolver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/skillserver"
	"github.com/skillfs/skillfs/internal/testkit"
)

// stallBound is how long any step of the stall tests may take: far more
// than the short timeouts they configure, far less than the long ones.
const stallBound = 20 * time.Second

type stallListParams struct {
	mcp.ParamsBase
	skill.ListParams
}

type stallListResult struct {
	mcp.ResultBase
	skill.ListResult[skill.Entry]
}

// stallGone is the context key under which a connection's "closed" channel
// reaches the server's handlers.
type stallGone struct{}

// goneConn is the server's end of a pipe; gone is closed when reading
// from it fails, that is when the client has closed the session.
type goneConn struct {
	net.Conn
	once      sync.Once
	gone      chan struct{}
	marker    []byte
	delivered chan struct{} // closed once a write holding marker was read
	dOnce     sync.Once
}

func (c *goneConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.once.Do(func() { close(c.gone) })
	}
	return n, err
}

// Write returns only once the client has read the bytes (net.Pipe).
func (c *goneConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err == nil && bytes.Contains(p, c.marker) {
		c.dOnce.Do(func() { close(c.delivered) })
	}
	return n, err
}

// stallServer is a real go-sdk MCP server declaring the skills extension.
// Its skills/list answers the first page at once and holds the second
// page's request, the one the lister asks ahead: it ignores the client's
// cancellation and lets go only when the session closes, or, when let is
// closed, answers late with the late entries.
type stallServer struct {
	mcp   *mcp.Server
	pages [][]skill.Entry
	late  []skill.Entry
	let   chan struct{}
	// holdOnce holds only the first request for the second page.
	holdOnce bool

	mu       sync.Mutex
	asked    []string // cursors, in order
	second   int      // requests for the second page
	held     chan struct{}
	holding  atomic.Int32
	released chan string
	// askedAhead: when the held request arrived, a goroutine of the
	// resolver's prefetch was waiting for it.
	askedAhead atomic.Bool
	noGone     atomic.Bool
	// rig labels the goroutines of the rig serving this server
	// (newStallRig); set before any request.
	rig string
}

func newStallServer(t *testing.T, pages [][]skill.Entry, late []skill.Entry, holdOnce bool) *stallServer {
	t.Helper()
	s := &stallServer{pages: pages, late: late, let: make(chan struct{}), holdOnce: holdOnce,
		held: make(chan struct{}, 8), released: make(chan string, 8)}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "stall", Version: "0"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Extensions: map[string]any{skill.ExtensionID: skill.Settings{}}},
	})
	if err := mcp.AddReceivingCustomMethod(s.mcp, skill.MethodList, s.list); err != nil {
		t.Fatal(err)
	}
	return s
}

func pageCursor(i int) string { return "page-" + string(rune('0'+i)) }

func (s *stallServer) list(ctx context.Context, _ *mcp.ServerSession, p *stallListParams) (*stallListResult, error) {
	cursor := ""
	if p != nil {
		cursor = p.Cursor
	}
	s.mu.Lock()
	s.asked = append(s.asked, cursor)
	hold := false
	if cursor == pageCursor(1) {
		s.second++
		hold = !s.holdOnce || s.second == 1
	}
	s.mu.Unlock()
	page := 0
	for i := range s.pages {
		if cursor == pageCursor(i) || (i == 0 && cursor == "") {
			page = i
		}
	}
	res := &stallListResult{}
	if p != nil {
		// The 2026-07-28 protocol's results carry these.
		if v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string); v >= "2026-07-28" {
			res.ResultType, res.CacheScope = skill.ResultComplete, skill.ScopePublic
		}
	}
	res.Skills = s.pages[page]
	if page+1 < len(s.pages) {
		res.NextCursor = pageCursor(page + 1)
	}
	if !hold {
		return res, nil
	}
	s.askedAhead.Store(rigGoroutines(s.rig, "resolver.startPrefetch") > 0)
	s.holding.Add(1)
	defer s.holding.Add(-1)
	s.held <- struct{}{}
	gone, _ := ctx.Value(stallGone{}).(chan struct{})
	if gone == nil {
		s.noGone.Store(true)
		return nil, errors.New("stall: no connection to watch")
	}
	// ctx.Done() is left out on purpose: the client giving up does not
	// make this server answer.
	select {
	case <-gone:
		s.released <- "the session closed"
		return nil, errors.New("stall: the session closed")
	case <-s.let:
		s.released <- "answered late"
		res.Skills, res.NextCursor = s.late, ""
		return res, nil
	}
}

// release waits for the held handler to end and says why it did.
func (s *stallServer) release(t *testing.T) string {
	t.Helper()
	select {
	case why := <-s.released:
		return why
	case <-time.After(stallBound):
		return "still held after " + stallBound.String()
	}
}

func (s *stallServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.asked...)
}

// rigLabel is the pprof label newStallRig runs its session under: every
// goroutine the session starts, and those of the server it dials, inherit
// it, so that rigs running in parallel count only their own.
const rigLabel = "stall-rig"

var rigs atomic.Int64

// rigGoroutines counts the goroutines of rig whose stack mentions fn, or
// all of them when fn is "".
func rigGoroutines(rig, fn string) int {
	var b bytes.Buffer
	pprof.Lookup("goroutine").WriteTo(&b, 1)
	label := fmt.Sprintf("%q:%q", rigLabel, rig)
	n := 0
	for _, rec := range strings.Split(b.String(), "\n\n") {
		if strings.HasPrefix(rec, "goroutine profile:") {
			_, rec, _ = strings.Cut(rec, "\n")
		}
		if !strings.Contains(rec, label) || !strings.Contains(rec, fn) {
			continue
		}
		var count int
		if _, err := fmt.Sscanf(rec, "%d @", &count); err == nil {
			n += count
		}
	}
	return n
}

func allStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// poll waits up to stallBound for cond.
func poll(cond func() bool) bool { return testkit.Poll(stallBound, cond) }

// stallRig runs a Session on a stallServer over pipes. stop closes the
// session the way the daemon does (its context ends) and waits, within
// stallBound, for the Session and every server connection to end.
type stallRig struct {
	id        string // its goroutines' rigLabel
	o         *Session
	cats      chan *Catalog
	stop      func() error
	delivered chan struct{}
}

func newStallRig(t *testing.T, srv *stallServer, marker string, edit func(*config.Limits)) *stallRig {
	t.Helper()
	r := &stallRig{id: fmt.Sprint("rig-", rigs.Add(1)), cats: make(chan *Catalog, 8), delivered: make(chan struct{})}
	srv.rig = r.id
	oc := config.Origin{Label: "stall", Kind: config.Stdio, Command: "x", Limits: config.DefaultLimits()}
	oc.Limits.RefreshInterval = 0
	edit(&oc.Limits)
	var servers sync.WaitGroup
	r.o = New(Options{
		Origin: oc,
		Dial: func(context.Context) (io.ReadWriteCloser, error) {
			c, s := net.Pipe()
			gc := &goneConn{Conn: s, gone: make(chan struct{}), marker: []byte(marker), delivered: r.delivered}
			servers.Add(1)
			go func() {
				defer servers.Done()
				defer s.Close()
				// Not the rig's context: only the session closing may
				// release the server.
				ctx := context.WithValue(context.Background(), stallGone{}, gc.gone)
				ss, err := srv.mcp.Connect(ctx, &mcp.IOTransport{Reader: gc, Writer: gc}, nil)
				if err == nil {
					ss.Wait()
				}
			}()
			return c, nil
		},
		OnCatalog: func(c *Catalog) { r.cats <- c },
	})
	ctx, cancel := context.WithCancel(context.Background())
	var run sync.WaitGroup
	run.Add(1)
	pprof.Do(ctx, pprof.Labels(rigLabel, r.id), func(ctx context.Context) {
		go func() { defer run.Done(); r.o.Run(ctx) }()
	})
	var once sync.Once
	var stopErr error
	r.stop = func() error {
		once.Do(func() {
			cancel()
			done := make(chan struct{})
			go func() { run.Wait(); servers.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(stallBound):
				stopErr = errors.New("the session or its server did not end within " + stallBound.String())
			}
		})
		return stopErr
	}
	t.Cleanup(func() { r.stop() })
	return r
}

func (r *stallRig) catalog(t *testing.T, what string) *Catalog {
	t.Helper()
	select {
	case c := <-r.cats:
		return c
	case <-time.After(stallBound):
		t.Fatalf("%s: no catalog within %v; status %+v", what, stallBound, r.o.Status())
	}
	return nil
}

// TestStalledPageAskedAheadTimesOut: the lister asks for page 2 while it
// admits page 1, and the server answers page 1 at once but never page 2
// (it ignores the client's cancellation). The listing ends within a
// bounded time with the timeout that applies, is published only as
// truncated with page 1's skills, leaves no goroutine of the prefetch
// behind, and the held server handler is let go when the session closes.
// A page 2 answered after the client gave up is ignored: the next listing
// is whole and holds none of it.
func TestStalledPageAskedAheadTimesOut(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a/SKILL.md":    "---\nname: a\ndescription: A\n---\n",
		"b/SKILL.md":    "---\nname: b\ndescription: B\n---\n",
		"c/SKILL.md":    "---\nname: c\ndescription: C\n---\n",
		"late/SKILL.md": "---\nname: late\ndescription: Late\n---\n",
	})
	ss, err := skillserver.New(dir, skillserver.Options{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]skill.Entry{}
	for _, e := range ss.Skills() {
		byName[e.Name()] = e
	}
	pages := [][]skill.Entry{{byName["a"], byName["b"]}, {byName["c"]}}
	late := []skill.Entry{byName["late"]}

	// The timeouts are short (the test waits each out) and still far
	// longer than page 1 takes, which the server answers at once: a
	// machine slow enough to take 1.5 s over it fails the first check.
	for _, tc := range []struct {
		name      string
		limits    func(*config.Limits)
		truncated []string // all in Catalog.Truncated
		late      bool
	}{
		{"call timeout", func(l *config.Limits) { l.CallTimeout, l.ListTimeout = 1500*time.Millisecond, 10*time.Minute },
			[]string{"page 2 failed", ErrTimeout.Error()}, false},
		{"list timeout", func(l *config.Limits) { l.CallTimeout, l.ListTimeout = 10*time.Minute, 2*time.Second },
			[]string{"stopped after 2s (list_timeout)"}, false},
		{"late answer", func(l *config.Limits) { l.CallTimeout, l.ListTimeout = 1500*time.Millisecond, 10*time.Minute },
			[]string{"page 2 failed", ErrTimeout.Error()}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each waits out its timeout; each counts its own goroutines
			srv := newStallServer(t, pages, late, tc.late)
			r := newStallRig(t, srv, `"late"`, tc.limits)

			select {
			case <-srv.held:
			case <-time.After(stallBound):
				t.Fatalf("page 2 not asked for within %v; requests %q", stallBound, srv.requests())
			}
			if srv.noGone.Load() {
				t.Fatal("the server handler cannot see its connection")
			}
			if !srv.askedAhead.Load() {
				t.Error("page 2 was not asked for ahead: no prefetch goroutine was waiting for it")
			}

			// 1. The listing ends on its own, with the timeout's reason,
			// while the server still holds page 2.
			c := r.catalog(t, "stalled listing")
			for _, want := range tc.truncated {
				if !strings.Contains(c.Truncated, want) {
					t.Errorf("truncated %q, want it to say %q", c.Truncated, want)
				}
			}
			if srv.holding.Load() != 1 {
				t.Errorf("%d handlers held when the listing ended, want 1: the client must give up on its own", srv.holding.Load())
			}
			// 3. Published only as incomplete, with page 1 alone.
			if got := skillNames(c); got != "a,b" || len(c.Rejected) != 0 {
				t.Errorf("catalog %q, rejected %v; want a,b", got, c.Rejected)
			}
			if st := r.o.Status(); st.Truncated != c.Truncated || st.State != StateConnected || st.Skills != 2 {
				t.Errorf("status %+v", st)
			}
			if got := srv.requests(); strings.Join(got, ",") != ","+pageCursor(1) {
				t.Errorf("requests %q, want page 1 and page 2 once each", got)
			}
			// 2. Nothing of the listing is left waiting for the page.
			if !poll(func() bool {
				return rigGoroutines(r.id, "resolver.startPrefetch") == 0 && rigGoroutines(r.id, "resolver.(*Session).enumerate") == 0
			}) {
				t.Errorf("the listing's goroutines are still running %v after it was published:\n%s", stallBound, allStacks())
			}

			if tc.late {
				close(srv.let)
				if why := srv.release(t); why != "answered late" {
					t.Fatalf("held handler: %s", why)
				}
				select {
				case <-r.delivered:
				case <-time.After(stallBound):
					t.Fatalf("the late page 2 was not read by the client within %v", stallBound)
				}
				r.o.Refresh()
				c := r.catalog(t, "listing after the late answer")
				if got := skillNames(c); got != "a,b,c" || c.Truncated != "" {
					t.Errorf("listing after the late answer: %q, truncated %q; want a,b,c whole", got, c.Truncated)
				}
				if st := r.o.Status(); st.State != StateConnected || st.Skills != 3 {
					t.Errorf("status after the late answer %+v", st)
				}
			}

			if err := r.stop(); err != nil {
				t.Fatalf("%v:\n%s", err, allStacks())
			}
			if !tc.late {
				if why := srv.release(t); why != "the session closed" {
					t.Errorf("held handler: %s", why)
				}
			}
			if !poll(func() bool { return srv.holding.Load() == 0 }) {
				t.Errorf("%d server handlers still held %v after the session closed", srv.holding.Load(), stallBound)
			}
			select {
			case c := <-r.cats:
				t.Errorf("a catalog published after the listing: %q, truncated %q", skillNames(c), c.Truncated)
			default:
			}
			if !poll(func() bool { return rigGoroutines(r.id, "") == 0 }) {
				t.Errorf("%d goroutines of the session or its server %v after the session closed:\n%s", rigGoroutines(r.id, ""), stallBound, allStacks())
			}
		})
	}
}

// TestStopMidListingPublishesNothing: a session stopped (unmount, or its
// server's entry changed by a reload) while a page is outstanding
// publishes nothing. The listing it cut short is not the server's
// answer, and publishing it would replace the last whole catalog, saved
// for a restart with the server down, with a part of it.
func TestStopMidListingPublishesNothing(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a/SKILL.md": "---\nname: a\ndescription: A\n---\n",
		"c/SKILL.md": "---\nname: c\ndescription: C\n---\n",
	})
	ss, err := skillserver.New(dir, skillserver.Options{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	e := ss.Skills()
	for _, ahead := range []bool{true, false} {
		t.Run(map[bool]string{true: "asked ahead", false: "page by page"}[ahead], func(t *testing.T) {
			srv := newStallServer(t, [][]skill.Entry{{e[0]}, {e[1]}}, nil, false)
			r := newStallRig(t, srv, "unused-marker", func(l *config.Limits) {
				l.CallTimeout, l.ListTimeout = time.Minute, time.Minute
				if !ahead {
					// A resource cap the next page could reach: no
					// page is asked for ahead of its turn.
					l.MaxListResources = 3
				}
			})
			select {
			case <-srv.held:
			case <-time.After(stallBound):
				t.Fatal("the second page was never asked for")
			}
			if got := srv.askedAhead.Load(); got != ahead {
				t.Fatalf("asked ahead %v, want %v", got, ahead)
			}
			if err := r.stop(); err != nil {
				t.Fatal(err)
			}
			select {
			case c := <-r.cats:
				t.Errorf("a stopped listing was published: %q, truncated %q", skillNames(c), c.Truncated)
			default:
			}
		})
	}
}
