//go:build linux

package integration

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The commands that ask a running mount over its control socket: status,
// list, inspect, pending, approve, revoke, get.

// runtimeEnv is this process's environment with XDG_RUNTIME_DIR set to a
// directory of the test's own, so that the mounts of other tests (and
// users) are not found.
func runtimeEnv(t *testing.T) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "XDG_RUNTIME_DIR=") {
			env = append(env, kv)
		}
	}
	return append(env, "XDG_RUNTIME_DIR="+t.TempDir())
}

// startMountEnv is startMount with the daemon's environment given.
func startMountEnv(t *testing.T, env []string, cfgPath string, extra ...string) *mount {
	t.Helper()
	m := &mount{Dir: filepath.Join(t.TempDir(), "mnt"), Cache: filepath.Join(t.TempDir(), "cache"), log: &syncBuffer{}}
	args := append([]string{"mount", "--config", cfgPath, "--cache-dir", m.Cache, "--startup-timeout", "10m"}, extra...)
	return m.run(t, env, append(args, m.Dir)...)
}

// ctl runs `skillfs ARGS` with env and returns stdout, stderr and the exit
// code.
func ctl(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, skillfsBin, args...)
	cmd.Env = env
	var out, errOut syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("skillfs %v: %v", args, err)
	}
	return out.String(), errOut.String(), exitCode(err)
}

type statusJSON struct {
	Mount struct {
		Path     string `json:"path"`
		PID      int    `json:"pid"`
		CacheDir string `json:"cache_dir"`
	} `json:"mount"`
	Uptime     string `json:"uptime"`
	CacheBytes int64  `json:"cache_bytes"`
	Servers    []struct {
		Label        string `json:"label"`
		State        string `json:"state"`
		Protocol     string `json:"protocol"`
		Available    int    `json:"available"`
		Pending      int    `json:"pending"`
		Failed       int    `json:"failed"`
		Rejected     int    `json:"rejected"`
		BytesFetched int64  `json:"bytes_fetched"`
		Budget       int64  `json:"budget"`
	} `json:"servers"`
}

