//go:build linux

package integration

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/testkit"
)

// The approval prompt, driven as a person drives it: `skillfs approve` on
// a terminal shows each skill (server with its secrets masked, name,
// description, flags) and, for a changed skill, the unified diff of every
// changed file against the version last approved; `n` changes nothing,
// `y` approves exactly what was shown, and nothing when the server
// changed the skill in between.

const promptTimeout = 2 * time.Minute

func bindingOf(t *testing.T, env []string, mnt, path string) string {
	t.Helper()
	out, errOut, code := ctl(t, env, "pending", "--json", "--mount", mnt)
	if code != 0 {
		t.Fatalf("pending --json: exit %d: %s", code, errOut)
	}
	var ps []struct {
		Skill struct {
			Path string `json:"path"`
		} `json:"skill"`
		Binding string `json:"binding"`
		Why     string `json:"why"`
	}
	if err := json.Unmarshal([]byte(out), &ps); err != nil {
		t.Fatalf("pending --json: %v\n%s", err, out)
	}
	for _, p := range ps {
		if p.Skill.Path == path {
			return p.Binding
		}
	}
	return ""
}

// approveOnTerminal starts `skillfs approve PATH` on a pseudo-terminal and
// waits for its question; it returns the terminal and what was shown.
func approveOnTerminal(t *testing.T, env []string, mnt, path string) (*testkit.Terminal, string) {
	t.Helper()
	return approvePaged(t, env, "cat", mnt, path)
}

// approvePaged is approveOnTerminal with $PAGER set to pager.
func approvePaged(t *testing.T, env []string, pager, mnt, path string) (*testkit.Terminal, string) {
	t.Helper()
	cmd := exec.Command(skillfsBin, "approve", "--mount", mnt, path)
	cmd.Env = append(env, "PAGER="+pager, "TERM=dumb")
	tm := testkit.StartOnTerminal(t, cmd)
	return tm, tm.Expect(t, "[y/N] ", promptTimeout)
}

var promptBinding = regexp.MustCompile(`binding +(sha256:[0-9a-f]{64})`)

