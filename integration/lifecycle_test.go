//go:build linux

package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serverProcesses lists the processes whose command line mentions s.
func serverProcesses(t *testing.T, s string) []string {
	t.Helper()
	out, _ := exec.Command("pgrep", "-f", s).Output()
	return strings.Fields(string(out))
}

func TestServerKilledServesVerifiedAndFailsUncachedFast(t *testing.T) {
	t.Parallel()
	// A call timeout far longer than the test's bound: an uncached read
	// that fails within the bound did not wait for a call to time out,
	// however slow the machine.
	o := mountTwoOriginsWith(t, map[string]any{"defaults": map[string]any{"limits": map[string]any{"call_timeout": "30m"}}})
	o.m.warnings = true // the server's death is logged, as it should be
	read := o.m.Path("remote", "alpha", "refs", "a.md")
	unread := o.m.Path("remote", "team", "beta", "docs", "deep", "x.md")
	if _, err := os.ReadFile(read); err != nil {
		t.Fatal(err)
	}
	o.remoteSrv.Kill()

	got, err := os.ReadFile(read)
	if err != nil || !bytes.Equal(got, o.remote["alpha/refs/a.md"]) {
		t.Errorf("a verified file after the server died: %v", err)
	}
	start := time.Now()
	_, err = os.ReadFile(unread)
	if !errors.Is(err, syscall.EIO) {
		t.Errorf("an uncached file after the server died: %v, want EIO", err)
	}
	if d := time.Since(start); d > 10*time.Minute {
		t.Errorf("the failed read took %v; it should fail at once, not wait for the 30m call timeout", d)
	}
	// The other origin is unaffected.
	if _, err := os.ReadFile(o.m.Path("local", "team", "beta", "docs", "deep", "x.md")); err != nil {
		t.Errorf("the stdio origin after the HTTP one died: %v", err)
	}
	waitFor(t, 2*time.Minute, "status.json to show the remote origin offline", func() bool {
		b, _ := readGenerated(o.m.Path(".skillfs", "status.json"))
		var s struct {
			Origins []struct {
				Label string `json:"label"`
				State string `json:"state"`
			} `json:"origins"`
		}
		json.Unmarshal(b, &s)
		for _, or := range s.Origins {
			if or.Label == "remote" && or.State != "connected" {
				return true
			}
		}
		return false
	})
}

func TestRestartWithServerDownShowsLastCatalog(t *testing.T) {
	t.Parallel()
	o := mountTwoOrigins(t)
	read := o.m.Path("remote", "alpha", "SKILL.md")
	if _, err := os.ReadFile(read); err != nil {
		t.Fatal(err)
	}
	o.m.Stop(t)
	if procs := serverProcesses(t, o.localDir); len(procs) != 0 {
		t.Errorf("the stdio server is still running after unmount: pids %v", procs)
	}
	o.remoteSrv.Kill()

	cfg := writeConfig(t, map[string]any{
		"remote": map[string]any{"type": "http", "url": o.remoteSrv.URL},
	}, map[string]any{"defaults": map[string]any{"limits": map[string]any{"connect_timeout": "2s"}}})
	m2 := &mount{Dir: o.m.Dir, Cache: o.m.Cache, log: &syncBuffer{}, warnings: true}
	m2.start(t, cfg)

	got, err := os.ReadFile(m2.Path("remote", "alpha", "SKILL.md"))
	if err != nil || !bytes.Equal(got, o.remote["alpha/SKILL.md"]) {
		t.Errorf("a file verified before the restart: %v", err)
	}
	if _, err := os.Stat(m2.Path("remote", "team", "beta", "gamma", "notes.txt")); err != nil {
		t.Errorf("the saved catalog's tree: %v", err)
	}
	if _, err := os.ReadFile(m2.Path("remote", "team", "beta", "gamma", "notes.txt")); !errors.Is(err, syscall.EIO) {
		t.Errorf("a file never verified, with the server down: %v, want EIO", err)
	}
	b, _ := readGenerated(m2.Path(".skillfs", "status.json"))
	if !strings.Contains(string(b), `"catalog": "saved"`) {
		t.Errorf("status.json should say the catalog is the saved one:\n%s", b)
	}
}

func TestDeadMountIsCleanedUpBeforeMounting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	genTree(t, dir, "local")
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)}, nil)
	m := startMount(t, cfg)
	m.Kill()
	if _, err := os.ReadDir(m.Dir); !errors.Is(err, syscall.ENOTCONN) {
		t.Fatalf("after SIGKILL the mountpoint should be a dead mount (ENOTCONN), got %v", err)
	}
	m2 := &mount{Dir: m.Dir, Cache: m.Cache, log: &syncBuffer{}}
	m2.start(t, cfg)
	if !strings.Contains(m2.log.String(), "dead mount") {
		t.Errorf("no notice about the dead mount:\n%s", m2.log.String())
	}
	if _, err := os.ReadFile(m2.Path("local", "alpha", "SKILL.md")); err != nil {
		t.Error(err)
	}
}

