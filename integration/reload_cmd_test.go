//go:build linux

package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// `skillfs reload`: SIGHUP's reload of the config through the control
// socket, answered with what changed or with the config's errors.

// writeServers rewrites the config at path to serve servers.
func writeServers(t *testing.T, path string, servers map[string]any) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestReloadCommand: a reload that adds a server and removes one names
// both and the tree follows; a config with errors is printed, exits 1,
// shows in status, and the mount keeps serving what it had; a good config
// afterwards clears it.
func TestReloadCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"kept/SKILL.md": skillMD("kept", "Served throughout", "kept\n")})
	cfg := writeConfig(t, map[string]any{"keep": stdioServe(dir, os.DevNull), "old": stdioServe(dir, os.DevNull)}, nil)
	env := runtimeEnv(t)
	m := startMountEnv(t, env, cfg)
	m.warnings = true // the failed reload is logged as an error

	writeServers(t, cfg, map[string]any{"keep": stdioServe(dir, os.DevNull), "fresh": stdioServe(dir, os.DevNull)})
	out, errOut, code := ctl(t, env, "reload", "--mount", m.Dir)
	if code != 0 || !strings.Contains(out, "reloaded "+cfg+"\n") || !strings.Contains(out, "added    fresh\n") || !strings.Contains(out, "removed  old\n") || strings.Contains(out, "keep") {
		t.Fatalf("skillfs reload: exit %d, want the config, \"added    fresh\" and \"removed  old\" (keep unchanged):\n%s%s", code, out, errOut)
	}
	waitFor(t, 2*time.Minute, "fresh's skill", func() bool {
		b, err := os.ReadFile(m.Path("fresh", "kept", "SKILL.md"))
		return err == nil && strings.Contains(string(b), "kept")
	})
	if _, err := os.Stat(m.Path("old")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the removed server's directory: %v, want ENOENT", err)
	}

	// Nothing changed: said so.
	out, errOut, code = ctl(t, env, "reload", "--mount", m.Dir)
	if code != 0 || !strings.Contains(out, "no server changed") {
		t.Errorf("skillfs reload of the same config: exit %d:\n%s%s", code, out, errOut)
	}
	out, errOut, code = ctl(t, env, "reload", "--json", "--mount", m.Dir)
	var r struct {
		Config         string
		Added, Removed []string
	}
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || r.Config != cfg || r.Added == nil || len(r.Added) != 0 {
		t.Errorf("skillfs reload --json: exit %d, %v, %+v:\n%s%s", code, err, r, out, errOut)
	}

	// A broken config: its error, exit 1, nothing changes.
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {"keep": `), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = ctl(t, env, "reload", "--mount", m.Dir)
	if code != 1 || !strings.Contains(errOut, cfg+" has errors; the mount keeps serving the servers it had") || out != "" {
		t.Errorf("skillfs reload of a broken config: exit %d, want 1 and the config's error on stderr:\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	for _, p := range [][]string{{"keep", "kept", "SKILL.md"}, {"fresh", "kept", "SKILL.md"}} {
		if b, err := os.ReadFile(m.Path(p...)); err != nil || !strings.Contains(string(b), "kept") {
			t.Errorf("%v after the failed reload: %v %q", p, err, b)
		}
	}
	out, errOut, code = ctl(t, env, "status", "--mount", m.Dir)
	if code != 0 || !strings.Contains(out, "reload   FAILED") {
		t.Errorf("skillfs status after the failed reload: exit %d, want the failed reload:\n%s%s", code, out, errOut)
	}

	// A good config again clears the failure.
	writeServers(t, cfg, map[string]any{"keep": stdioServe(dir, os.DevNull)})
	out, errOut, code = ctl(t, env, "reload", "--mount", m.Dir)
	if code != 0 || !strings.Contains(out, "removed  fresh\n") {
		t.Errorf("skillfs reload after the fix: exit %d:\n%s%s", code, out, errOut)
	}
	out, errOut, code = ctl(t, env, "status", "--mount", m.Dir)
	if code != 0 || strings.Contains(out, "reload   FAILED") {
		t.Errorf("skillfs status after a good reload: exit %d, still shows the failure:\n%s%s", code, out, errOut)
	}
}

// envReloadPost: the test binary, run as another user, posts a reload to
// this socket and prints what came of it.
const envReloadPost = "SKILLFS_ATTACK_RELOAD"

func init() {
	sock := os.Getenv(envReloadPost)
	if sock == "" || os.Getenv(envAttack) != "" {
		return
	}
	c := http.Client{Transport: &http.Transport{Dial: func(_, _ string) (net.Conn, error) {
		return net.Dial("unix", sock)
	}}, Timeout: time.Minute}
	res, err := c.Post("http://skillfs/v1/reload", "application/json", strings.NewReader("{}"))
	if err != nil {
		fmt.Println("refused")
		os.Exit(0)
	}
	fmt.Println("answered", res.Status)
	os.Exit(0)
}

// TestReloadCommandRefusesAnotherUser: with the socket's modes loosened by
// mistake, another user posts a reload. The daemon refuses the connection
// like any other of that user's, and the changed config is not applied.
func TestReloadCommandRefusesAnotherUser(t *testing.T) {
	t.Parallel()
	bin := attacker(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"kept/SKILL.md": skillMD("kept", "Served throughout", "kept\n")})
	rt := sharedDir(t, 0o755)
	env := clientEnv(t, rt)
	cfg := writeConfig(t, map[string]any{"keep": stdioServe(dir, os.DevNull)}, nil)
	m := startMountEnv(t, env, cfg)
	m.warnings = true // the refusal is logged
	socks, _ := filepath.Glob(filepath.Join(rt, "skillfs", "*.sock"))
	if len(socks) != 1 {
		t.Fatalf("sockets in %s/skillfs: %v", rt, socks)
	}
	os.Chmod(filepath.Join(rt, "skillfs"), 0o755)
	os.Chmod(socks[0], 0o666)
	writeServers(t, cfg, map[string]any{"keep": stdioServe(dir, os.DevNull), "planted": stdioServe(dir, os.DevNull)})

	uid := strconv.Itoa(attackerUID)
	cmd := exec.Command("setpriv", "--reuid="+uid, "--regid="+uid, "--clear-groups", bin)
	cmd.Env = []string{envReloadPost + "=" + socks[0], "HOME=/nonexistent", "PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "refused\n" {
		t.Fatalf("the other user's reload: %v %q, want it refused", err, out)
	}
	if _, err := os.Stat(m.Path("planted")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the other user's reload was applied: %v", err)
	}
	// The user's own reload still works, and is the first to apply.
	o, errOut, code := ctl(t, env, "reload", "--mount", m.Dir)
	if code != 0 || !strings.Contains(o, "added    planted\n") {
		t.Fatalf("the user's own reload: exit %d:\n%s%s", code, o, errOut)
	}
	waitFor(t, 2*time.Minute, "planted's skill", func() bool {
		_, err := os.Stat(m.Path("planted", "kept", "SKILL.md"))
		return err == nil
	})
	m.fds = openFDs(m.cmd.Process.Pid) // the server the reload started
	m.Stop(t)
	if log := m.log.String(); !strings.Contains(log, "uid="+uid) || strings.Count(log, "skillfs reload: config re-read") != 1 {
		t.Errorf("the daemon's log: want the refusal of uid %s and one reload:\n%s", uid, log)
	}
}
