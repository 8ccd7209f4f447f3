//go:build linux

package integration

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/demo"
)

// The command-line surface a user touches: the README's demo, unmount,
// a busy mount, the cache command.

func TestDemoMountFromTheReadme(t *testing.T) {
	t.Parallel()
	m := &mount{Dir: filepath.Join(t.TempDir(), "mcp-skills"), Cache: filepath.Join(t.TempDir(), "cache"), log: &syncBuffer{}}
	// An empty config home: no config file, so the demo is what mounts, as
	// on a fresh machine.
	cfgHome := t.TempDir()
	m.run(t, append(os.Environ(), "XDG_CONFIG_HOME="+cfgHome), "mount", "--cache-dir", m.Cache, m.Dir)
	if !strings.Contains(m.log.String(), "no config at") {
		t.Errorf("no notice that the demo is mounted for want of a config:\n%s", m.log.String())
	}
	// The live line is the one the README quotes.
	readme, err := os.ReadFile(filepath.Join(moduleRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile("prints `skillfs: mounted /tmp/mcp-skills([^`]*)`").FindSubmatch(readme)
	if quoted == nil {
		t.Fatal("README.md no longer quotes the demo's live line")
	}
	if live := "skillfs: mounted " + m.Dir + string(quoted[1]); strings.TrimSpace(m.Ready) != live {
		t.Errorf("the demo's live line is %q; README.md says %q", strings.TrimSpace(m.Ready), live)
	}
	src := filepath.Join(moduleRoot(), "internal", "demo", "skills")
	for _, rel := range demo.Files() {
		want, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(m.Path("demo", filepath.FromSlash(rel)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("demo/%s: %v", rel, err)
		}
	}
	script := m.Path("demo", "git-workflow", "scripts", "check-branch.sh")
	if fi, _ := os.Stat(script); fi == nil || fi.Mode().Perm() != 0o444 {
		t.Errorf("a script executable in the demo's source shows as %v", fi)
	}
	if err := exec.Command(script).Run(); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("running the demo script: %v, want permission denied", err)
	}
	idx := readIndex(t, m)
	var nested bool
	for _, s := range idx.Skills {
		if s.Name == "partial-refunds" {
			nested = strings.Contains(strings.Join(s.Flags, ","), "allowed-tools")
		}
	}
	if !nested {
		t.Errorf("the demo's nested skill is not flagged allowed-tools")
	}
}

func TestUnmountCommandEndsTheDaemon(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	genTree(t, dir, "local")
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)}, nil)
	m := startMount(t, cfg)
	out, err := exec.Command(skillfsBin, "unmount", m.Dir).CombinedOutput()
	if err != nil {
		t.Fatalf("skillfs unmount: %v\n%s", err, out)
	}
	select {
	case <-m.done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the daemon did not exit after skillfs unmount")
	}
	if m.code != 0 || isMounted(m.Dir) {
		t.Errorf("exit %d, still mounted %v", m.code, isMounted(m.Dir))
	}
	if procs := serverProcesses(t, dir); len(procs) != 0 {
		t.Errorf("server processes left: %v", procs)
	}
	out, err = exec.Command(skillfsBin, "unmount", m.Dir).CombinedOutput()
	if exitCode(err) != 2 || !strings.Contains(string(out), "not a mount point") {
		t.Errorf("unmounting again: exit %d, %s", exitCode(err), out)
	}
}

func TestBusyMountIsDetachedLazily(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	genTree(t, dir, "local")
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)}, nil)
	m := startMount(t, cfg)
	// A process with its working directory in the mount keeps it busy.
	holder := exec.Command("sleep", "60")
	holder.Dir = m.Path("local", "alpha")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the daemon did not exit after SIGTERM on a busy mount")
	}
	if m.code != 4 {
		t.Errorf("exit code %d on a busy mount, want 4", m.code)
	}
	if !strings.Contains(m.log.String(), "busy") || !strings.Contains(m.log.String(), "lazily") {
		t.Errorf("no message about the lazy unmount:\n%s", m.log.String())
	}
	// The lazy unmount worked: how the first attempt failed is no news.
	if strings.Contains(m.log.String(), "exec:") || strings.Contains(m.log.String(), "no such file") {
		t.Errorf("a successful lazy unmount printed an error:\n%s", m.log.String())
	}
	if isMounted(m.Dir) {
		t.Errorf("%s is still in the mount table after a lazy unmount", m.Dir)
	}
	m.code = 0 // checked above; Stop expects a clean exit
}

func TestCacheCommandRemovesOneOrigin(t *testing.T) {
	t.Parallel()
	o := mountTwoOrigins(t)
	if _, err := os.ReadFile(o.m.Path("local", "alpha", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(o.m.Path("remote", "alpha", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	o.m.Stop(t)
	out, err := exec.Command(skillfsBin, "cache", "list", "--cache-dir", o.m.Cache).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "local-") || !strings.Contains(string(out), "remote-") {
		t.Fatalf("cache list: %v\n%s", err, out)
	}
	out, err = exec.Command(skillfsBin, "cache", "rm", "--cache-dir", o.m.Cache, "local").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "removed local-") {
		t.Fatalf("cache rm local: %v\n%s", err, out)
	}
	ents, _ := os.ReadDir(o.m.Cache)
	var left []string
	for _, e := range ents {
		if e.Name() != ".identity-key" { // the cache's key, not an origin
			left = append(left, e.Name())
		}
	}
	if len(left) != 1 || !strings.HasPrefix(left[0], "remote-") {
		t.Errorf("cache after rm local: %v", left)
	}
	out, err = exec.Command(skillfsBin, "cache", "rm", "--cache-dir", o.m.Cache, "nope").CombinedOutput()
	if exitCode(err) != 2 || !strings.Contains(string(out), "cache list") {
		t.Errorf("cache rm of an unknown label: exit %d, %s", exitCode(err), out)
	}
}

func TestInodesAreStableAcrossRemounts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	genTree(t, dir, "local")
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)}, nil)
	m := startMount(t, cfg)
	ino := func(p string) uint64 {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		return st.Ino
	}
	before := ino(m.Path("local", "team", "beta", "data.bin"))
	m.Stop(t)
	m2 := &mount{Dir: m.Dir, Cache: t.TempDir(), log: &syncBuffer{}}
	m2.start(t, cfg)
	if after := ino(m2.Path("local", "team", "beta", "data.bin")); after != before {
		t.Errorf("inode %d before the remount, %d after", before, after)
	}
}

func TestCommandLineMistakesSayWhatToChange(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"mount"}, "MOUNTPOINT"},
		{[]string{"mount", "--memory-cache", "lots", t.TempDir()}, "32MiB"},
		{[]string{"mount", "--config", "/nonexistent/config.json", t.TempDir()}, "/nonexistent/config.json"},
		{[]string{"bogus"}, "skillfs --help"},
		{[]string{"serve", "--http", "0.0.0.0:80", t.TempDir()}, "--allow-remote"},
	}
	for _, c := range cases {
		out, err := exec.Command(skillfsBin, c.args...).CombinedOutput()
		if exitCode(err) != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("skillfs %v: exit %d, output %q; want exit 2 and %q", c.args, exitCode(err), out, c.want)
		}
	}
}