func TestMountRefusesNonEmptyAndDiscoveryPaths(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{"local": stdioServe(t.TempDir(), os.DevNull)}, nil)
	nonEmpty := t.TempDir()
	os.WriteFile(nonEmpty+"/keep.txt", []byte("x"), 0o644)
	home := t.TempDir()
	cases := []struct {
		name, mountpoint, want string
	}{
		{"non-empty", nonEmpty, "not empty"},
		{"claude skills", home + "/.claude/skills/mcp", ".claude"},
		{"a skills folder", t.TempDir() + "/project/skills", "skills"},
	}
	for _, c := range cases {
		cmd := exec.Command(skillfsBin, "mount", "--config", cfg, "--cache-dir", t.TempDir()+"/c", c.mountpoint)
		cmd.Env = append(os.Environ(), "HOME="+home)
		out, err := cmd.CombinedOutput()
		code := exitCode(err)
		if code == 0 || !strings.Contains(string(out), c.want) {
			t.Errorf("%s: exit %d, output:\n%s", c.name, code, out)
		}
		if isMounted(c.mountpoint) {
			syscall.Unmount(c.mountpoint, syscall.MNT_DETACH)
		}
	}
	// The cache of verified bytes may not sit in a discovery path either.
	mnt := t.TempDir()
	cmd := exec.Command(skillfsBin, "mount", "--config", cfg, "--cache-dir", home+"/.agents/skillfs-cache", mnt)
	cmd.Env = append(os.Environ(), "HOME="+home)
	out, err := cmd.CombinedOutput()
	if exitCode(err) != 2 || !strings.Contains(string(out), ".agents") || !strings.Contains(string(out), "cache") {
		t.Errorf("cache in ~/.agents: exit %d, output:\n%s", exitCode(err), out)
	}
	if isMounted(mnt) {
		syscall.Unmount(mnt, syscall.MNT_DETACH)
	}
}

// TestChangesOnTheServerReachTheMount: a file changed and a skill added on
// the server side reach readers through list_changed, with the kernel's
// caches invalidated (the old bytes had been read, so they were cached).
func TestChangesOnTheServerReachTheMount(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	genTree(t, dir, "local")
	remote := t.TempDir()
	genTree(t, remote, "remote")
	srv := serveHTTP(t, remote, "--poll", "200ms")
	cfg := writeConfig(t, map[string]any{
		"local":  stdioServe(dir, os.DevNull, "--poll", "200ms"),
		"remote": map[string]any{"type": "http", "url": srv.URL},
	}, nil)
	m := startMount(t, cfg)
	for _, c := range []struct{ label, src string }{{"local", dir}, {"remote", remote}} {
		p := m.Path(c.label, "alpha", "refs", "a.md")
		if _, err := os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
		if _, err := os.ReadDir(m.Path(c.label)); err != nil {
			t.Fatal(err)
		}
		changed := "# A, changed on the server\n"
		writeTree(t, c.src, map[string]string{
			"alpha/refs/a.md":    changed,
			"gamma-new/SKILL.md": skillMD("gamma-new", "Added after the mount", "new\n"),
		})
		waitFor(t, 2*time.Minute, c.label+": the changed bytes through the mount", func() bool {
			b, err := os.ReadFile(p)
			return err == nil && string(b) == changed
		})
		waitFor(t, 2*time.Minute, c.label+": the new skill in ls", func() bool {
			ents, _ := os.ReadDir(m.Path(c.label))
			for _, e := range ents {
				if e.Name() == "gamma-new" {
					return true
				}
			}
			return false
		})
		if fi, err := os.Stat(p); err != nil || fi.Size() != int64(len(changed)) {
			t.Errorf("%s: size after the change: %v %v", c.label, fi, err)
		}
	}
}

// TestManyOrigins mounts more servers than any internal queue is long: the
// catalog swaps of start-up must not wait for the mount.
func TestManyOrigins(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"one/SKILL.md": skillMD("one", "The one skill", "x\n")})
	servers := map[string]any{}
	var want []string
	for i := range 24 {
		label := fmt.Sprintf("s%02d", i)
		servers[label] = stdioServe(dir, os.DevNull)
		want = append(want, label)
	}
	m := startMount(t, writeConfig(t, servers, nil))
	if got := names(t, m.Dir); !slices.Equal(got, append([]string{".skillfs"}, want...)) {
		t.Errorf("ls of the mount = %v", got)
	}
	for _, label := range want {
		if _, err := os.ReadFile(m.Path(label, "one", "SKILL.md")); err != nil {
			t.Errorf("%s: %v", label, err)
		}
	}
}
