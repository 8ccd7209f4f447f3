//go:build linux

package integration

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestKeepFetchesLeaveTheBudgetToReads: after `approve --all` the mount
// fetches the approved files in the background to keep them for later
// diffs. Those fetches have an account of their own, a quarter of
// limits.budget, so that approving many skills never locks the agent out:
// with a budget of 4 MiB, `approve --all` of 12 skills of 800 KB each
// (4 files of 200 KB beside SKILL.md, every one within what an approval
// keeps), every agent read of those skills that follows succeeds. Before
// the keep account, the keeper spent the whole 4 MiB and 7 of the 12
// skills' reads failed with EIO over-budget for up to an hour.
func TestKeepFetchesLeaveTheBudgetToReads(t *testing.T) {
	t.Parallel()
	const (
		skills   = 12
		parts    = 4
		partSize = 200_000
		budget   = 4 << 20
	)
	dir := t.TempDir()
	files := map[string]string{}
	for i := range skills {
		name := fmt.Sprintf("heavy-%02d", i)
		files[name+"/SKILL.md"] = skillMD(name, "Heavy skill "+name, "Read refs/part-0.md.\n")
		for j := range parts {
			line := fmt.Sprintf("%s part %d: reference text an agent reads\n", name, j)
			files[fmt.Sprintf("%s/refs/part-%d.md", name, j)] = strings.Repeat(line, partSize/len(line)+1)[:partSize]
		}
	}
	writeTree(t, dir, files)
	env := runtimeEnv(t)
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)},
		map[string]any{"servers": map[string]any{"local": map[string]any{
			"approval": "required",
			"limits":   map[string]any{"budget": "4MiB", "call_timeout": "10m"},
		}}})
	m := startMountEnv(t, env, cfg)

	if out, errOut, code := ctl(t, env, "approve", "--all", "local", "--yes", "--mount", m.Dir); code != 0 {
		t.Fatalf("approve --all --yes: exit %d\n%s%s", code, out, errOut)
	}
	// Let the keeper do all it will: the fetch counters stand still.
	var last [2]int64
	still := time.Time{}
	waitFor(t, 5*time.Minute, "the keep fetches to end", func() bool {
		st := readStatus(t, m)["local"]
		now := [2]int64{st.BytesFetched, st.KeepFetched}
		if now != last || still.IsZero() {
			last, still = now, time.Now()
			return false
		}
		return time.Since(still) > 2*time.Second
	})
	st := readStatus(t, m)["local"]
	t.Logf("after the approvals: %d bytes fetched for reads, %d of %d to keep", st.BytesFetched, st.KeepFetched, st.KeepBudget)

	// The agent reads each skill: its SKILL.md and the reference it names.
	failed := 0
	for i := range skills {
		name := fmt.Sprintf("heavy-%02d", i)
		for _, f := range []string{"SKILL.md", "refs/part-0.md"} {
			want := files[name+"/"+f]
			b, err := os.ReadFile(m.Path("local", name, f))
			switch {
			case err != nil:
				failed++
				t.Errorf("read %s/%s after approve --all: %v", name, f, err)
			case string(b) != want:
				t.Errorf("read %s/%s: %d bytes, not the file's %d", name, f, len(b), len(want))
			}
		}
	}
	if failed > 0 {
		t.Logf("%d of %d agent reads failed", failed, 2*skills)
		m.warnings = true // the failed reads warned
	}

	st = readStatus(t, m)["local"]
	if st.KeepBudget != budget/4 {
		t.Errorf("keep budget %d, want a quarter of the %d budget", st.KeepBudget, budget)
	}
	if st.KeepFetched == 0 || st.KeepFetched > st.KeepBudget {
		t.Errorf("%d bytes fetched to keep approved files, want some and at most the keep budget %d", st.KeepFetched, st.KeepBudget)
	}
	if st.BytesFetched > budget {
		t.Errorf("%d bytes fetched for reads, over the %d budget", st.BytesFetched, budget)
	}
	if !m.logged("keeping approved files for later diffs stopped at the keep budget") {
		t.Errorf("the log does not say that keeping stopped at the keep budget:\n%s", m.log.String())
	}
}
