package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

// TestChildKeepsItsParentsDirectories: the test binary run again from a
// test (as helpers are, and killed) inherits this process's directories and
// makes none of its own, so a helper that never returns leaves nothing
// behind. A child told a HOME of its own still gets fresh directories.
func TestChildKeepsItsParentsDirectories(t *testing.T) {
	if os.Getenv("TESTKIT_CHILD") != "" {
		for _, name := range isolated {
			os.Stdout.WriteString(name + "=" + os.Getenv(name) + "\n")
		}
		return
	}
	tmp := t.TempDir()
	run := func(env ...string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildKeepsItsParentsDirectories$")
		cmd.Env = append(os.Environ(), append(env, "TESTKIT_CHILD=1", "TMPDIR="+tmp)...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return string(out)
	}
	out := run()
	for _, name := range isolated {
		if !strings.Contains(out, name+"="+os.Getenv(name)+"\n") {
			t.Errorf("the child's %s is not its parent's:\n%s", name, out)
		}
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("the child made %d directories of its own", len(ents))
	}
	if out := run("HOME=" + tmp); strings.Contains(out, "HOME="+os.Getenv("HOME")+"\n") {
		t.Errorf("a child with a HOME of its own kept its parent's:\n%s", out)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("a child with a HOME of its own left %d directories behind", len(ents))
	}
}

// TestIsolated: under Main, HOME and every XDG base directory are fresh,
// empty directories of this process's, XDG_RUNTIME_DIR is 0700, and the
// go command's caches stay where the user keeps them.
func TestIsolated(t *testing.T) {
	root := ""
	for _, name := range isolated {
		dir := os.Getenv(name)
		if !filepath.IsAbs(dir) || filepath.Base(dir) != name {
			t.Errorf("%s=%q, want a directory of the test's own", name, dir)
			continue
		}
		if root == "" {
			root = filepath.Dir(dir)
		} else if filepath.Dir(dir) != root {
			t.Errorf("%s=%q is not under %s", name, dir, root)
		}
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a 0700 directory", name, fi, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%s is not empty: %v", name, ents)
		}
	}
	for _, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV"} {
		if v := os.Getenv(name); v == "" || (root != "" && strings.HasPrefix(v, root+string(filepath.Separator))) {
			t.Errorf("%s=%q, want it pinned outside the test home", name, v)
		}
	}
	if v, ok := os.LookupEnv("NOTIFY_SOCKET"); ok {
		t.Errorf("NOTIFY_SOCKET=%q is passed on", v)
	}
}
