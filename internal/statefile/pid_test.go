package statefile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A pid file left by a daemon that is gone is replaced; one naming a
// running process, or a link, is refused and left as it is.
func TestPidFileReplacesOnlyAStaleOneOfOurs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.pid")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte(strconv.Itoa(dead.Process.Pid)+"\n"), 0o644)
	remove, err := WritePid(path)
	if err != nil {
		t.Fatalf("over a stale pid file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != strconv.Itoa(os.Getpid())+"\n" {
		t.Errorf("pid file holds %q", b)
	}
	remove()
	if _, err := os.Stat(path); err == nil {
		t.Error("pid file left after remove")
	}

	os.WriteFile(path, []byte(strconv.Itoa(os.Getppid())+"\n"), 0o644)
	if _, err := WritePid(path); err == nil || !strings.Contains(err.Error(), "which is running") {
		t.Errorf("over a live pid file: %v", err)
	}
	os.Remove(path)

	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep\n"), 0o600)
	os.Symlink(victim, path)
	if _, err := WritePid(path); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("over a link: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Errorf("victim: %q", b)
	}
	if err := CheckPidPath(path); err == nil {
		t.Error("CheckPidPath accepted a link")
	}
	if _, err := OpenLog(path); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("log file through a link: %v", err)
	}
}
