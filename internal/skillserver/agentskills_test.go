package skillserver

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/verify"
)

// Every rule of the Agent Skills specification on frontmatter, at its
// edges. Lengths are counted in Unicode code points: "é" is two bytes and
// "😀" four (and two UTF-16 units), so a server counting bytes or UTF-16
// would refuse the accepted cases below.
func TestAgentSkillsRules(t *testing.T) {
	long := func(s string, n int) string { return strings.Repeat(s, n) }
	for _, tc := range []struct {
		name   string
		folder string
		yaml   string // frontmatter lines after name (and description, unless given)
		reason string // "" accepted, else a substring of the refusal
	}{
		{"description of 1024 ASCII characters", "x", "description: " + long("d", 1024) + "\n", ""},
		{"description of 1025 ASCII characters", "x", "description: " + long("d", 1025) + "\n", "description is 1025 characters; the Agent Skills specification allows at most 1024"},
		{"description of 1024 two-byte characters", "x", "description: " + long("é", 1024) + "\n", ""},
		{"description of 1025 two-byte characters", "x", "description: " + long("é", 1025) + "\n", "description is 1025 characters"},
		{"description of 1024 astral characters", "x", "description: " + long("😀", 1024) + "\n", ""},
		{"description of 1025 astral characters", "x", "description: " + long("😀", 1025) + "\n", "description is 1025 characters"},
		{"description of one character", "x", "description: d\n", ""},
		{"no description", "x", "license: MIT\n", "missing-description"},
		{"empty description", "x", "description: \"\"\n", "missing-description"},
		{"description not a string", "x", "description: 12\n", "missing-description"},

		{"name of 64 characters", long("n", 64), "", ""},
		{"name of 65 characters", long("n", 65), "", "longer than 64"},
		{"name with digits and hyphens", "a1-b2-3c", "", ""},
		{"name with an uppercase letter", "Xy", "", "bad-name"},
		{"name with an underscore", "x_y", "", "bad-name"},
		{"name starting with a hyphen", "-x", "", "starts with a hyphen"},
		{"name ending with a hyphen", "x-", "", "ends with a hyphen"},
		{"name with a double hyphen", "x--y", "", "double hyphen"},
		{"name with a non-ASCII letter", "café", "", "bad-name"},

		{"compatibility of 500 characters", "x", "compatibility: " + long("é", 500) + "\n", ""},
		{"compatibility of 501 characters", "x", "compatibility: " + long("é", 501) + "\n", "compatibility is 501 characters; the Agent Skills specification allows at most 500"},
		{"empty compatibility", "x", "compatibility: \"\"\n", "compatibility is empty"},
		{"null compatibility", "x", "compatibility:\n", "compatibility is null"},
		{"compatibility a list", "x", "compatibility: [linux]\n", "compatibility is a list"},

		{"license a string", "x", "license: Proprietary. LICENSE.txt has the terms\n", ""},
		{"license a number", "x", "license: 2\n", "license is a number"},
		{"allowed-tools a string", "x", "allowed-tools: Bash(git:*) Read\n", ""},
		{"allowed-tools a list of strings", "x", "allowed-tools: [Read, Grep]\n", ""},
		{"allowed-tools a list with a number", "x", "allowed-tools: [Read, 1]\n", "allowed-tools is a list; the Agent Skills specification requires a string of space-separated tool names"},
		{"allowed-tools a mapping", "x", "allowed-tools:\n  Read: true\n", "allowed-tools is a mapping"},

		{"metadata of strings", "x", "metadata:\n  author: acme\n  version: \"1.0\"\n", ""},
		{"empty metadata", "x", "metadata: {}\n", ""},
		{"metadata with a number", "x", "metadata:\n  author: acme\n  version: 1.0\n", "metadata.version is a number; the Agent Skills specification requires string values (quote it in the YAML)"},
		{"metadata with a mapping", "x", "metadata:\n  owner:\n    team: a\n", "metadata.owner is a mapping"},
		{"metadata a list", "x", "metadata: [a]\n", "metadata is a list"},
		{"metadata a string", "x", "metadata: a\n", "metadata is a string"},

		{"a field the specification does not define", "x", "hooks:\n  pre: [x]\nversion: 3\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm := "name: " + tc.folder + "\n" + tc.yaml
			if !strings.Contains(tc.yaml, "description:") && tc.reason != "missing-description" {
				fm = "name: " + tc.folder + "\ndescription: d\n" + tc.yaml
			}
			dir := tree(t, map[string]string{
				"good/SKILL.md":            skillMD("good", ""),
				tc.folder + "/SKILL.md":    "---\n" + fm + "---\nbody\n",
				tc.folder + "/refs/a.md":   "a",
				tc.folder + "/assets/b.md": "b",
			})
			s := newServer(t, dir)
			uris := skillURIs(s)
			if !slices.Contains(uris, "skill://good/SKILL.md") {
				t.Errorf("the good skill is not served next to %s: %v", tc.folder, uris)
			}
			served := len(uris) == 2
			got := problemFor(s, dir, tc.folder+"/SKILL.md")
			if tc.reason == "" {
				if !served || got != "" {
					t.Fatalf("refused (%q); want it served", got)
				}
				// What is served passes the host's checks too.
				for _, e := range s.Skills() {
					if _, err := verify.CheckEntry(e, verify.EntryOptions{Strict: true}); err != nil {
						t.Errorf("published entry fails the host's check: %v", err)
					}
				}
				return
			}
			if served {
				t.Errorf("served; want it refused for %q", tc.reason)
			}
			if !strings.Contains(got, tc.reason) {
				t.Errorf("problem = %q, want it to mention %q", got, tc.reason)
			}
			// A refused skill's files are not served either.
			if f := s.lib.cat.Load().files["skill://"+tc.folder+"/refs/a.md"]; f != nil {
				t.Errorf("a file of the refused skill is served")
			}
		})
	}
}

