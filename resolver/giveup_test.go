package resolver

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/testkit"
)

// TestGaveUpWaitsForRefresh: after Limits.StartAttempts failed starts in a
// row the session gives up and waits for Refresh (the daemon's SIGHUP)
// alone. The clock never makes it wait (sleep returns at once), so a
// retry on any schedule would be made at once, over and over: the server
// is asked exactly twice before Refresh and once after, however long the
// test takes.
func TestGaveUpWaitsForRefresh(t *testing.T) {
	var (
		mu     sync.Mutex
		dials  int
		sleeps []time.Duration
	)
	var failing atomic.Bool
	failing.Store(true)
	o := startOrigin(t, writeFiles(t, files), func(l *config.Limits) { l.StartAttempts = 2 },
		func(o *Session) {
			o.sleep = func(_ context.Context, d time.Duration) {
				mu.Lock()
				sleeps = append(sleeps, d)
				mu.Unlock()
			}
		},
		func(n int) error {
			mu.Lock()
			dials = n
			mu.Unlock()
			if failing.Load() {
				return fmt.Errorf("attempt %d refused", n)
			}
			return nil
		}, nil)
	testkit.WaitFor(t, time.Minute, "the session to give up", func() bool { return o.Status().State == StateGaveUp })
	st := o.Status()
	if st.FailedStarts != 2 {
		t.Errorf("given up after %d failed starts, want 2", st.FailedStarts)
	}
	failing.Store(false)
	o.Refresh()
	testkit.WaitFor(t, time.Minute, "the session to connect after Refresh", func() bool { return o.Status().State == StateConnected })
	mu.Lock()
	defer mu.Unlock()
	if dials != 3 {
		t.Errorf("the server was asked %d times, want 3: two failed starts, then one on Refresh", dials)
	}
	if len(sleeps) != 1 || sleeps[0] != minBackoff {
		t.Errorf("%d waits (first %v), want one of %v between the two failed starts and none while given up", len(sleeps), sleeps[:min(len(sleeps), 4)], minBackoff)
	}
}
