package testkit

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// ModuleRoot walks up from the working directory (a test's package
// directory) to the directory of go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		dir = parent
	}
}

// Cache is the directory that keeps what the tests make or download across
// runs: $SKILLFS_TEST_CACHE, or .cache next to go.mod. It is never under
// the isolated HOME or XDG directories, which a run removes.
func Cache() (string, error) {
	if d := os.Getenv("SKILLFS_TEST_CACHE"); d != "" {
		return d, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".cache"), nil
}

// Build builds the main package pkg (relative to the module root, as
// "./cmd/skillfs") and copies the binary to dst.
//
// The go command links into Cache()/bin, where a binary already built from
// the same sources is not linked again: a package that builds the daemon
// in its TestMain pays about 0.3 s of CPU on a run with nothing changed,
// not the 2 s of a link. A lock file serializes the test processes of one
// checkout that build at once (go test runs packages in parallel). dst is
// a copy, so a later build never changes a binary a running test uses.
func Build(pkg, dst string) error {
	root, err := ModuleRoot()
	if err != nil {
		return err
	}
	cache, err := Cache()
	if err != nil {
		return err
	}
	dir := filepath.Join(cache, "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	goTool := "go"
	if g := os.Getenv("GOROOT"); g != "" {
		goTool = filepath.Join(g, "bin", "go")
	}
	built := filepath.Join(dir, strings.ReplaceAll(strings.TrimPrefix(filepath.ToSlash(filepath.Clean(pkg)), "./"), "/", "_"))
	cmd := exec.Command(goTool, "build", "-o", built, pkg)
	cmd.Dir = root
	// The go command keeps its telemetry under the user config directory:
	// in the cache, not in the test's own XDG_CONFIG_HOME, which a test
	// expects to find empty.
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(cache, "config"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return copyFile(built, dst)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
