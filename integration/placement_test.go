//go:build linux

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// refusedMount runs `skillfs mount` expecting a placement refusal: exit 2
// with every one of wants in the output, and no mount or mountpoint left.
func refusedMount(t *testing.T, env []string, mnt string, wants []string, args ...string) {
	t.Helper()
	cmd := exec.Command(skillfsBin, append(append([]string{"mount"}, args...), mnt)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if isMounted(mnt) {
		syscall.Unmount(mnt, syscall.MNT_DETACH)
		t.Errorf("%s was mounted", mnt)
	}
	if code := exitCode(err); code != 2 {
		t.Errorf("skillfs mount %s: exit %d, want 2\n%s", mnt, code, out)
	}
	for _, want := range wants {
		if !strings.Contains(string(out), want) {
			t.Errorf("skillfs mount %s: output lacks %q:\n%s", mnt, want, out)
		}
	}
	if _, err := os.Lstat(mnt); err == nil {
		t.Errorf("the refused mountpoint %s was created", mnt)
	}
}

// TestMountRefusesProjectAgentFolders: a project's .claude/commands turns
// every .md into a slash command, and a project's .claude/skills is exactly
// the layout Claude Code scans; neither the mountpoint nor a server's
// directory under it may land there.
func TestMountRefusesProjectAgentFolders(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home)
	cfg := writeConfig(t, map[string]any{"acme": stdioServe(t.TempDir(), os.DevNull)}, nil)
	skillsCfg := writeConfig(t, map[string]any{"skills": stdioServe(t.TempDir(), os.DevNull)}, nil)
	agentsCfg := writeConfig(t, map[string]any{"agents": stdioServe(t.TempDir(), os.DevNull)}, nil)

	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	claude := filepath.Join(project, ".claude")
	fix := "choose a directory outside every agent's folders, such as ~/.cache/mcp-skills"

	t.Run("mountpoint at .claude/commands", func(t *testing.T) {
		mnt := filepath.Join(claude, "commands")
		refusedMount(t, env, mnt, []string{"refusing mountpoint: " + mnt + " is inside a .claude folder (" + claude + ")", "slash commands", fix},
			"--config", cfg, "--cache-dir", filepath.Join(t.TempDir(), "c"))
	})
	t.Run("mountpoint at .claude with a server labelled skills", func(t *testing.T) {
		refusedMount(t, env, claude, []string{"refusing mountpoint: " + claude + " is inside a .claude folder", fix},
			"--config", skillsCfg, "--cache-dir", filepath.Join(t.TempDir(), "c"))
	})
	t.Run("a server labelled skills anywhere", func(t *testing.T) {
		mnt := filepath.Join(project, "mnt")
		refusedMount(t, env, mnt, []string{filepath.Join(mnt, "skills") + ` (the directory of server "skills" under the mountpoint) is inside a folder named skills`,
			`rename server "skills" in the config`}, "--config", skillsCfg, "--cache-dir", filepath.Join(t.TempDir(), "c"))
	})
	t.Run("an empty ~/.config with a server labelled agents", func(t *testing.T) {
		mnt := filepath.Join(home, ".config")
		refusedMount(t, env, mnt, []string{filepath.Join(mnt, "agents") + ` (the directory of server "agents" under the mountpoint) is inside ~/.config/agents`,
			`rename server "agents"`}, "--config", agentsCfg, "--cache-dir", filepath.Join(t.TempDir(), "c"))
	})
	t.Run("cache in a project's .github", func(t *testing.T) {
		mnt := filepath.Join(t.TempDir(), "mnt")
		cache := filepath.Join(project, ".github", "skillfs-cache")
		refusedMount(t, env, mnt, []string{"refusing cache directory: " + cache + " is inside a .github folder", fix},
			"--config", cfg, "--cache-dir", cache)
		if _, err := os.Lstat(cache); err == nil {
			t.Errorf("the refused cache %s was created", cache)
		}
	})
}

// TestMountRefusesHomeAgentFolderWithoutHOME: with HOME unset the home
// directory comes from the user database, and ~/.claude under it is
// refused as such (not merely as some .claude folder).
func TestMountRefusesHomeAgentFolderWithoutHOME(t *testing.T) {
	t.Parallel()
	u, err := user.Current()
	if err != nil || u.HomeDir == "" || !filepath.IsAbs(u.HomeDir) {
		t.Skipf("no home directory in the user database: %v", err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	// Never created: the refusal comes first. The config does not exist
	// either, so if the check regressed skillfs would stop at the config
	// and create nothing in the real home.
	mnt := filepath.Join(u.HomeDir, ".claude", fmt.Sprintf("skillfs-placement-test-%d", os.Getpid()), "mnt")
	claude := filepath.Join(u.HomeDir, ".claude")
	refusedMount(t, env, mnt, []string{"refusing mountpoint: " + mnt + " is inside ~/.claude (" + claude + ")", "Claude Code"},
		"--config", filepath.Join(t.TempDir(), "missing.json"), "--cache-dir", filepath.Join(t.TempDir(), "c"))
}