func status(t *testing.T, env []string, args ...string) statusJSON {
	t.Helper()
	out, errOut, code := ctl(t, env, append([]string{"status", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("skillfs status --json: exit %d\n%s", code, errOut)
	}
	var st statusJSON
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json does not parse: %v\n%s", err, out)
	}
	return st
}

func labels(st statusJSON) []string {
	var out []string
	for _, s := range st.Servers {
		out = append(out, s.Label)
	}
	return out
}

func TestControlCommandsWithNoMount(t *testing.T) {
	t.Parallel()
	env := runtimeEnv(t)
	cache := t.TempDir()
	const msg = "skillfs: no skillfs mount is running (start one with `skillfs mount DIR`)\n"
	for _, args := range [][]string{
		{"status"}, {"status", "--json"}, {"list"}, {"inspect", "local/alpha"}, {"pending"},
		{"approve", "--yes", "local/alpha"}, {"revoke", "local/alpha"},
		{"get", "--origin", "local", "skill://x/SKILL.md"},
	} {
		out, errOut, code := ctl(t, env, append(args, "--cache-dir", cache)...)
		if code != 1 || errOut != msg || out != "" {
			t.Errorf("skillfs %s with no mount: exit %d, stdout %q, stderr %q; want exit 1 and %q", strings.Join(args, " "), code, out, errOut, msg)
		}
	}
	_, errOut, code := ctl(t, env, "status", "--mount", "/nowhere")
	if code != 1 || !strings.Contains(errOut, "no skillfs mount is running at /nowhere") {
		t.Errorf("status --mount /nowhere: exit %d: %s", code, errOut)
	}
	_, errOut, code = ctl(t, env, "approve")
	if code != 2 || !strings.Contains(errOut, "approve needs skill PATHs or --all LABEL") {
		t.Errorf("approve with no arguments: exit %d: %s", code, errOut)
	}
}

func TestControlStatusListInspect(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	genTree(t, dir, "local")
	// A zero-width space and a bidi override hide in the body of one skill.
	writeTree(t, dir, map[string]string{"hidden/SKILL.md": skillMD("hidden", "Hides text", "Read\u200b this\u202e carefully.\n")})
	env := runtimeEnv(t)
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)}, nil)
	m := startMountEnv(t, env, cfg)

	st := status(t, env)
	if st.Mount.Path != m.Dir || st.Mount.PID != m.cmd.Process.Pid || st.Mount.CacheDir != m.Cache || st.Uptime == "" {
		t.Errorf("status names the mount %+v, want %s (pid %d, cache %s)", st.Mount, m.Dir, m.cmd.Process.Pid, m.Cache)
	}
	if len(st.Servers) != 1 || st.Servers[0].Label != "local" || st.Servers[0].State != "connected" || st.Servers[0].Protocol == "" || st.Servers[0].Available != 6 || st.Servers[0].Budget == 0 {
		t.Errorf("status servers: %+v", st.Servers)
	}

	// The socket is the user's only.
	socks, _ := filepath.Glob(filepath.Join(strings.TrimPrefix(env[len(env)-1], "XDG_RUNTIME_DIR="), "skillfs", "*.sock"))
	if len(socks) != 1 {
		t.Fatalf("sockets in the runtime directory: %v", socks)
	}
	if fi, err := os.Stat(socks[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket %v, want mode 0600", fi.Mode())
	}
	if fi, err := os.Stat(filepath.Dir(socks[0])); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket directory %v, want mode 0700", fi.Mode())
	}

	out, errOut, code := ctl(t, env, "status")
	if code != 0 || !strings.Contains(out, "mount    "+m.Dir) || !strings.Contains(out, "SERVER  STATE") || !strings.Contains(out, "local   connected") {
		t.Errorf("status table: exit %d\n%s%s", code, out, errOut)
	}

	out, errOut, code = ctl(t, env, "list")
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	col := strings.Index(lines[0], "STATE")
	if !strings.HasPrefix(lines[0], "PATH ") || col < 0 || len(lines) != 7 {
		t.Fatalf("list table:\n%s", out)
	}
	var paths []string
	for _, l := range lines[1:] {
		if len(l) <= col || l[col-1] != ' ' || l[col] == ' ' {
			t.Errorf("list row not aligned under STATE: %q", l)
		}
		paths = append(paths, strings.Fields(l)[0])
	}
	want := []string{"local/alpha", "local/hidden", "local/only-local", "local/shared/refunds", "local/team/beta", "local/team/beta/gamma"}
	slices.Sort(paths)
	if !slices.Equal(paths, want) {
		t.Errorf("list paths %v, want %v", paths, want)
	}
	if !strings.Contains(out, "nested-skill") {
		t.Errorf("list does not flag the nested skill:\n%s", out)
	}
	out, _, _ = ctl(t, env, "list", "--json", "local")
	var skills []struct {
		Path, State string
	}
	if err := json.Unmarshal([]byte(out), &skills); err != nil || len(skills) != 6 {
		t.Errorf("list --json: %v (%d skills)\n%s", err, len(skills), out)
	}
	_, errOut, code = ctl(t, env, "list", "nosuch")
	if code != 1 || errOut != "skillfs: no server \"nosuch\" on this mount (servers: local)\n" {
		t.Errorf("list nosuch: exit %d: %q", code, errOut)
	}

	// Through a pipe, SKILL.md's exact bytes; on a terminal (script(1)),
	// the hidden characters made visible (see TestTerminalOutputIsInert).
	out, errOut, code = ctl(t, env, "inspect", "--show", "local/hidden")
	if code != 0 || !strings.Contains(out, "Read\u200b this\u202e carefully.") {
		t.Errorf("inspect --show through a pipe does not write SKILL.md's bytes: exit %d\n%q%q", code, out, errOut)
	}
	if _, err := exec.LookPath("script"); err == nil {
		cmd := exec.Command("script", "-qec", skillfsBin+" inspect --show local/hidden", "/dev/null")
		cmd.Env = env
		b, _ := cmd.CombinedOutput()
		if tty := string(b); !strings.Contains(tty, "Read<U+200B> this<U+202E> carefully.") || strings.Contains(tty, "\u200b") {
			t.Errorf("inspect --show on a terminal does not make the hidden characters visible: %q", tty)
		}
	}
	if !strings.Contains(out, "SKILL.md  ") || !regexpLine(out, `^SKILL.md\s+\d+\s+sha256:[0-9a-f]{64}\s+yes\s`) {
		t.Errorf("inspect does not show SKILL.md verified with its digest:\n%s", out)
	}
	out, _, code = ctl(t, env, "inspect", "--json", m.Path("local", "team", "beta"))
	var ins struct {
		Skill struct{ Path string }
		Files []struct {
			Path, Digest string
			Size         int64
		}
	}
	if err := json.Unmarshal([]byte(out), &ins); code != 0 || err != nil || ins.Skill.Path != "local/team/beta" || len(ins.Files) != 5 {
		t.Errorf("inspect --json of an absolute path: exit %d, %v\n%s", code, err, out)
	}
	_, errOut, code = ctl(t, env, "inspect", "local/nope")
	if code != 1 || !strings.Contains(errOut, "no skill local/nope on this mount") {
		t.Errorf("inspect of no skill: exit %d: %s", code, errOut)
	}
}