func TestApprovePromptShowsTheDiffAndApprovesWhatItShowed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"alpha/SKILL.md":  "---\nname: alpha\ndescription: Alpha skill\n---\nUse alpha.\n",
		"alpha/refs/a.md": "one\ntwo\nthree\n",
		"alpha/logo.bin":  "\x00\x01\x02",
	})
	env := runtimeEnv(t)
	srv := stdioServe(dir, os.DevNull)
	srv["env"] = map[string]any{"TOKEN": "hunter2-secret"}
	cfg := writeConfig(t, map[string]any{"local": srv},
		map[string]any{"servers": map[string]any{"local": map[string]any{"approval": "required"}}})
	m := startMountEnv(t, env, cfg)
	alpha := m.Path("local", "alpha", "refs", "a.md")

	// A new skill: the prompt shows server, name, description and why.
	tm, shown := approveOnTerminal(t, env, m.Dir, "local/alpha")
	for _, w := range []string{"=== local/alpha", "server       local (stdio: ", "env TOKEN=***", "name         alpha",
		"description  Alpha skill", "why          new skill: never approved", "Approve 1 skills? [y/N] "} {
		if !strings.Contains(shown, w) {
			t.Errorf("the prompt for a new skill lacks %q:\n%s", w, shown)
		}
	}
	if strings.Contains(shown, "hunter2") {
		t.Errorf("the prompt shows the server's secret:\n%s", shown)
	}
	tm.Type(t, "y\n")
	if code, out := tm.Wait(t, promptTimeout); code != 0 || !strings.Contains(out, "approved local/alpha") {
		t.Fatalf("approve y: exit %d:\n%s", code, out)
	}
	waitFor(t, time.Minute, "alpha's files to be kept by the approval", func() bool {
		out, _, _ := ctl(t, env, "inspect", "--json", "--mount", m.Dir, "local/alpha")
		var ins struct {
			Files []struct{ Cached bool } `json:"files"`
		}
		json.Unmarshal([]byte(out), &ins)
		for _, f := range ins.Files {
			if !f.Cached {
				return false
			}
		}
		return len(ins.Files) == 3
	})

	// The server changes the skill: it waits, and pending says why.
	writeTree(t, dir, map[string]string{"alpha/refs/a.md": "one\nTWO\nthree\n", "alpha/logo.bin": "\x00\x01\x02\x03"})
	m.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, time.Minute, "alpha to wait for approval again", func() bool { return bindingOf(t, env, m.Dir, "local/alpha") != "" })
	if out, _, _ := ctl(t, env, "pending", "--mount", m.Dir); !strings.Contains(out, "content changed") || !strings.Contains(out, "~local/alpha/refs/a.md") {
		t.Errorf("pending does not say why alpha waits:\n%s", out)
	}
	if out, _, _ := ctl(t, env, "status", "--mount", m.Dir); !strings.Contains(out, "pending  local: 1 content changed") {
		t.Errorf("status does not say why alpha waits:\n%s", out)
	}

	// n changes nothing. The view goes through $PAGER on a terminal.
	paged := filepath.Join(t.TempDir(), "paged")
	tm, shown = approvePaged(t, env, "tee "+paged, m.Dir, "local/alpha")
	if b, err := os.ReadFile(paged); err != nil || !strings.Contains(string(b), "+TWO\n") {
		t.Errorf("the view did not go through $PAGER: %q, %v", b, err)
	}
	for _, w := range []string{"why          content changed since approved:", "--- a/local/alpha/refs/a.md\n+++ b/local/alpha/refs/a.md\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
		"changed local/alpha/logo.bin: binary file 3 bytes, sha256:"} {
		if !strings.Contains(shown, w) {
			t.Errorf("the prompt for a changed skill lacks %q:\n%s", w, shown)
		}
	}
	bound := bindingOf(t, env, m.Dir, "local/alpha")
	if sb := promptBinding.FindStringSubmatch(shown); sb == nil || sb[1] != bound {
		t.Errorf("the prompt shows binding %v, the mount holds %s", sb, bound)
	}
	tm.Type(t, "n\n")
	if code, out := tm.Wait(t, promptTimeout); code != 0 || !strings.Contains(out, "not approved") {
		t.Fatalf("approve n: exit %d:\n%s", code, out)
	}
	if b := bindingOf(t, env, m.Dir, "local/alpha"); b != bound {
		t.Errorf("after n, alpha's pending binding is %q, want %q", b, bound)
	}
	if _, err := os.Stat(alpha); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after n, the changed skill is in the mount: %v", err)
	}

	// The server changes the skill between the prompt and y: nothing is
	// approved.
	tm, shown = approveOnTerminal(t, env, m.Dir, "local/alpha")
	if !strings.Contains(shown, "+TWO\n") {
		t.Fatalf("the prompt:\n%s", shown)
	}
	writeTree(t, dir, map[string]string{"alpha/refs/a.md": "one\nTWO\nthree\nand a line slipped in after the prompt\n"})
	m.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, time.Minute, "the mount to hold the newer entry", func() bool {
		b := bindingOf(t, env, m.Dir, "local/alpha")
		return b != "" && b != bound
	})
	tm.Type(t, "y\n")
	if code, out := tm.Wait(t, promptTimeout); code != 1 || !strings.Contains(out, "changed since you looked, so nothing was approved") {
		t.Fatalf("approve y after the server changed the skill: exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(alpha); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a skill changed after the prompt was approved: %v", err)
	}

	// y approves exactly what was shown.
	tm, shown = approveOnTerminal(t, env, m.Dir, "local/alpha")
	if !strings.Contains(shown, "+and a line slipped in after the prompt\n") {
		t.Errorf("the prompt does not show the latest change:\n%s", shown)
	}
	tm.Type(t, "y\n")
	if code, out := tm.Wait(t, promptTimeout); code != 0 || !strings.Contains(out, "approved local/alpha") {
		t.Fatalf("approve y: exit %d:\n%s", code, out)
	}
	waitFor(t, time.Minute, "the approved version in the mount", func() bool {
		b, err := os.ReadFile(alpha)
		return err == nil && string(b) == "one\nTWO\nthree\nand a line slipped in after the prompt\n"
	})

	// Another entry of the server (its env changed) is another identity:
	// the approvals do not carry over, and pending and status say why.
	m.Stop(t)
	srv["env"] = map[string]any{"TOKEN": "another-secret"}
	cfg2 := writeConfig(t, map[string]any{"local": srv},
		map[string]any{"servers": map[string]any{"local": map[string]any{"approval": "required"}}})
	m2 := &mount{Dir: filepath.Join(t.TempDir(), "mnt"), Cache: m.Cache, log: &syncBuffer{}}
	m2.run(t, env, "mount", "--config", cfg2, "--cache-dir", m.Cache, "--startup-timeout", "10m", m2.Dir)
	if _, err := os.Stat(m2.Path("local", "alpha")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an approval carried over to another entry of the server: %v", err)
	}
	const why = "the server's entry changed (args/env/headers), so earlier approvals do not carry over"
	if out, _, _ := ctl(t, env, "pending", "--mount", m2.Dir); !strings.Contains(out, "server entry changed") || !strings.Contains(out, why) {
		t.Errorf("pending after the server's entry changed:\n%s", out)
	}
	if out, _, _ := ctl(t, env, "status", "--mount", m2.Dir); !strings.Contains(out, "1 server entry changed") || !strings.Contains(out, why) {
		t.Errorf("status after the server's entry changed:\n%s", out)
	}
}
