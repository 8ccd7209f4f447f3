//go:build linux

package integration

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/skillfs/skillfs/integration/hostile"
	"github.com/skillfs/skillfs/verify"
)

// rawControl describes the first character of out that acts on a terminal
// or hides: a C0 control other than the newline, DEL, C1, a bidi or other
// format character (verify.Hidden), or a byte that is not UTF-8; "" when
// there is none.
func rawControl(out string) string {
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRuneInString(out[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			return fmt.Sprintf("byte 0x%02X at %d in …%q…", out[i], i, out[max(0, i-40):min(len(out), i+40)])
		case r != '\n' && verify.Hidden(r):
			return fmt.Sprintf("U+%04X at %d in …%q…", r, i, out[max(0, i-40):min(len(out), i+40)])
		}
		i += n
	}
	return ""
}

// TestTerminalOutputIsInert: what a hostile server says — a failure
// reason, an error message, a description, SKILL.md — reaches the
// terminal through the CLI as visible text (<U+001B>, <U+202E>), never as
// escape sequences, BEL, C1 or bidi controls: on the ready line, in the
// --require-all message, in the errors of get and inspect --show, and in
// inspect --show on a terminal. Through a pipe, inspect --show writes
// SKILL.md's exact bytes.
func TestTerminalOutputIsInert(t *testing.T) {
	t.Parallel()
	none := []string{}
	refuses := hostileStdio(t, hostile.Options{Fixtures: none, Mode: hostile.ModeRefuseInitialize})
	cfg := writeConfig(t, map[string]any{
		"escapes": hostileStdio(t, hostile.Options{Fixtures: none, Mode: hostile.ModeTerminalEscapes}),
		"refuses": refuses,
	}, map[string]any{"defaults": map[string]any{"limits": map[string]any{"start_attempts": 1}}})
	env := runtimeEnv(t)
	m := startMountEnv(t, env, cfg)
	m.warnings = true // a server refuses to start, an error is logged

	inert := func(what, out string) {
		t.Helper()
		if bad := rawControl(out); bad != "" {
			t.Errorf("%s prints a raw control character: %s", what, bad)
		}
		if !strings.Contains(out, "<U+001B>") {
			t.Errorf("%s does not show the server's escapes as text: %q", what, out)
		}
	}
	// The ready line names the refusing server's reason.
	inert("the ready line", m.Ready)

	out, errOut, code := ctl(t, env, "get", "--origin", "escapes", "skill://not-served/SKILL.md")
	if code == 0 {
		t.Errorf("get of a URI the server refuses: exit 0: %q", out)
	}
	inert("get's error", out+errOut)

	out, errOut, code = ctl(t, env, "inspect", "--show", "escapes/"+hostile.EscapesUnreadable)
	if code == 0 {
		t.Errorf("inspect --show of an unreadable SKILL.md: exit 0: %q", out)
	}
	inert("inspect --show's error", out+errOut)

	// Through a pipe (ctl's stdout is one): the exact bytes.
	out, errOut, code = ctl(t, env, "inspect", "--show", "escapes/"+hostile.EscapesSkill)
	if code != 0 {
		t.Fatalf("inspect --show: exit %d: %q", code, errOut)
	}
	_, md, _ := strings.Cut(out, " -----\n")
	md, _, found := strings.Cut(md, "----- end of SKILL.md -----")
	if !found || md != hostile.EscapesSkillMD {
		t.Errorf("inspect --show through a pipe:\n got %q\nwant %q", md, hostile.EscapesSkillMD)
	}

	// On a terminal: every control character shown, none acting.
	if _, err := exec.LookPath("script"); err != nil {
		t.Log("no script(1) (util-linux): inspect --show on a terminal not tried")
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "script", "-qec", skillfsBin+" inspect --show escapes/"+hostile.EscapesSkill, "/dev/null")
		cmd.Env = env
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("inspect --show on a terminal: %v: %q", err, b)
		}
		// The terminal's line discipline writes every newline as CR LF.
		tty := strings.ReplaceAll(string(b), "\r\n", "\n")
		inert("inspect --show on a terminal", tty)
		if !strings.Contains(tty, "<U+202E>evil") || !strings.Contains(tty, "<U+009B>2J") {
			t.Errorf("inspect --show on a terminal does not show U+202E and U+009B: %q", tty)
		}
	}

	// Names and descriptions in the tables.
	for _, args := range [][]string{{"inspect", "escapes/" + hostile.EscapesDescribed}, {"list"}, {"status"}} {
		out, errOut, _ := ctl(t, env, args...)
		if bad := rawControl(out + errOut); bad != "" {
			t.Errorf("skillfs %v prints a raw control character: %s", args, bad)
		}
	}

	// --require-all: the refusal is the command's error.
	mnt := filepath.Join(t.TempDir(), "mnt")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, skillfsBin, "mount", "--config", writeConfig(t, map[string]any{"refuses": refuses}, nil),
		"--cache-dir", filepath.Join(t.TempDir(), "cache"), "--require-all", "--startup-timeout", "4m", mnt)
	cmd.Env = env
	b, err := cmd.CombinedOutput()
	t.Cleanup(func() {
		if isMounted(mnt) {
			syscall.Unmount(mnt, syscall.MNT_DETACH)
			t.Errorf("--require-all left %s mounted", mnt)
		}
	})
	if exitCode(err) != 5 {
		t.Errorf("mount --require-all: %v, want exit 5: %q", err, b)
	}
	// The daemon's log lines (logfmt) come before the message.
	msg := string(b)
	if i := strings.Index(msg, "skillfs: --require-all"); i >= 0 {
		msg = msg[i:]
	} else {
		t.Errorf("no --require-all message in %q", b)
	}
	inert("the --require-all message", msg)
}
