//go:build linux

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStatusNamesSkillsTheServerRefused: `skillfs serve` leaves out a skill
// whose description is over the Agent Skills limit. The mount cannot show
// a skill the server never listed, but the person must learn of it:
// `skillfs status` counts the server's stderr warnings and shows the
// skipped line, escaped; `status --json` has the counts; the valid skill
// beside it is served, and no file under the mount names the refused one.
func TestStatusNamesSkillsTheServerRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"fine", "wordy"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, "fine", "SKILL.md"), "---\nname: fine\ndescription: A skill that keeps the rules.\n---\nbody\n")
	long := strings.Repeat("x", 1068)
	writeFile(t, filepath.Join(dir, "wordy", "SKILL.md"), "---\nname: wordy\ndescription: "+long+"\n---\nbody\n")
	env := runtimeEnv(t)
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)}, nil)
	m := startMountEnv(t, env, cfg)

	if b, err := os.ReadFile(filepath.Join(m.Dir, "local", "fine", "SKILL.md")); err != nil || !strings.Contains(string(b), "keeps the rules") {
		t.Fatalf("the valid skill: %q, %v", b, err)
	}
	var row struct {
		Stderr *struct {
			Lines        int      `json:"lines"`
			Warnings     int      `json:"warnings"`
			LastWarnings []string `json:"last_warnings"`
		} `json:"stderr"`
	}
	waitFor(t, time.Minute, "the skipped line in status --json", func() bool {
		out, errOut, code := ctl(t, env, "status", "--json")
		if code != 0 {
			t.Fatalf("status --json: exit %d\n%s", code, errOut)
		}
		var st struct {
			Servers []json.RawMessage `json:"servers"`
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil || len(st.Servers) != 1 {
			t.Fatalf("status --json: %v\n%s", err, out)
		}
		if err := json.Unmarshal(st.Servers[0], &row); err != nil {
			t.Fatal(err)
		}
		return row.Stderr != nil && row.Stderr.Warnings > 0
	})
	if row.Stderr.Warnings != 1 || len(row.Stderr.LastWarnings) != 1 || row.Stderr.Lines < 1 {
		t.Fatalf("stderr counts: %+v", *row.Stderr)
	}
	w := row.Stderr.LastWarnings[0]
	if !strings.Contains(w, "skipped ") || !strings.Contains(w, "wordy") || !strings.Contains(w, "description is 1068 characters") {
		t.Fatalf("the warning kept: %q", w)
	}
	if len(w) > 512+len("…") {
		t.Fatalf("a kept warning is %d bytes, over the 512 bound", len(w))
	}

	out, errOut, code := ctl(t, env, "status")
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(out, "local  1 warning on stderr, of ") || !strings.Contains(out, "  | skillfs serve: warning: skipped ") {
		t.Fatalf("status does not show the refused skill:\n%s", out)
	}
	for _, f := range []string{"index.json", "index.md", "catalog.md", "status.json"} {
		b, err := os.ReadFile(filepath.Join(m.Dir, ".skillfs", f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "wordy") {
			t.Errorf(".skillfs/%s names the skill the server refused", f)
		}
	}
}
