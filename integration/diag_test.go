//go:build linux

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillfs/skillfs/integration/hostile"
)

// The daemon's own diagnostics: how a stdio server that crashed ended and
// what it last wrote to stderr, in `skillfs status` and `status --json`
// and nowhere under the mount; why `skillfs list LABEL` is empty.

// exitStatusJSON is a server row of `skillfs status --json` with what the
// diagnostics add.
type exitStatusJSON struct {
	Servers []struct {
		Label        string    `json:"label"`
		State        string    `json:"state"`
		Available    int       `json:"available"`
		FailedStarts int       `json:"failed_starts"`
		LastError    string    `json:"last_error"`
		Exit         *exitJSON `json:"exit"`
	} `json:"servers"`
}

type exitJSON struct {
	Status        string   `json:"status"`
	Code          int      `json:"code"`
	Signal        int      `json:"signal"`
	Stderr        []string `json:"stderr"`
	StderrDropped int      `json:"stderr_dropped"`
}

// TestStatusShowsHowAStdioServerCrashed: a server that writes 25 lines to
// stderr, terminal escapes in the last, and exits 3 before it answers
// anything, and one that kills itself with SIGKILL: `skillfs status` and
// `status --json` show the exit status and the last 20 lines, escaped;
// `skillfs list LABEL` says why it is empty; no file under the mount holds
// a word of that stderr; and once the server comes back and lists, its
// count of failed starts is gone.
func TestStatusShowsHowAStdioServerCrashed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	genTree(t, dir, "local")
	state := filepath.Join(t.TempDir(), "state.json")
	env := runtimeEnv(t)
	cfg := writeConfig(t, map[string]any{
		"local":  stdioServe(dir, os.DevNull),
		"crash":  hostileStdio(t, hostile.Options{Fixtures: []string{}, Mode: hostile.ModeCrashExit, StateFile: state}),
		"killed": hostileStdio(t, hostile.Options{Fixtures: []string{}, Mode: hostile.ModeCrashSignal}),
	}, nil)
	m := startMountEnv(t, env, cfg)
	m.warnings = true // the crashes are logged, as they should be

	var st exitStatusJSON
	rows := map[string]int{}
	waitFor(t, 2*time.Minute, "both crashes in status --json", func() bool {
		out, errOut, code := ctl(t, env, "status", "--json")
		if code != 0 {
			t.Fatalf("status --json: exit %d\n%s", code, errOut)
		}
		st = exitStatusJSON{}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("status --json: %v\n%s", err, out)
		}
		for i, s := range st.Servers {
			rows[s.Label] = i
		}
		c, k := st.Servers[rows["crash"]], st.Servers[rows["killed"]]
		return c.Exit != nil && c.FailedStarts > 0 && k.Exit != nil
	})
	crash, killed := st.Servers[rows["crash"]], st.Servers[rows["killed"]]
	if x := crash.Exit; x.Status != "exit status 3" || x.Code != 3 || x.Signal != 0 {
		t.Errorf("crash's exit: %+v", x)
	}
	if x := killed.Exit; x.Status != "killed by signal 9 (killed)" || x.Code != -1 || x.Signal != 9 {
		t.Errorf("killed's exit: %+v", x)
	}
	// The bound at its edge: 25 lines written, the last 20 kept.
	want := hostile.CrashStderr()[hostile.CrashLines-20:]
	for label, x := range map[string]*exitJSON{"crash": crash.Exit, "killed": killed.Exit} {
		if len(x.Stderr) != 20 || x.StderrDropped != hostile.CrashLines-20 {
			t.Fatalf("%s: %d stderr lines kept, %d dropped; want 20 and %d\n%q", label, len(x.Stderr), x.StderrDropped, hostile.CrashLines-20, x.Stderr)
		}
		if x.Stderr[0] != strings.TrimSuffix(want[0], "\n") || !strings.HasPrefix(x.Stderr[0], "crash line 06 of 25") {
			t.Errorf("%s: the first line kept is %q, want %q", label, x.Stderr[0], want[0])
		}
		for _, line := range x.Stderr {
			if i := strings.IndexFunc(line, func(r rune) bool {
				return r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x202e || r == 0xfffd
			}); i >= 0 {
				t.Errorf("%s: a stderr line is not escaped (at %d): %q", label, i, line)
			}
		}
		if got := x.Stderr[18]; got != "crash line 24 of 25: a bad byte <0xFF> here" {
			t.Errorf("%s: the line with a byte that is not UTF-8: %q", label, got)
		}
		const esc = "fatal: <U+001B>[31mred<U+001B>[0m <U+0007> <U+001B>]0;pwned-title<U+0007> <U+009B>2J <U+000D><U+202E>evil<U+202C> <U+001B>[2K<U+001B>[1Gskillfs: all good"
		if last := x.Stderr[19]; last != esc {
			t.Errorf("%s: the escaped last line:\n got %q\nwant %q", label, last, esc)
		}
	}

	// The text: the exit, the count of failed starts, the lines behind
	// "  | ", nothing that acts on a terminal.
	out, _, code := ctl(t, env, "status")
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	if strings.ContainsAny(out, "\x1b\a\r\u009b\u202e") {
		t.Errorf("skillfs status lets a control character through:\n%q", out)
	}
	for _, w := range []string{
		"\ncrash  exited ", "ago (exit status 3); ", " failed start",
		"\nkilled  exited ", "ago (killed by signal 9 (killed))",
		"  the last 20 lines of its stderr (the server's own output, escaped; 5 earlier not kept):\n  | crash line 06 of 25\n",
		"\n  | fatal: <U+001B>[31mred",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("skillfs status does not say %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "crash line 05") {
		t.Errorf("skillfs status shows a line past the bound:\n%s", out)
	}

	// list LABEL of the crashing server says why it is empty.
	out, _, code = ctl(t, env, "list", "crash")
	if code != 0 || !strings.HasPrefix(out, "crash: no skills: the server is ") || !strings.Contains(out, " failed start") ||
		!strings.Contains(out, "(exit status 3): `skillfs status` shows the end of its stderr") {
		t.Errorf("skillfs list crash: exit %d\n%s", code, out)
	}

	// Nothing under the mount holds a word of the servers' stderr: a
	// server could aim it at a model reading the generated files.
	filepath.WalkDir(m.Path(".skillfs"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".sock") {
			return nil
		}
		b, err := readGenerated(p)
		if err != nil {
			return nil
		}
		for _, w := range []string{"crash line", "pwned-title", "bad byte"} {
			if strings.Contains(string(b), w) {
				t.Errorf("%s holds the server's stderr (%q)", p, w)
			}
		}
		return nil
	})

	// The server comes back: it connects and lists, and its failed starts
	// are no longer counted.
	if err := hostile.WriteState(state, hostile.State{Phase: "up"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Minute, "crash to come back and list", func() bool {
		out, _, _ := ctl(t, env, "status", "--json")
		st = exitStatusJSON{}
		json.Unmarshal([]byte(out), &st)
		for _, s := range st.Servers {
			if s.Label == "crash" {
				crash = s
				return s.State == "connected" && s.Available > 0
			}
		}
		return false
	})
	if crash.FailedStarts != 0 {
		t.Errorf("failed_starts after the server came back: %d", crash.FailedStarts)
	}
	out, _, _ = ctl(t, env, "status")
	if !strings.Contains(out, "\ncrash  exited ") || !strings.Contains(out, "ago (exit status 3); connected again since\n") {
		t.Errorf("skillfs status once the server is back:\n%s", out)
	}
	out, _, code = ctl(t, env, "list", "crash")
	if code != 0 || !strings.HasPrefix(out, "PATH") || !strings.Contains(out, "crash/") {
		t.Errorf("skillfs list crash once it is back: exit %d\n%s", code, out)
	}
	m.fds = openFDs(m.cmd.Process.Pid) // servers started after the mount went live
}
