//go:build linux

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptDuringStartup: Ctrl-C (SIGINT) while the servers are still
// starting ends the mount with a word saying so and exit 130, as a shell
// reports SIGINT, not a silent 0; SIGTERM (a service manager's stop) says
// so too and exits 0. Nothing is left mounted.
func TestInterruptDuringStartup(t *testing.T) {
	t.Parallel()
	// A stdio "server" that never answers initialize: start-up waits.
	cfg := writeConfig(t, map[string]any{"mute": map[string]any{"command": "sleep", "args": []string{"300"}}}, nil)
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		want string
	}{
		{syscall.SIGINT, 130, "skillfs: interrupted (SIGINT) while starting: nothing was mounted\n"},
		{syscall.SIGTERM, 0, "skillfs: stopped (SIGTERM) while starting: nothing was mounted\n"},
	} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			t.Parallel()
			mnt := filepath.Join(t.TempDir(), "mnt")
			cmd := exec.Command(skillfsBin, "mount", "--config", cfg, "--cache-dir", t.TempDir(), "--startup-timeout", "10m", mnt)
			log := &syncBuffer{}
			cmd.Stderr = log
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() {
				cmd.Process.Kill()
				if isMounted(mnt) {
					syscall.Unmount(mnt, syscall.MNT_DETACH)
				}
			})
			waitFor(t, 2*time.Minute, "the mount to start waiting for its server", func() bool {
				return strings.Contains(log.String(), "created mountpoint") || dirExists(mnt)
			})
			cmd.Process.Signal(tc.sig)
			var err error
			select {
			case err = <-done:
			case <-time.After(2 * time.Minute):
				t.Fatalf("mount did not exit after %v during start-up:\n%s", tc.sig, log.String())
			}
			if code := exitCode(err); code != tc.code || !strings.HasSuffix(log.String(), tc.want) {
				t.Errorf("after %v during start-up: exit %d (want %d), stderr ends:\n%s\nwant %q", tc.sig, code, tc.code, log.String(), tc.want)
			}
			if isMounted(mnt) {
				t.Errorf("%s is mounted after an interrupted start-up", mnt)
			}
		})
	}
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