func regexpLine(s, expr string) bool {
	for _, l := range strings.Split(s, "\n") {
		if ok, _ := regexp.MatchString(expr, l); ok {
			return true
		}
	}
	return false
}

func TestControlTwoMounts(t *testing.T) {
	t.Parallel()
	dirA, dirB := t.TempDir(), t.TempDir()
	genTree(t, dirA, "a")
	genTree(t, dirB, "b")
	env := runtimeEnv(t)
	a := startMountEnv(t, env, writeConfig(t, map[string]any{"alpha": stdioServe(dirA, os.DevNull)}, nil))
	b := startMountEnv(t, env, writeConfig(t, map[string]any{"beta": stdioServe(dirB, os.DevNull)}, nil))

	first, second := a.Dir, b.Dir
	if second < first {
		first, second = second, first
	}
	want := "skillfs: 2 skillfs mounts are running (" + first + ", " + second + "): choose one with --mount DIR\n"
	for _, cmd := range []string{"status", "list", "pending"} {
		out, errOut, code := ctl(t, env, cmd)
		if code != 1 || errOut != want || out != "" {
			t.Errorf("%s with two mounts: exit %d, %q, want %q", cmd, code, errOut, want)
		}
	}
	if st := status(t, env, "--mount", a.Dir); st.Mount.Path != a.Dir || !slices.Equal(labels(st), []string{"alpha"}) {
		t.Errorf("status --mount %s: %+v", a.Dir, st)
	}
	// A relative --mount and a trailing slash name the same mount.
	rel, err := filepath.Rel(mustGetwd(t), b.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if st := status(t, env, "--mount", rel+"/"); st.Mount.Path != b.Dir || !slices.Equal(labels(st), []string{"beta"}) {
		t.Errorf("status --mount %s/: %+v", rel, st)
	}
	out, _, code := ctl(t, env, "list", "--mount", b.Dir)
	if code != 0 || !strings.Contains(out, "beta/only-b") || strings.Contains(out, "alpha/") {
		t.Errorf("list --mount %s:\n%s", b.Dir, out)
	}

	// A daemon killed without cleaning up leaves its registration; the
	// next command drops it and finds the one mount left.
	a.Kill()
	if err := syscall.Unmount(a.Dir, syscall.MNT_DETACH); err != nil {
		t.Fatal(err)
	}
	if st := status(t, env); st.Mount.Path != b.Dir {
		t.Errorf("status after the other mount died: %+v", st.Mount)
	}
	runDir := filepath.Join(strings.TrimPrefix(env[len(env)-1], "XDG_RUNTIME_DIR="), "skillfs")
	if ents, _ := os.ReadDir(runDir); len(ents) != 2 {
		t.Errorf("registrations left in %s: %v (want the live mount's .json and .sock)", runDir, ents)
	}
	b.Stop(t)
	if ents, err := os.ReadDir(runDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("left in %s after a clean unmount: %v %v", runDir, ents, err)
	}
}

// Without XDG_RUNTIME_DIR the socket lives in the cache directory, and
// --cache-dir finds it.
func TestControlSocketInTheCacheDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	genTree(t, dir, "local")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "XDG_RUNTIME_DIR=") {
			env = append(env, kv)
		}
	}
	m := startMountEnv(t, env, writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)}, nil))
	if socks, _ := filepath.Glob(filepath.Join(m.Cache, "run", "*.sock")); len(socks) != 1 {
		t.Fatalf("sockets in %s/run: %v", m.Cache, socks)
	}
	if st := status(t, env, "--cache-dir", m.Cache); st.Mount.Path != m.Dir {
		t.Errorf("status --cache-dir: %+v", st.Mount)
	}
	out, _, _ := ctl(t, env, "cache", "list", "--cache-dir", m.Cache)
	if strings.Contains(out, "run\t") {
		t.Errorf("cache list shows the socket directory as a server:\n%s", out)
	}
}

