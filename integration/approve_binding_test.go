//go:build linux

package integration

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillfs/skillfs/integration/hostile"
)

var inspectBinding = regexp.MustCompile(`(?m)^binding +(sha256:[0-9a-f]{64})$`)

// TestApprovalBindsToWhatInspectShowed: the attack of issue 38 item 1.
// A person reads a new skill with `inspect --show` (safe text), the server
// swaps its SKILL.md, and the person approves: with `approve --binding`
// naming the binding inspect printed, the approval is refused (exit 1,
// a message saying why) and the mount never serves the swapped text. The
// approve prompt of a new skill shows its SKILL.md and its files; a
// scripted --yes with the current binding still approves.
func TestApprovalBindsToWhatInspectShowed(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state.json")
	if err := hostile.WriteState(state, hostile.State{Phase: "a"}); err != nil {
		t.Fatal(err)
	}
	env := runtimeEnv(t)
	cfg := writeConfig(t, map[string]any{
		"evil": hostileStdio(t, hostile.Options{Fixtures: []string{hostile.Fresh}, StateFile: state}),
	}, map[string]any{"servers": map[string]any{"evil": map[string]any{"approval": "required"}}})
	m := startMountEnv(t, env, cfg)
	skillMDPath := m.Path("evil", "fresh", "SKILL.md")

	// The prompt of a new skill shows what is approved: files and SKILL.md.
	tm, shown := approveOnTerminal(t, env, m.Dir, "evil/fresh")
	for _, w := range []string{"=== evil/fresh", "files (1):", "SKILL.md", "----- evil/fresh/SKILL.md (verified;",
		hostile.FreshSafeLine + "\n", "----- end of SKILL.md -----"} {
		if !strings.Contains(shown, w) {
			t.Errorf("the prompt for a new skill lacks %q:\n%s", w, shown)
		}
	}
	tm.Type(t, "n\n")
	if code, out := tm.Wait(t, promptTimeout); code != 0 || !strings.Contains(out, "not approved") {
		t.Fatalf("approve n: exit %d:\n%s", code, out)
	}

	// The person reads it with inspect --show, which prints its binding.
	out, errOut, code := ctl(t, env, "inspect", "--show", "--mount", m.Dir, "evil/fresh")
	if code != 0 || !strings.Contains(out, hostile.FreshSafeLine) {
		t.Fatalf("inspect --show: exit %d:\n%s%s", code, out, errOut)
	}
	sb := inspectBinding.FindStringSubmatch(out)
	if sb == nil {
		t.Fatalf("inspect --show prints no binding:\n%s", out)
	}
	read := sb[1]
	if b := bindingOf(t, env, m.Dir, "evil/fresh"); b != read {
		t.Fatalf("inspect shows binding %s, pending %s", read, b)
	}

	// The server swaps SKILL.md; the mount lists it again.
	if err := hostile.WriteState(state, hostile.State{Phase: "b"}); err != nil {
		t.Fatal(err)
	}
	m.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, time.Minute, "the mount to hold the swapped entry", func() bool {
		b := bindingOf(t, env, m.Dir, "evil/fresh")
		return b != "" && b != read
	})
	out, errOut, code = ctl(t, env, "approve", "--binding", read, "--yes", "--mount", m.Dir, "evil/fresh")
	if code != 1 || !strings.Contains(errOut, "evil/fresh is no longer the skill you were shown") || !strings.Contains(errOut, "nothing was approved") {
		t.Errorf("approve --binding (what inspect showed) after the swap: exit %d, want 1 and why:\n%s%s", code, out, errOut)
	}
	if _, err := os.ReadFile(skillMDPath); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after the refused approval, %s: %v, want ENOENT", skillMDPath, err)
	}

	// Read again, approved as read: scripted --yes still works.
	out, _, _ = ctl(t, env, "inspect", "--show", "--mount", m.Dir, "evil/fresh")
	sb = inspectBinding.FindStringSubmatch(out)
	if sb == nil || !strings.Contains(out, hostile.FreshChangedLine) {
		t.Fatalf("inspect --show after the swap:\n%s", out)
	}
	if out, errOut, code := ctl(t, env, "approve", "--binding", sb[1], "--yes", "--mount", m.Dir, "evil/fresh"); code != 0 || !strings.Contains(out, "approved evil/fresh") {
		t.Fatalf("approve --binding (the current one) --yes: exit %d:\n%s%s", code, out, errOut)
	}
	waitFor(t, time.Minute, "the approved skill in the mount", func() bool {
		b, err := os.ReadFile(skillMDPath)
		return err == nil && strings.Contains(string(b), hostile.FreshChangedLine)
	})
}
