//go:build linux

package integration

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Origin identity covers env and headers: a label re-pointed at another
// server by changing only an env variable or a header never shows the old
// server's saved catalog or bytes, and no secret reaches the disk.

func secretToken(t *testing.T) string {
	t.Helper()
	var b [12]byte
	rand.Read(b[:])
	return "tok-" + hex.EncodeToString(b[:])
}

// fastFail makes a server that is down cost seconds, not the defaults.
var fastFail = map[string]any{"defaults": map[string]any{"limits": map[string]any{"connect_timeout": "2s"}}}

// remount mounts cfg at dir with cache, expecting servers to be down.
func remount(t *testing.T, dir, cache, cfg string) *mount {
	t.Helper()
	m := &mount{Dir: dir, Cache: cache, log: &syncBuffer{}, warnings: true}
	return m.start(t, cfg, "--startup-timeout", "3s")
}

// checkSecretsAbsent fails if any secret appears in a file name or file
// under root, or in any of texts.
func checkSecretsAbsent(t *testing.T, root string, texts map[string]string, secrets ...string) {
	t.Helper()
	walked := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		walked++
		var b []byte
		if d.Type().IsRegular() {
			if b, err = os.ReadFile(p); err != nil {
				return err
			}
		}
		for _, s := range secrets {
			if strings.Contains(p, s) || bytes.Contains(b, []byte(s)) {
				t.Errorf("secret %q is in clear in %s", s, p)
			}
		}
		return nil
	})
	if err != nil || walked < 3 {
		t.Fatalf("walking the cache %s: %v (%d entries)", root, err, walked)
	}
	for name, text := range texts {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("secret %q is in clear in %s", s, name)
			}
		}
	}
}

// originShows reports whether the mount serves label/alpha/SKILL.md with
// want's bytes, failing on any other outcome than those bytes or ENOENT.
func originShows(t *testing.T, m *mount, label string, want []byte) bool {
	t.Helper()
	got, err := os.ReadFile(m.Path(label, "alpha", "SKILL.md"))
	switch {
	case err == nil && bytes.Equal(got, want):
		return true
	case errors.Is(err, fs.ErrNotExist):
		return false
	}
	t.Fatalf("%s/alpha/SKILL.md: %v, %q", label, err, got)
	return false
}

func TestEnvChangeIsAnotherOrigin(t *testing.T) {
	t.Parallel()
	a := t.TempDir()
	files := genTree(t, a, "a")
	tokA, tokB := secretToken(t), secretToken(t)
	// One label, one command line; the env variable SKILLS_DIR alone says
	// which folder, so which server, the label reaches.
	entry := func(dir, token string) map[string]any {
		return map[string]any{
			"command": "sh",
			"args":    []string{"-c", `exec "$SKILLFS" serve --access-log /dev/null "$SKILLS_DIR"`},
			"env":     map[string]string{"SKILLFS": skillfsBin, "SKILLS_DIR": dir, "SKILLS_TOKEN": token},
		}
	}
	cfgA := writeConfig(t, map[string]any{"docs": entry(a, tokA)}, fastFail)
	m := startMount(t, cfgA)
	if !originShows(t, m, "docs", files["alpha/SKILL.md"]) {
		t.Fatal("server A's file is not shown")
	}
	logs := map[string]string{}
	m.Stop(t)
	logs["first mount's log"] = m.log.String()

	// Control: the same config with its server down shows the saved
	// catalog and the verified bytes, so the identity (and the store's
	// key behind it) survives a restart.
	if err := os.Rename(a, a+".away"); err != nil {
		t.Fatal(err)
	}
	m2 := remount(t, m.Dir, m.Cache, cfgA)
	if !originShows(t, m2, "docs", files["alpha/SKILL.md"]) {
		t.Fatalf("the same config with its server down does not show the saved catalog:\n%s", m2.log.String())
	}
	status, _ := readGenerated(m2.Path(".skillfs", "status.json"))
	logs["status.json"] = string(status)
	m2.Stop(t)
	logs["second mount's log"] = m2.log.String()

	// Only the env differs, pointing the label at server B, which is down:
	// nothing of A may show under the label.
	for name, cfg := range map[string]string{
		"SKILLS_DIR": writeConfig(t, map[string]any{"docs": entry(filepath.Join(t.TempDir(), "b"), tokA)}, fastFail),
		"a token":    writeConfig(t, map[string]any{"docs": entry(a, tokB)}, fastFail),
	} {
		m3 := remount(t, m.Dir, m.Cache, cfg)
		if originShows(t, m3, "docs", files["alpha/SKILL.md"]) {
			t.Errorf("after changing only %s in env, server A's saved catalog and bytes show under the label", name)
		}
		idx := readIndex(t, m3)
		for _, s := range idx.Skills {
			if s.Origin == "docs" {
				t.Errorf("after changing only %s in env, index.json lists %s from the old server", name, s.URI)
			}
		}
		m3.Stop(t)
		logs["log after changing "+name] = m3.log.String()
	}
	checkSecretsAbsent(t, m.Cache, logs, tokA, tokB)
}

func TestHeaderChangeIsAnotherOrigin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := genTree(t, dir, "a")
	srv := serveHTTP(t, dir)
	tokA, tokB := secretToken(t), secretToken(t)
	cfg := func(token string) string {
		return writeConfig(t, map[string]any{"acme": map[string]any{
			"type": "http", "url": srv.URL, "headers": map[string]string{"Authorization": "Bearer " + token},
		}}, fastFail)
	}
	cfgA := cfg(tokA)
	m := startMount(t, cfgA)
	if !originShows(t, m, "acme", files["alpha/SKILL.md"]) {
		t.Fatal("the server's file is not shown")
	}
	m.Stop(t)
	logs := map[string]string{"first mount's log": m.log.String()}
	srv.Kill()

	m2 := remount(t, m.Dir, m.Cache, cfgA)
	if !originShows(t, m2, "acme", files["alpha/SKILL.md"]) {
		t.Fatalf("the same config with its server down does not show the saved catalog:\n%s", m2.log.String())
	}
	status, _ := readGenerated(m2.Path(".skillfs", "status.json"))
	logs["status.json"] = string(status)
	m2.Stop(t)
	logs["second mount's log"] = m2.log.String()

	// The same URL with another credential may be another tenant's view.
	m3 := remount(t, m.Dir, m.Cache, cfg(tokB))
	if originShows(t, m3, "acme", files["alpha/SKILL.md"]) {
		t.Error("after changing only a header, the old saved catalog and bytes show under the label")
	}
	m3.Stop(t)
	logs["third mount's log"] = m3.log.String()
	checkSecretsAbsent(t, m.Cache, logs, tokA, tokB)
}
