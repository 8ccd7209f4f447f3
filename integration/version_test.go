//go:build linux

package integration

import (
	"os/exec"
	"strings"
	"testing"
)

func TestVersionFlagMatchesVersionCommand(t *testing.T) {
	t.Parallel()
	flag, err := exec.Command(skillfsBin, "--version").Output()
	if err != nil {
		t.Fatalf("skillfs --version: %v", err)
	}
	cmd, err := exec.Command(skillfsBin, "version").Output()
	if err != nil {
		t.Fatalf("skillfs version: %v", err)
	}
	if string(flag) != string(cmd) {
		t.Errorf("skillfs --version says %q, skillfs version %q", flag, cmd)
	}
	if v := strings.TrimSpace(strings.TrimPrefix(string(cmd), "skillfs ")); v == "" || !strings.HasPrefix(string(cmd), "skillfs ") {
		t.Errorf("skillfs version = %q, want \"skillfs VERSION\"", cmd)
	}
}
