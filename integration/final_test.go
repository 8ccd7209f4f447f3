//go:build linux

package integration

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillfs/skillfs/integration/hostile"
)

// Conformance to the Final SEP-2640 text (issue 19 items 1-5).

// An entry with no resources at all is invalid and never loaded, even on a
// server allowed dynamic skills: only "resources": "dynamic" makes one
// (issue 19 item 4).
func TestEntryWithoutResourcesIsNeverLoaded(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{
		"dyn": hostileStdio(t, hostile.Options{Fixtures: []string{hostile.Dynamic, hostile.NoResources}}),
	}, map[string]any{"servers": map[string]any{"dyn": map[string]any{"allow_dynamic": true}}})
	m := startMount(t, cfg)
	m.warnings = true
	// The dynamic skill is there: allow_dynamic is in force.
	if _, err := os.ReadFile(m.Path("dyn", hostile.Dynamic, "SKILL.md")); err != nil {
		t.Fatalf("the dynamic skill under allow_dynamic: %v", err)
	}
	if _, err := os.Stat(m.Path("dyn", hostile.NoResources)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the entry without resources is in the tree (%v), want ENOENT", err)
	}
	if _, err := os.ReadFile(m.Path("dyn", hostile.NoResources, "SKILL.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read of its SKILL.md: %v, want ENOENT", err)
	}
	state, reason, _, ok := indexEntry(t, m, "dyn", "skill://"+hostile.NoResources+"/SKILL.md")
	if !ok || state != "rejected" || reason != "missing-resources" {
		t.Errorf("index.json: found %v, state %q, reason %q; want rejected, missing-resources", ok, state, reason)
	}
}

// skillfs declares the extension in its client capabilities
// (extensions["io.modelcontextprotocol/skills"] = {}), and a real server
// sees it: at initialize in the older protocol, in every request's _meta in
// the 2026-07-28 one (issue 19 item 3).
func TestClientDeclaresSkillsExtension(t *testing.T) {
	t.Parallel()
	capsLog := filepath.Join(t.TempDir(), "caps.log")
	cfg := writeConfig(t, map[string]any{
		"acme": hostileStdio(t, hostile.Options{Fixtures: []string{}, CapsLog: capsLog}),
	}, nil)
	m := startMount(t, cfg)
	if _, err := os.ReadFile(m.Path("acme", hostile.HonestA, "SKILL.md")); err != nil {
		t.Fatalf("read through the mount: %v", err)
	}
	b, err := os.ReadFile(capsLog)
	if err != nil {
		t.Fatal(err)
	}
	lists := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		method, ext, _ := strings.Cut(line, " ")
		if method != "skills/list" {
			continue
		}
		lists++
		var got map[string]any
		if err := json.Unmarshal([]byte(ext), &got); err != nil {
			t.Fatalf("caps log line %q: %v", line, err)
		}
		v, ok := got["io.modelcontextprotocol/skills"]
		if settings, isObj := v.(map[string]any); !ok || !isObj || len(settings) != 0 {
			t.Errorf("skills/list: the server sees client extensions %s, want io.modelcontextprotocol/skills: {}", ext)
		}
	}
	if lists == 0 {
		t.Fatalf("no skills/list in the caps log:\n%s", b)
	}
}
