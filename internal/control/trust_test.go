package control

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A registration of the user's own that names a socket outside its
// directory is skipped: the file it names survives, the registration too.
func TestFindRemovesNothingOutsideItsDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := prepareDir(dir); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep\n"), 0o600)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	reg := filepath.Join(dir, "odd.json")
	writeAtomic(reg, registration{Mountpoint: "/m/odd", PID: dead.Process.Pid, Socket: victim, Started: time.Now()})
	_, err := Find([]string{dir}, "")
	if !errors.Is(err, ErrNoMount) || !strings.Contains(err.Error(), "skipped "+reg+": names the socket "+victim+", not "+filepath.Join(dir, "odd.sock")+" beside it") {
		t.Errorf("Find: %v", err)
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "keep\n" {
		t.Errorf("victim: %q %v", b, err)
	}
	if _, err := os.Stat(reg); err != nil {
		t.Errorf("the registration was removed: %v", err)
	}
}

// A directory or registration writable by others, or a link, is skipped.
func TestFindSkipsWhatIsNotTheUsersAlone(t *testing.T) {
	base := t.TempDir()
	loose := filepath.Join(base, "loose")
	os.Mkdir(loose, 0o700)
	os.Chmod(loose, 0o777)
	link := filepath.Join(base, "link")
	real := filepath.Join(base, "real")
	start(t, real, "/m/real", newFake("a"))
	os.Symlink(real, link)
	_, err := Find([]string{loose, link}, "")
	for _, want := range []string{"skipped " + loose + ": writable by group or others (mode 0777)", "skipped " + link + ": a symbolic link, not a directory of yours"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Find: %v; want %q", err, want)
		}
	}
	// A registration writable by others in a good directory.
	s := start(t, filepath.Join(base, "run"), "/m/one", newFake("a"))
	reg := strings.TrimSuffix(s.Socket(), ".sock") + ".json"
	os.Chmod(reg, 0o666)
	_, err = Find([]string{filepath.Dir(reg)}, "")
	if err == nil || !strings.Contains(err.Error(), "skipped "+reg+": writable by group or others (mode 0666)") {
		t.Errorf("Find with a loose registration: %v", err)
	}
}

// The first refusal is logged; the rest are counted, once a period and
// when the server stops, and every one is counted.
func TestRefusalsAreCountedNotLogged(t *testing.T) {
	var buf syncBuf
	r := &refusals{log: slog.New(slog.NewTextHandler(&buf, nil)), every: 20 * time.Millisecond}
	const n = 500
	for i := range n {
		r.refused(1234, nil)
		if i%100 == 0 {
			time.Sleep(30 * time.Millisecond)
		}
	}
	r.close()
	r.refused(1234, nil) // after close: nothing
	total := 0
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	for _, l := range lines {
		if m := regexp.MustCompile(` count=(\d+)`).FindStringSubmatch(l); m != nil {
			k, _ := strconv.Atoi(m[1])
			total += k
		} else {
			total++
		}
	}
	if total != n || len(lines) > n/50 {
		t.Errorf("%d lines count %d refusals, want %d:\n%s", len(lines), total, n, buf.String())
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