func mustGetwd(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// TestControlGetConfirmsAnUnlistedSkill: a skill the listing does not
// carry (here the listing is cut short by max_list_pages, pages of one
// skill, as a partial listing would be) is confirmed with skills/get by
// `skillfs get` and joins the tree without a remount (DESIGN.md rule 4).
// (max_list_entries would not do: confirmed skills count against it.)
func TestControlGetConfirmsAnUnlistedSkill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"alpha/SKILL.md": skillMD("alpha", "Listed", "x\n"),
		"zulu/SKILL.md":  skillMD("zulu", "Left out of the listing", "Read notes.md.\n"),
		"zulu/notes.md":  "zulu notes\n",
	})
	env := runtimeEnv(t)
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull, "--page-size", "1")},
		map[string]any{"servers": map[string]any{"local": map[string]any{"limits": map[string]any{"max_list_pages": 1}}}})
	m := startMountEnv(t, env, cfg)
	m.warnings = true // the cut listing is logged, as it should be
	// Which one the listing left out, from the index alone: a lookup would
	// confirm it by itself through a directory read.
	listed := map[string]bool{}
	for _, s := range readIndex(t, m).Skills {
		listed[s.Name] = true
	}
	var missing string
	switch {
	case listed["alpha"] && !listed["zulu"]:
		missing = "zulu"
	case listed["zulu"] && !listed["alpha"]:
		missing = "alpha"
	default:
		t.Fatalf("one page of one skill should leave exactly one skill out of the index: %v", listed)
	}
	out, errOut, code := ctl(t, env, "get", "--origin", "local", "skill://"+missing+"/SKILL.md")
	if code != 0 {
		t.Fatalf("skillfs get: exit %d\n%s%s", code, out, errOut)
	}
	found := false
	for _, s := range readIndex(t, m).Skills {
		if s.Name == missing && s.State == "available" {
			found = true
		}
	}
	if !found {
		t.Errorf("after skillfs get, %s is not in the index as available", missing)
	}
	if b, err := os.ReadFile(m.Path("local", missing, "SKILL.md")); err != nil || !strings.Contains(string(b), "name: "+missing) {
		t.Errorf("after skillfs get, %s/SKILL.md: %v", missing, err)
	}
	if _, errOut, code := ctl(t, env, "get", "--origin", "local", "skill://nosuch/SKILL.md"); code == 0 {
		t.Errorf("skillfs get of a skill the server does not serve succeeded\n%s", errOut)
	}
}

// TestControlStatusShowsAServerThatFailedToStart: a server whose command
// does not exist is "failed-to-start" with the reason, beside a connected
// one, in `skillfs status` and status.json.
func TestControlStatusShowsAServerThatFailedToStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	genTree(t, dir, "local")
	env := runtimeEnv(t)
	cfg := writeConfig(t, map[string]any{
		"local": stdioServe(dir, os.DevNull),
		// A name on no PATH, short enough that the table shows the whole reason.
		"broken": map[string]any{"command": "skillfs-test-no-such-server"},
	}, nil)
	m := startMountEnv(t, env, cfg)
	m.warnings = true // the broken server's attempts are logged, as they should be
	states := map[string]string{}
	waitFor(t, 2*time.Minute, "the broken server to show as failed to start", func() bool {
		for _, s := range status(t, env).Servers {
			states[s.Label] = s.State
		}
		return states["broken"] == "failed-to-start"
	})
	if states["local"] != "connected" {
		t.Errorf("the honest server beside it: %q", states["local"])
	}
	out, _, code := ctl(t, env, "status")
	if code != 0 || !strings.Contains(out, "failed-to-start") || !strings.Contains(out, `command "skillfs-test-no-such-server" not found`) {
		t.Errorf("skillfs status does not say the server failed to start, and why: exit %d\n%s", code, out)
	}
}
