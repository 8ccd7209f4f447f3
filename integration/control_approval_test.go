//go:build linux

package integration

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Approval through the control commands (rule 8). These tests need the
// approval core; until it is merged `skillfs approve` answers "approval
// is not available in this build" and they skip.

// requireApproval skips the test when the binary has no approval core.
func requireApproval(t *testing.T, env []string, dir string) {
	t.Helper()
	m := startMountEnv(t, env, writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)}, nil))
	_, errOut, _ := ctl(t, env, "approve", "--yes", "--mount", m.Dir, "local/alpha")
	m.Stop(t)
	if strings.Contains(errOut, "approval is not available in this build") {
		t.Skip("approval core not merged")
	}
}

type pendingJSON []struct {
	Skill struct {
		Path     string `json:"path"`
		Approval string `json:"approval"`
	} `json:"skill"`
	Changed *struct {
		Added   []string `json:"files_added"`
		Removed []string `json:"files_removed"`
		Changed []string `json:"files_changed"`
	} `json:"changed"`
}

func pendingPaths(t *testing.T, env []string, mnt string) (pendingJSON, map[string]bool) {
	t.Helper()
	out, errOut, code := ctl(t, env, "pending", "--json", "--mount", mnt)
	if code != 0 {
		t.Fatalf("pending --json: exit %d: %s", code, errOut)
	}
	var p pendingJSON
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("pending --json does not parse: %v\n%s", err, out)
	}
	paths := map[string]bool{}
	for _, s := range p {
		paths[s.Skill.Path] = true
	}
	return p, paths
}

func TestControlApproveAndRevoke(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := genTree(t, dir, "local")
	env := runtimeEnv(t)
	requireApproval(t, env, dir)

	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)},
		map[string]any{"servers": map[string]any{"local": map[string]any{"approval": "required"}}})
	m := startMountEnv(t, env, cfg)
	alpha := m.Path("local", "alpha", "SKILL.md")
	if _, err := os.Stat(alpha); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a skill never approved is in the tree: %v", err)
	}
	p, paths := pendingPaths(t, env, m.Dir)
	if !paths["local/alpha"] || len(p) != 5 {
		t.Fatalf("pending: %+v", p)
	}
	for _, s := range p {
		if s.Changed != nil {
			t.Errorf("a skill never approved shows a change: %+v", s)
		}
	}
	out, _, _ := ctl(t, env, "pending")
	if !strings.Contains(out, "local/alpha") || !strings.Contains(out, "new") {
		t.Errorf("pending table:\n%s", out)
	}

	// Without a terminal, approve asks for --yes.
	_, errOut, code := ctl(t, env, "approve", "local/alpha")
	if code != 2 || !strings.Contains(errOut, "pass --yes") {
		t.Errorf("approve without a terminal and without --yes: exit %d: %s", code, errOut)
	}
	out, errOut, code = ctl(t, env, "approve", "--yes", "local/alpha")
	if code != 0 || !strings.Contains(out, "approved local/alpha") {
		t.Fatalf("approve --yes: exit %d\n%s%s", code, out, errOut)
	}
	// In the running mount, no remount.
	waitFor(t, 30*time.Second, "the approved skill to appear", func() bool {
		b, err := os.ReadFile(alpha)
		return err == nil && string(b) == string(files["alpha/SKILL.md"])
	})
	if _, paths := pendingPaths(t, env, m.Dir); paths["local/alpha"] {
		t.Errorf("local/alpha still pending after approval")
	}
	out, _, _ = ctl(t, env, "list", "--json", "local")
	var skills []struct{ Path, Approval string }
	json.Unmarshal([]byte(out), &skills)
	for _, s := range skills {
		if s.Path == "local/alpha" && s.Approval != "approved" {
			t.Errorf("list: local/alpha approval %q", s.Approval)
		}
	}

	// A changed file revokes the approval: the skill waits with the change.
	replaceFile(t, filepath.Join(dir, "alpha", "refs", "a.md"), []byte("# A, changed\n"), 0o644)
	m.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, time.Minute, "the changed skill to wait for approval again", func() bool {
		p, _ := pendingPaths(t, env, m.Dir)
		for _, s := range p {
			if s.Skill.Path == "local/alpha" && s.Changed != nil && strings.Contains(strings.Join(s.Changed.Changed, " "), "a.md") {
				return true
			}
		}
		return false
	})
	if _, err := os.Stat(alpha); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a changed skill is still in the tree: %v", err)
	}

	out, errOut, code = ctl(t, env, "approve", "--yes", "--all", "local")
	if code != 0 || !strings.Contains(out, "approved local/alpha") {
		t.Fatalf("approve --all local: exit %d\n%s%s", code, out, errOut)
	}
	if _, paths := pendingPaths(t, env, m.Dir); len(paths) != 0 {
		t.Errorf("pending after approve --all: %v", paths)
	}
	waitFor(t, 30*time.Second, "every skill to appear", func() bool {
		_, err := os.Stat(m.Path("local", "team", "beta", "SKILL.md"))
		return err == nil
	})

	out, errOut, code = ctl(t, env, "revoke", "local/alpha")
	if code != 0 || !strings.Contains(out, "revoked local/alpha") {
		t.Fatalf("revoke: exit %d\n%s%s", code, out, errOut)
	}
	waitFor(t, 30*time.Second, "the revoked skill to leave the tree", func() bool {
		_, err := os.Stat(alpha)
		return errors.Is(err, fs.ErrNotExist)
	})
	if _, paths := pendingPaths(t, env, m.Dir); !paths["local/alpha"] {
		t.Errorf("a revoked skill is not pending")
	}
}
