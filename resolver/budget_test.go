package resolver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/skillserver"
)

func TestBudgetWindowEdge(t *testing.T) {
	const hour = time.Hour
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := newBudget(100, hour)
	if _, err := b.take(t0, 100); err != nil {
		t.Fatalf("exactly the budget: %v", err)
	}
	if _, err := b.take(t0, 1); !errors.Is(err, ErrOverBudget) {
		t.Errorf("one byte more: %v, want ErrOverBudget", err)
	}
	if _, err := b.take(t0, 0); !errors.Is(err, ErrOverBudget) {
		t.Errorf("an unknown size with the budget spent: %v, want ErrOverBudget", err)
	}
	if _, err := b.take(t0.Add(hour-time.Nanosecond), 1); !errors.Is(err, ErrOverBudget) {
		t.Errorf("one byte just before the window passed: %v, want ErrOverBudget", err)
	}
	if got := b.used(t0.Add(hour - time.Nanosecond)); got != 100 {
		t.Errorf("used just before the window passed: %d, want 100", got)
	}
	t1 := t0.Add(hour)
	if _, err := b.take(t1, 100); err != nil {
		t.Errorf("the whole budget again after the window: %v", err)
	}
	if _, err := b.take(t1, 1); !errors.Is(err, ErrOverBudget) {
		t.Errorf("one byte more in the new window: %v, want ErrOverBudget", err)
	}
	if _, err := newBudget(100, hour).take(t0, 101); !errors.Is(err, ErrOverBudget) {
		t.Errorf("a file larger than the budget: %v, want ErrOverBudget", err)
	}
}

func TestBudgetSlidingAndSettle(t *testing.T) {
	const hour = time.Hour
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := newBudget(100, hour)
	id, err := b.take(t0, 60)
	if err != nil {
		t.Fatal(err)
	}
	b.settle(t0, id, 60, 40) // declared 60, 40 arrived
	if got := b.used(t0); got != 40 {
		t.Errorf("used after settling 60 → 40: %d", got)
	}
	// Half a window later, 60 more fit, 61 do not.
	half := t0.Add(hour / 2)
	if _, err := b.take(half, 61); !errors.Is(err, ErrOverBudget) {
		t.Errorf("61 bytes with 40 in the window: %v", err)
	}
	if _, err := b.take(half, 60); err != nil {
		t.Fatalf("60 bytes with 40 in the window: %v", err)
	}
	// The first 40 leave the window an hour after they were charged; the
	// later 60 stay until an hour after theirs.
	if got := b.used(t0.Add(hour)); got != 60 {
		t.Errorf("used after the first charge's window: %d, want 60", got)
	}
	if got := b.used(half.Add(hour)); got != 0 {
		t.Errorf("used after both windows: %d, want 0", got)
	}
	// Bytes beyond a reservation (unknown size) are charged when they
	// arrive: a whole window after that.
	id, _ = b.take(half.Add(hour), 0)
	late := half.Add(hour + hour/2)
	b.settle(late, id, 0, 30)
	if got := b.used(late.Add(hour - time.Nanosecond)); got != 30 {
		t.Errorf("bytes of an unknown-size read, just before their window ends: %d, want 30", got)
	}
}

