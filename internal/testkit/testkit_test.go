package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

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
