package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestBuild: Build gives each caller a copy of its own that runs, a copy
// that a later build leaves alone, and a build after a change to the
// sources gives the changed program, never the cached one.
func TestBuild(t *testing.T) {
	mod := t.TempDir()
	t.Chdir(mod)
	t.Setenv("SKILLFS_TEST_CACHE", filepath.Join(mod, ".cache"))
	write := func(greeting string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(mod, "cmd", "hello"), 0o755); err != nil {
			t.Fatal(err)
		}
		src := "package main\n\nfunc main() { println(\"" + greeting + "\") }\n"
		if err := os.WriteFile(filepath.Join(mod, "cmd", "hello", "main.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/hello\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(bin string) string {
		t.Helper()
		out, err := exec.Command(bin).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", bin, err, out)
		}
		return string(out)
	}
	dir := t.TempDir()
	first, second, third := filepath.Join(dir, "first"), filepath.Join(dir, "second"), filepath.Join(dir, "third")
	write("one")
	for _, dst := range []string{first, second} {
		if err := Build("./cmd/hello", dst); err != nil {
			t.Fatal(err)
		}
	}
	write("two")
	if err := Build("./cmd/hello", third); err != nil {
		t.Fatal(err)
	}
	for bin, want := range map[string]string{first: "one\n", second: "one\n", third: "two\n"} {
		if got := run(bin); got != want {
			t.Errorf("%s printed %q, want %q", filepath.Base(bin), got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(mod, ".cache", "bin", "cmd_hello")); err != nil {
		t.Errorf("the build is not kept in the cache: %v", err)
	}
	if err := Build("./cmd/hello", first); err == nil {
		t.Error("Build replaced a binary that was already there")
	}
}
