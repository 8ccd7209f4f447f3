package skillserver

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillfs/skillfs/internal/testkit"
)

// TestFrontmatterPublishedAsYAML12: what serve lists is the YAML 1.2 core
// schema's reading (0755 is 755, yes and 1:30 are strings, 0o755 is 493),
// which every conforming YAML 1.2 client reads alike; each plain scalar
// that a YAML 1.1 parser reads otherwise is a warning naming the file, the
// field and both readings, and the skill is still served. Before, serve
// published yaml.v3's 1.1-style octal (493 for 0755), which a YAML 1.2
// client's check refuses.
func TestFrontmatterPublishedAsYAML12(t *testing.T) {
	dir := t.TempDir()
	md := "---\nname: modes\ndescription: Frontmatter the YAML versions read differently\nmode: 0755\nexact: 0o755\n" +
		"enabled: yes\nquoted: \"yes\"\nduration: 1:30\ncount: 12\n---\nbody\n"
	if err := os.MkdirAll(filepath.Join(dir, "modes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "modes", "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	log := testkit.NewLog(t, "ambiguous")
	s, err := New(dir, Options{Logger: log.Logger(), PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	skills := s.Skills()
	if len(skills) != 1 {
		t.Fatalf("serve lists %d skills, want 1; problems %v", len(skills), s.Problems())
	}
	got := skills[0].Frontmatter
	want := map[string]any{"name": "modes", "description": "Frontmatter the YAML versions read differently",
		"mode": json.Number("755"), "exact": json.Number("493"), "enabled": "yes", "quoted": "yes",
		"duration": "1:30", "count": json.Number("12")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("published frontmatter\n%#v\nwant\n%#v", got, want)
	}
	warnings := s.Warnings()
	fields := []string{"duration: 1:30", "enabled: yes", "exact: 0o755", "mode: 0755"}
	if len(warnings) != len(fields) {
		t.Fatalf("warnings %v, want one for each of %v", warnings, fields)
	}
	for i, w := range warnings {
		if w.Path != filepath.Join(dir, "modes", "SKILL.md") || !strings.HasPrefix(w.Reason, "frontmatter "+fields[i]+" is ") ||
			!strings.Contains(w.Reason, "in YAML 1.1") || !strings.Contains(w.Reason, "quote it") {
			t.Errorf("warning %d = %v, want one about %s", i, w, fields[i])
		}
	}
	if logged := log.Matching(slog.LevelWarn, "ambiguous"); len(logged) != len(fields) {
		t.Errorf("logged %d ambiguity warnings, want %d: %v", len(logged), len(fields), logged)
	}
}
