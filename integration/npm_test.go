//go:build linux

package integration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// bundleBanner gives an ES module bundle the require of CommonJS: what
// esbuild inlines from CommonJS packages still requires node's own modules.
const bundleBanner = "import{createRequire as __skillfsRequire}from'module';const require=__skillfsRequire(import.meta.url);"

// bundle writes out, a single ES module of entry and everything it imports,
// with the esbuild the installed project dir pins, unless out exists. node
// loading one file rather than the hundreds of a node_modules tree starts
// in about 0.55 s of CPU rather than 0.95 (the conformance suite); the code
// that runs is the same. out is written under a temporary name and renamed
// into place, so that concurrent runs and a run cut short leave either no
// bundle or a whole one.
func bundle(node, dir, entry, out string) error {
	if _, err := os.Stat(out); err == nil {
		return nil
	}
	tmp := fmt.Sprintf("%s.tmp-%d.mjs", out, os.Getpid())
	defer os.Remove(tmp)
	esbuild := filepath.Join(dir, "node_modules", "esbuild", "bin", "esbuild")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, esbuild, entry, "--bundle", "--platform=node", "--format=esm",
		"--log-level=error", "--banner:js="+bundleBanner, "--outfile="+tmp)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("esbuild %s: %v\n%s", entry, err, out)
	}
	return os.Rename(tmp, out)
}

// installPinned installs the node project testdata/NAME, made of files
// (package.json and package-lock.json first), with `npm ci`, once per
// machine: into testCache()/NAME-HASH, where HASH is of the files, so a
// changed pin or script installs again and an unchanged one is reused by
// every later run (and by other checkouts sharing $SKILLFS_TEST_CACHE).
// what names the project in messages.
//
// skip is set when npm ci failed and `npm ping` cannot reach the registry
// either (offline, with nothing cached): the test cannot run here. err is
// set when npm ci failed although the registry answers: the pins are wrong.
func installPinned(name, what string, files ...string) (dir, skip string, err error) {
	if _, err := exec.LookPath("npm"); err != nil {
		return "", fmt.Sprintf("%s needs npm on PATH: %v", what, err), nil
	}
	src := filepath.Join(moduleRoot(), "integration", "testdata", name)
	contents := map[string][]byte{}
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return "", "", err
		}
		contents[f] = b
		h.Write(b)
	}
	cache := testCache()
	dir = filepath.Join(cache, name+"-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err == nil {
		return dir, "", nil
	}
	skip, err = npmInstall(cache, dir, what, contents)
	return dir, skip, err
}

// npmInstall installs the project of files into dir by `npm ci` in a
// temporary directory renamed into place, so that a run cut short leaves
// no half install behind and concurrent runs do not mix. npm's cache is
// cache/npm, so a machine that ran the tests once can run them offline.
func npmInstall(cache, dir, what string, files map[string][]byte) (skip string, err error) {
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cache, filepath.Base(dir)+"-tmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for f, b := range files {
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
			return "", err
		}
	}
	env := append(os.Environ(), "npm_config_cache="+filepath.Join(cache, "npm"), "npm_config_update_notifier=false")
	npm := func(timeout time.Duration, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npm", args...)
		cmd.Dir, cmd.Env = tmp, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// --ignore-scripts: nothing from the registry runs at install time.
	// One quick retry: offline, npm's default backoff takes minutes to give up.
	install := func() (string, error) {
		return npm(10*time.Minute, "ci", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund",
			"--fetch-retries=1", "--fetch-retry-mintimeout=1000", "--fetch-retry-maxtimeout=5000")
	}
	ci, err := install()
	if err != nil {
		if ping, perr := npm(time.Minute, "ping", "--fetch-retries=0"); perr != nil {
			return fmt.Sprintf("npm ci of %s failed and the npm registry is unreachable (npm ping: %v %s); npm ci said:\n%s", what, perr, strings.TrimSpace(ping), ci), nil
		}
		// The registry answers: one more install, for a connection reset
		// in the middle of one (seen once: ECONNRESET on a tarball).
		first := ci
		if ci, err = install(); err != nil {
			return "", fmt.Errorf("npm ci of %s failed twice although the registry answers npm ping: %v\nfirst:\n%s\nsecond:\n%s", what, err, first, ci)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, ".installed"), nil, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, ".installed")); serr == nil {
			return "", nil // another run installed it first
		}
		return "", err
	}
	return "", nil
}
