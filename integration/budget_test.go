//go:build linux

package integration

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/skillfs/skillfs/integration/hostile"
)

// TestHostileBudgetWindow: the per-server budget is a rate. Over budget,
// a read fails with EIO and reason over-budget; once the window has
// passed, the same read succeeds, so a long-lived mount never runs dry
// for good, while a server still gets at most budget bytes per window.
func TestHostileBudgetWindow(t *testing.T) {
	t.Parallel()
	good := newHonest(t)
	cfg := writeConfig(t, map[string]any{
		"good": good.entry(),
		"evil": hostileStdio(t, hostile.Options{Fixtures: []string{hostile.Budget1, hostile.Budget2, hostile.Budget3}}),
	}, map[string]any{"servers": map[string]any{"evil": map[string]any{"limits": map[string]any{
		"budget": "1MiB", // one 640 KiB file fits, two do not
		// Long enough that two reads started together share a window
		// however loaded the machine (each reserves its bytes before it
		// fetches, so the reservations are apart by the daemon's
		// scheduling only); short enough that waiting it out is cheap.
		// The window's edges are resolver.TestBudgetWindowEdge and
		// TestFetchBudgetWindow, with a clock the test moves.
		"budget_window": "10s",
		// A read slowed by load must not time out (EIO) and pass for a
		// refusal.
		"call_timeout": "10m",
	}}}})
	m := startMount(t, cfg)
	m.warnings = true // over-budget reads warn, as they should

	big := func(fixture string) string { return m.Path("evil", fixture, "big.txt") }
	// Two 640 KiB reads at once: each reserves its declared size before it
	// asks, so one of them is over the 1 MiB budget.
	errs := make([]error, 2)
	done := make(chan int, 2)
	pair := []string{hostile.Budget1, hostile.Budget2}
	for i, f := range pair {
		go func() {
			_, errs[i] = os.ReadFile(big(f))
			done <- i
		}()
	}
	<-done
	<-done
	refused := ""
	for i, err := range errs {
		switch {
		case errors.Is(err, syscall.EIO):
			if refused != "" {
				t.Fatalf("both %s and %s were refused; one fits the budget", pair[0], pair[1])
			}
			refused = pair[i]
		case err != nil:
			t.Fatalf("%s: %v, want EIO or the bytes", pair[i], err)
		}
	}
	if refused == "" {
		t.Fatal("no read was refused over the budget")
	}
	if _, reason, _, _ := indexEntry(t, m, "evil", "skill://"+refused+"/SKILL.md"); reason != "over-budget" {
		t.Errorf("%s: reason %q, want over-budget", refused, reason)
	}
	if st := readStatus(t, m)["evil"]; st.BytesFetched > st.Budget || st.Budget != 1<<20 {
		t.Errorf("status: %d bytes fetched of a %d budget", st.BytesFetched, st.Budget)
	}
	good.check(t, m)

	// After the window the refused file reads.
	var err error
	waitFor(t, 5*time.Minute, refused+" after the budget window", func() bool {
		_, err = os.ReadFile(big(refused))
		return err == nil
	})
	if st, _, _, _ := indexEntry(t, m, "evil", "skill://"+refused+"/SKILL.md"); st == "failed" {
		t.Errorf("%s still failed in index.json after it read", refused)
	}
}
