//go:build linux

package integration

import (
	"encoding/json"
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
		"budget":        "10MiB", // one 6 MiB file fits, two do not
		"budget_window": "5s",
	}}}})
	m := startMount(t, cfg)
	m.warnings = true // over-budget reads warn, as they should

	big := func(fixture string) string { return m.Path("evil", fixture, "big.txt") }
	if _, err := os.ReadFile(big(hostile.Budget1)); err != nil {
		t.Fatalf("the first 6 MiB file within a 10 MiB budget: %v", err)
	}
	// The next read is over budget. (Should the machine stall for a whole
	// window between two reads, the one after is.)
	refused := ""
	for _, f := range []string{hostile.Budget2, hostile.Budget3} {
		_, err := os.ReadFile(big(f))
		if errors.Is(err, syscall.EIO) {
			refused = f
			break
		}
		if err != nil {
			t.Fatalf("%s: %v, want EIO or the bytes", f, err)
		}
	}
	if refused == "" {
		t.Fatal("no read was refused over the budget")
	}
	if _, reason, _, _ := indexEntry(t, m, "evil", "skill://"+refused+"/SKILL.md"); reason != "over-budget" {
		t.Errorf("%s: reason %q, want over-budget", refused, reason)
	}
	if st := budgetStatus(t, m, "evil"); st.BytesFetched > st.Budget || st.Budget != 10<<20 {
		t.Errorf("status: %d bytes fetched of a %d budget", st.BytesFetched, st.Budget)
	}
	good.check(t, m)

	// After the window the refused file reads.
	var err error
	waitFor(t, 2*time.Minute, refused+" after the budget window", func() bool {
		_, err = os.ReadFile(big(refused))
		return err == nil
	})
	if st, _, _, _ := indexEntry(t, m, "evil", "skill://"+refused+"/SKILL.md"); st == "failed" {
		t.Errorf("%s still failed in index.json after it read", refused)
	}
}

type budgetState struct {
	BytesFetched int64 `json:"bytes_fetched"`
	Budget       int64 `json:"budget"`
}

func budgetStatus(t *testing.T, m *mount, label string) budgetState {
	t.Helper()
	b, err := os.ReadFile(m.Path(".skillfs", "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Origins []struct {
			Label string `json:"label"`
			budgetState
		} `json:"origins"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	for _, o := range st.Origins {
		if o.Label == label {
			return o.budgetState
		}
	}
	t.Fatalf("no origin %s in status.json", label)
	return budgetState{}
}