// However many reads a window holds, the budget keeps a bounded number of
// slices.
func TestBudgetSlicesBounded(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := newBudget(1<<40, time.Hour)
	for i := range 100_000 {
		if _, err := b.take(t0.Add(time.Duration(i)*time.Hour/100_000), 1); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(b.slices); n > budgetSlices+1 {
		t.Errorf("%d slices for one window of reads, want at most %d", n, budgetSlices+1)
	}
	if got := b.used(t0.Add(time.Hour - 1)); got != 100_000 {
		t.Errorf("used %d, want 100000", got)
	}
}

// clock is a settable time for a Session.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// startOrigin serves dir with the honest server over pipes and runs an
// Session on it; setup may replace the Session's clock and sleeper before
// it runs. dial, when set, is asked first on every connection attempt and
// may fail it.
func startOrigin(t *testing.T, dir string, limits func(*config.Limits), setup func(*Session), dial func(n int) error, onCatalog func(*Catalog, io.Closer)) *Session {
	t.Helper()
	srv, err := skillserver.New(dir, skillserver.Options{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	oc := config.Origin{Label: "t", Kind: config.Stdio, Command: "x", Limits: config.DefaultLimits()}
	oc.Limits.CallTimeout = 10 * time.Second
	if limits != nil {
		limits(&oc.Limits)
	}
	var (
		mu     sync.Mutex
		n      int
		server net.Conn
	)
	o := New(Options{
		Origin: oc,
		Dial: func(context.Context) (io.ReadWriteCloser, error) {
			mu.Lock()
			n++
			k := n
			mu.Unlock()
			if dial != nil {
				if err := dial(k); err != nil {
					return nil, err
				}
			}
			c, s := net.Pipe()
			mu.Lock()
			server = s
			mu.Unlock()
			go func() { srv.ServeConn(ctx, s); s.Close() }()
			return c, nil
		},
		OnCatalog: func(c *Catalog) {
			if onCatalog != nil {
				mu.Lock()
				s := server
				mu.Unlock()
				onCatalog(c, s)
			}
		},
	})
	if setup != nil {
		setup(o)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); o.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return o
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Fetch, through a live session, at the edge of the budget window: the
// budget passes, one file more is refused, and after the window the same
// file is fetched again.
func TestFetchBudgetWindow(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	catalogs := make(chan *Catalog, 8)
	o := startOrigin(t, writeFiles(t, files), func(l *config.Limits) {
		l.Budget = 200_000 // exactly two big.txt
		l.BudgetWindow = time.Minute
	}, func(o *Session) { o.now = clk.now }, nil, func(c *Catalog, _ io.Closer) { catalogs <- c })
	var c *Catalog
	select {
	case c = <-catalogs:
	case <-time.After(5 * time.Minute):
		t.Fatal("no catalog within 5m")
	}
	var big skill.Resource
	for _, s := range c.Skills {
		if r, ok := s.Entry.Resource("skill://a/big.txt"); ok {
			big = r
		}
	}
	if big.Size != 100_000 {
		t.Fatalf("big.txt: %+v", big)
	}
	ctx := context.Background()
	for i := range 2 {
		if _, err := o.Fetch(ctx, big); err != nil {
			t.Fatalf("fetch %d within the budget: %v", i+1, err)
		}
		clk.advance(time.Second)
	}
	if _, err := o.Fetch(ctx, big); !errors.Is(err, ErrOverBudget) {
		t.Fatalf("third fetch: %v, want ErrOverBudget", err)
	}
	st := o.Status()
	if st.BytesFetched != 200_000 || st.Budget != 200_000 || st.BudgetWindow != time.Minute || st.Reads != 2 {
		t.Errorf("status over budget: %+v", st)
	}
	// The first fetch leaves the window a minute after it was charged.
	clk.advance(time.Minute - 2*time.Second)
	if _, err := o.Fetch(ctx, big); err != nil {
		t.Fatalf("fetch after the first one's window: %v", err)
	}
	if st := o.Status(); st.BytesFetched != 200_000 || st.Reads != 3 {
		t.Errorf("status after the window: bytes %d, reads %d", st.BytesFetched, st.Reads)
	}
}

// TestBackoffResetsAfterHealthySession: failed connection attempts wait
// longer each time; a session that connected and listed puts the wait back
// to the minimum. The sleeper records each wait asked for.
func TestBackoffResetsAfterHealthySession(t *testing.T) {
	var (
		mu    sync.Mutex
		waits []time.Duration
	)
	enough := make(chan struct{})
	sleep := func(ctx context.Context, d time.Duration) {
		mu.Lock()
		waits = append(waits, d)
		n := len(waits)
		mu.Unlock()
		if n == 7 {
			close(enough)
		}
		if n >= 7 {
			<-ctx.Done()
		}
	}
	// Attempts 1–3 fail, 4 connects and lists (and then the server hangs
	// up), 5–6 fail, 7 connects and lists and hangs up.
	fail := map[int]bool{1: true, 2: true, 3: true, 5: true, 6: true}
	startOrigin(t, writeFiles(t, files), nil, func(o *Session) { o.sleep = sleep },
		func(n int) error {
			if fail[n] {
				return fmt.Errorf("attempt %d refused", n)
			}
			return nil
		},
		func(_ *Catalog, server io.Closer) { server.Close() })
	select {
	case <-enough:
	case <-time.After(5 * time.Minute):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("only %d reconnects within 60s: %v", len(waits), waits)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []time.Duration{
		minBackoff, 2 * minBackoff, 4 * minBackoff, // after attempts 1–3
		minBackoff,                     // after attempt 4's healthy session
		2 * minBackoff, 4 * minBackoff, // after 5–6
		minBackoff, // after attempt 7's healthy session
	}
	if fmt.Sprint(waits[:7]) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v", waits[:7], want)
	}
}

// TestFetchToKeepHasItsOwnAccount: what FetchToKeep fetches is charged to
// the keep budget, a quarter of the budget, and never to the budget that
// Fetch (the mount's reads) spends; over the keep budget it is refused
// before anything is sent, and reads still have their whole budget.
func TestFetchToKeepHasItsOwnAccount(t *testing.T) {
	catalogs := make(chan *Catalog, 8)
	o := startOrigin(t, writeFiles(t, files), func(l *config.Limits) {
		l.Budget = 400_000 // four big.txt for reads, one to keep
		l.BudgetWindow = time.Hour
	}, nil, nil, func(c *Catalog, _ io.Closer) { catalogs <- c })
	var c *Catalog
	select {
	case c = <-catalogs:
	case <-time.After(5 * time.Minute):
		t.Fatal("no catalog within 5m")
	}
	var big skill.Resource
	for _, s := range c.Skills {
		if r, ok := s.Entry.Resource("skill://a/big.txt"); ok {
			big = r
		}
	}
	ctx := context.Background()
	if _, err := o.FetchToKeep(ctx, big); err != nil {
		t.Fatalf("a keep within the keep budget: %v", err)
	}
	if _, err := o.FetchToKeep(ctx, big); !errors.Is(err, ErrOverBudget) {
		t.Fatalf("a keep over the keep budget: %v, want ErrOverBudget", err)
	}
	if st := o.Status(); st.KeepFetched != 100_000 || st.KeepBudget != 100_000 || st.BytesFetched != 0 || st.Reads != 1 {
		t.Errorf("status after the keeps: %+v", st)
	}
	for i := range 4 {
		if _, err := o.Fetch(ctx, big); err != nil {
			t.Fatalf("read %d within the budget, after the keep budget ran out: %v", i+1, err)
		}
	}
	if st := o.Status(); st.BytesFetched != 400_000 || st.KeepFetched != 100_000 {
		t.Errorf("status after the reads: %+v", st)
	}
}
