//go:build linux

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The ready line and --require-all: what a user is told about the servers
// when the mount goes live, with one honest server and one whose command
// is not installed.

// missingCommand is a stdio server's command that exists nowhere.
const missingCommand = "skillfs-test-no-such-server"

func honestAndBroken(t *testing.T) (cfg string, skills int) {
	t.Helper()
	dir := t.TempDir()
	for name := range genTree(t, dir, "local") {
		if filepath.Base(name) == "SKILL.md" {
			skills++
		}
	}
	cfg = writeConfig(t, map[string]any{
		"local":  stdioServe(dir, os.DevNull),
		"broken": map[string]any{"command": missingCommand},
	}, nil)
	return cfg, skills
}

func TestReadyLineSaysWhatIsLive(t *testing.T) {
	t.Parallel()
	cfg, skills := honestAndBroken(t)
	m := startMount(t, cfg)
	m.warnings = true // the broken server's retries are logged
	want := fmt.Sprintf(`skillfs: mounted %s: 2 servers, 1 connected (%d skills), 1 failed: broken: command %q not found`, m.Dir, skills, missingCommand)
	if m.Ready != want {
		t.Errorf("ready line:\n got %s\nwant %s", m.Ready, want)
	}
}

func TestRequireAllRefusesAFailedServer(t *testing.T) {
	t.Parallel()
	cfg, _ := honestAndBroken(t)
	mnt := filepath.Join(t.TempDir(), "mnt")
	cmd := exec.Command(skillfsBin, "mount", "--require-all", "--config", cfg, "--cache-dir", t.TempDir(), "--startup-timeout", "10m", mnt)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if code := exitCode(err); code != 5 {
		t.Errorf("exit code %d with --require-all and a broken server, want 5\n%s", code, stderr.String())
	}
	if strings.Contains(stdout.String(), "skillfs: mounted") {
		t.Errorf("--require-all mounted anyway: %s", stdout.String())
	}
	if want := fmt.Sprintf(`broken: command %q not found`, missingCommand); !strings.Contains(stderr.String(), want) {
		t.Errorf("the error does not say %s:\n%s", want, stderr.String())
	}
	if isMounted(mnt) {
		t.Errorf("%s is mounted after --require-all refused", mnt)
	}
}
