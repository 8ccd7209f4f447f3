// Package testkit is what every test process of skillfs shares: a hermetic
// environment, so that a test never finds, reads or writes the real user's
// mounts, config, cache or state.
//
// A person who runs skillfs daily has a mount registered under
// $XDG_RUNTIME_DIR/skillfs (or ~/.cache/skillfs/run) and a config at
// ~/.config/skillfs/config.json; a test that inherits that environment
// finds "2 skillfs mounts are running" or fails on the user's ${VAR}. Each
// test package calls Main (or Isolate) from its TestMain, so that the test
// process and every process it starts (the skillfs binary, servers) see a
// HOME and XDG base directories of their own, fresh and empty.
package testkit

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// Main is a TestMain that runs the package's tests in an isolated
// environment (Isolate) and exits with their result.
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run isolates the environment, runs the tests and removes the directories
// made for them; it returns m.Run's exit code. For a TestMain with work of
// its own: call it where m.Run would be called.
func Run(m *testing.M) int {
	cleanup, err := Isolate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testkit:", err)
		return 1
	}
	defer cleanup()
	return m.Run()
}

// WaitingParallel sets -test.parallel to at least n unless the command
// line gave it, for a package whose parallel tests mostly wait (on a
// timer, a server or the kernel) rather than compute: -parallel's default
// of GOMAXPROCS (2 on a small machine) would run such waits two at a time.
// It parses the command line; call it from TestMain, before m.Run.
func WaitingParallel(n int) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(max(n, runtime.GOMAXPROCS(0))))
	}
}

// The variables Isolate points at directories of its own, each named by
// the variable under one temporary directory. XDG_RUNTIME_DIR is made 0700,
// as the XDG spec requires and skillfs checks.
var isolated = []string{"HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR"}

// envRoot names the directory Isolate made the others under. A test
// process that finds it set, with HOME under it, was started by another
// (a helper re-executed from the test binary, often killed rather than
// stopped): it keeps the directories it inherited, which its parent
// removes, and makes none of its own to leave behind.
const envRoot = "SKILLFS_TESTKIT_ROOT"

// unset are variables a test process must not pass on: NOTIFY_SOCKET would
// have a test's daemon report to the user's systemd.
var unset = []string{"NOTIFY_SOCKET"}

// Isolate points HOME, XDG_CONFIG_HOME, XDG_CACHE_HOME, XDG_STATE_HOME,
// XDG_DATA_HOME and XDG_RUNTIME_DIR at fresh, empty directories for the
// rest of the process (children inherit them), and unsets NOTIFY_SOCKET.
// The go command's own directories (GOCACHE, GOMODCACHE, GOPATH, GOENV)
// are pinned to where they were, so that a test that builds the binary
// reuses the user's build and module caches. The returned func removes the
// directories. A process that inherited an isolated environment (envRoot)
// keeps it, and its cleanup removes nothing.
func Isolate() (cleanup func(), err error) {
	if root := os.Getenv(envRoot); root != "" && os.Getenv("HOME") == filepath.Join(root, "HOME") {
		return func() {}, nil
	}
	if err := pinGoDirs(); err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp("", "skillfs-test-home-")
	if err != nil {
		return nil, fmt.Errorf("make a test home: %w", err)
	}
	cleanup = func() { os.RemoveAll(root) }
	for _, name := range isolated {
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			cleanup()
			return nil, fmt.Errorf("make a test home: %w", err)
		}
		os.Setenv(name, dir)
	}
	os.Setenv(envRoot, root)
	for _, name := range unset {
		os.Unsetenv(name)
	}
	return cleanup, nil
}

// pinGoDirs sets GOCACHE, GOPATH, GOMODCACHE and GOENV, where unset, to the
// defaults the go command derives from HOME and the XDG directories, before
// Isolate changes them.
func pinGoDirs() error {
	home, _ := os.UserHomeDir()
	set := func(name string, value func() (string, error)) error {
		if os.Getenv(name) != "" {
			return nil
		}
		v, err := value()
		if err != nil || v == "" {
			return nil // the go command has no default either
		}
		return os.Setenv(name, v)
	}
	if err := set("GOCACHE", func() (string, error) {
		dir, err := os.UserCacheDir()
		return filepath.Join(dir, "go-build"), err
	}); err != nil {
		return err
	}
	if err := set("GOENV", func() (string, error) {
		dir, err := os.UserConfigDir()
		return filepath.Join(dir, "go", "env"), err
	}); err != nil {
		return err
	}
	if err := set("GOPATH", func() (string, error) {
		if home == "" {
			return "", nil
		}
		return filepath.Join(home, "go"), nil
	}); err != nil {
		return err
	}
	return set("GOMODCACHE", func() (string, error) {
		gopath := filepath.SplitList(os.Getenv("GOPATH"))
		if len(gopath) == 0 || gopath[0] == "" {
			return "", nil
		}
		return filepath.Join(gopath[0], "pkg", "mod"), nil
	})
}