// A skill refused for its frontmatter says why to skills/get, is served
// once the author fixes it (the rescan Watch runs), and nothing of it was
// read beyond its SKILL.md while it was refused.
func TestAgentSkillsFixBringsSkillBack(t *testing.T) {
	desc := strings.Repeat("word ", 213) + "end" // 1068 characters
	dir := tree(t, map[string]string{
		"xlsx/SKILL.md":      "---\nname: xlsx\ndescription: " + desc + "\n---\nbody\n",
		"xlsx/ref/guide.md":  "guide",
		"xlsx/ref/other.txt": "other",
	})
	s := newServer(t, dir)
	if got := problemFor(s, dir, "xlsx/SKILL.md"); !strings.Contains(got, "description is 1068 characters") {
		t.Fatalf("problem = %q", got)
	}
	if s.lib.sc.hashed != 1 {
		t.Errorf("the refused skill cost %d file reads, want only its SKILL.md", s.lib.sc.hashed)
	}
	_, err := s.getSkill(t.Context(), nil, &getSkillParams{GetParams: skill.GetParams{URI: "skill://xlsx/SKILL.md"}})
	if err == nil || !strings.Contains(err.Error(), "description is 1068 characters") {
		t.Errorf("skills/get of the refused skill: %v", err)
	}

	md := filepath.Join(dir, "xlsx", "SKILL.md")
	if err := os.WriteFile(md, []byte("---\nname: xlsx\ndescription: "+desc[:1024]+"\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Rescan(); err != nil {
		t.Fatal(err)
	}
	if got := skillURIs(s); !slices.Equal(got, []string{"skill://xlsx/SKILL.md"}) {
		t.Fatalf("after the fix the server publishes %v; problems %v", got, s.Problems())
	}
	if len(s.Problems()) != 0 {
		t.Errorf("problems after the fix: %v", s.Problems())
	}
	if e := s.Skills()[0]; len(e.Resources) != 3 {
		t.Errorf("after the fix the skill lists %d files, want 3", len(e.Resources))
	}
}
