//go:build linux

package integration

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillfs/skillfs/integration/hostile"
)

// TestHostileNotificationStorm: a server that floods the daemon with
// notifications (list_changed, log messages, progress, resources/updated,
// as fast as its pipe takes them) gets a bounded number of re-lists out
// of it; the honest origin in the same mount reads correctly throughout,
// the storm origin's own files still read, and the daemon survives and
// says once that it is dropping notifications.
func TestHostileNotificationStorm(t *testing.T) {
	t.Parallel()
	good := newHonest(t)
	access := filepath.Join(t.TempDir(), "storm.log")
	cfg := writeConfig(t, map[string]any{
		"good":  good.entry(),
		"storm": hostileStdio(t, hostile.Options{Fixtures: []string{}, Mode: hostile.ModeNotifyStorm, AccessLog: access}),
	}, nil)
	m := startMount(t, cfg)
	m.warnings = true // the storm is worth a warning

	waitFor(t, 60*time.Second, "the storm origin's listing", func() bool {
		_, err := os.Stat(m.Path("storm", "honest-a", "SKILL.md"))
		return err == nil
	})
	before := countLines(t, access, "skills/list ")
	cpu0, start := cpuTicks(t, m.cmd.Process.Pid), time.Now()
	// Three seconds of storm (more than one re-list gap), during which the
	// honest origin is read over and over, every 20 ms: a loop without
	// pause would cost a core of its own (the test's and the daemon's)
	// and prove nothing more.
	for time.Since(start) < 3*time.Second {
		good.check(t, m)
		if t.Failed() {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	elapsed := time.Since(start)
	lists := countLines(t, access, "skills/list ") - before
	cpu := cpuTicks(t, m.cmd.Process.Pid) - cpu0
	t.Logf("storm of %v: %d skills/list calls, daemon CPU %d ticks (%.0f%% of a core)", elapsed.Round(time.Millisecond), lists, cpu, 100*float64(cpu)/100/elapsed.Seconds())

	// The resolver re-lists on notifications at most once per 2 s (see
	// resolver.DefaultRelistGap); a slow machine makes fewer, not more.
	if limit := 3 + int(elapsed/(2*time.Second)); lists > limit {
		t.Errorf("%d skills/list calls during %v of storm, want at most %d", lists, elapsed, limit)
	}
	if b, err := os.ReadFile(m.Path("storm", "honest-a", "SKILL.md")); err != nil || len(b) == 0 {
		t.Errorf("the storm origin's own file during the storm: %v", err)
	}
	if st := readStatus(t, m)["storm"]; st.State != "connected" {
		t.Errorf("storm origin: state %q, last_error %q", st.State, st.LastError)
	}
	if n := strings.Count(m.log.String(), "notifications from the server dropped"); n == 0 || n > 3 {
		t.Errorf("the daemon logged the storm %d times, want once (or a few)", n)
	}
}

func countLines(t *testing.T, path, prefix string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	n := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		if bytes.HasPrefix(line, []byte(prefix)) {
			n++
		}
	}
	return n
}

// cpuTicks is utime+stime of pid, in clock ticks (1/100 s on Linux).
func cpuTicks(t *testing.T, pid int) int64 {
	t.Helper()
	f := procStat(t, fmt.Sprintf("/proc/%d/stat", pid))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// procStat returns the fields of a /proc stat file after the command name
// (which is in parentheses and may hold spaces and parentheses): state
// first, then ppid, and so on.
func procStat(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		t.Fatalf("%s: %q is not a stat line", path, b)
	}
	return f
}
