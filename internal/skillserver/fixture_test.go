package skillserver_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillfs/skillfs/internal/skill"
)

// Client-side shapes of the SEP-2640 methods, written from the SEP rather
// than shared with the server so that a wire mistake shows.
type listParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listResult struct {
	mcp.ResultBase
	Skills     []skill.Entry `json:"skills"`
	NextCursor string        `json:"nextCursor,omitempty"`
	ResultType string        `json:"resultType,omitempty"`
	TTLMs      *int          `json:"ttlMs,omitempty"`
}

type getParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type getResult struct {
	mcp.ResultBase
	Skill      skill.Entry `json:"skill"`
	ResultType string      `json:"resultType,omitempty"`
	TTLMs      *int        `json:"ttlMs,omitempty"`
	CacheScope *string     `json:"cacheScope,omitempty"`
}

type dirParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

type dirResult struct {
	mcp.ResultBase
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

// A fixture is a generated DIR and what an honest server must make of it.
type fixture struct {
	dir string
	// files: every file that must be served, by slash path below dir.
	files map[string][]byte
	// skills: every skill that must be listed, by folder below dir, with
	// its frontmatter in the JSON data model.
	skills map[string]map[string]any
	// refused: paths below dir the server must report as skipped.
	refused []string
	// hidden: files on disk that must not be served.
	hidden []string
}

func (fx *fixture) write(t testing.TB, rel string, data []byte, served bool) {
	t.Helper()
	p := filepath.Join(fx.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if served {
		fx.files[rel] = data
	} else {
		fx.hidden = append(fx.hidden, rel)
	}
}

// addSkill writes a skill's SKILL.md and records it as listed.
func (fx *fixture) addSkill(t testing.TB, folder, extraYAML string, extra map[string]any) {
	t.Helper()
	name := folder[strings.LastIndex(folder, "/")+1:]
	desc := fmt.Sprintf("Use %s when the task is about %s.", name, strings.ReplaceAll(folder, "/", " "))
	md := fmt.Sprintf("---\nname: %s\ndescription: %s\n%s---\n# %s\n\nSee references/guide.md.\n", name, desc, extraYAML, name)
	fx.write(t, folder+"/SKILL.md", []byte(md), true)
	fm := map[string]any{"name": name, "description": desc}
	for k, v := range extra {
		fm[k] = v
	}
	fx.skills[folder] = fm
}

// newFixture writes a tree of several hundred files: skills at depths one
// to three, a nested skill, binary and empty files, names that need
// percent-encoding, hidden files, a .git folder, and skills the server must
// refuse.
func newFixture(t testing.TB, nSkills int) *fixture {
	t.Helper()
	fx := &fixture{dir: t.TempDir(), files: map[string][]byte{}, skills: map[string]map[string]any{}}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range nSkills {
		var folder string
		switch i % 3 {
		case 0:
			folder = fmt.Sprintf("solo-%02d", i)
		case 1:
			folder = fmt.Sprintf("team-%d/skill-%02d", i%4, i)
		default:
			folder = fmt.Sprintf("acme/dept-%d/skill-%02d", i%2, i)
		}
		fx.addSkill(t, folder,
			"license: Apache-2.0\ncompatibility: Needs Python 3\nmetadata:\n  version: \"1.0\"\n  build: \"42\"\nallowed-tools: Read Grep\nx-build: 42\n",
			map[string]any{
				"license":       "Apache-2.0",
				"compatibility": "Needs Python 3",
				"metadata":      map[string]any{"version": "1.0", "build": "42"},
				"allowed-tools": "Read Grep",
				// A field the Agent Skills specification does not define
				// is published as written.
				"x-build": json.Number("42"),
			})
		fx.write(t, folder+"/references/guide.md", []byte(fmt.Sprintf("# Guide %d\n\nStep one.\n", i)), true)
		fx.write(t, folder+"/references/deep/deeper/note.txt", []byte(strings.Repeat("note ", i+1)), true)
		fx.write(t, folder+"/scripts/run.py", []byte(fmt.Sprintf("print(%d)\n", i)), true)
		bin := make([]byte, 200+rng.IntN(3000))
		for j := range bin {
			bin[j] = byte(rng.IntN(256))
		}
		bin[0] = 0xff // never valid UTF-8
		fx.write(t, folder+"/assets/blob.bin", bin, true)
		fx.write(t, folder+"/assets/empty.txt", nil, true)
		fx.write(t, folder+"/a b & c.md", []byte("spaces and an ampersand\n"), true)
		fx.write(t, folder+"/ünï cödé.md", []byte("non-ASCII name: ü\n"), true)
		fx.write(t, folder+"/100%.txt", []byte("a percent sign\n"), true)
		fx.write(t, folder+"/.gitignore", []byte("*.tmp\n"), true)
		fx.write(t, folder+"/.git/HEAD", []byte("ref: refs/heads/main\n"), false)
		fx.write(t, folder+"/.git/objects/ab/cdef", []byte("x"), false)
	}
	// A nested skill: listed on its own, and its files also belong to the
	// enclosing skill.
	fx.addSkill(t, "solo-00/sub/nested-one", "", nil)
	fx.write(t, "solo-00/sub/nested-one/notes.md", []byte("nested\n"), true)

	// Skills the server must refuse, with the rest served.
	fx.write(t, "bad-name/SKILL.md", []byte("---\nname: other\ndescription: x\n---\n"), false)
	fx.write(t, "bad-name/x.md", []byte("x"), false)
	fx.write(t, "no-desc/SKILL.md", []byte("---\nname: no-desc\n---\n"), false)
	fx.write(t, "no-frontmatter/SKILL.md", []byte("# just markdown\n"), false)
	fx.write(t, "team-0/Bad_Name/SKILL.md", []byte("---\nname: Bad_Name\ndescription: x\n---\n"), false)
	fx.write(t, "long-desc/SKILL.md", []byte("---\nname: long-desc\ndescription: "+strings.Repeat("é", 1025)+"\n---\n"), false)
	// Valid after a UTF-8 BOM, which a strict client refuses (issue 19 item 5).
	fx.write(t, "bom/SKILL.md", []byte("\xEF\xBB\xBF---\nname: bom\ndescription: x\n---\n"), false)
	fx.refused = append(fx.refused, "bad-name/SKILL.md", "no-desc/SKILL.md", "no-frontmatter/SKILL.md", "team-0/Bad_Name/SKILL.md", "long-desc/SKILL.md", "bom/SKILL.md")

	// A symlink out of DIR inside a served skill: left out, reported.
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(fx.dir, "solo-00", "leak.txt")); err != nil {
		t.Fatal(err)
	}
	fx.refused = append(fx.refused, "solo-00/leak.txt")
	// A symlink inside DIR: followed, served with the target's bytes.
	if err := os.Symlink("references/guide.md", filepath.Join(fx.dir, "solo-00", "guide-link.md")); err != nil {
		t.Fatal(err)
	}
	fx.files["solo-00/guide-link.md"] = fx.files["solo-00/references/guide.md"]
	// A file outside every skill is not served, and is no problem.
	fx.write(t, "README.md", []byte("not a skill\n"), false)
	return fx
}

// skillFiles returns the slash paths below DIR of every file the skill in
// folder must list: everything below it, nested skills included.
func (fx *fixture) skillFiles(folder string) []string {
	var out []string
	for rel := range fx.files {
		if strings.HasPrefix(rel, folder+"/") {
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out
}

func (fx *fixture) skillFolders() []string {
	var out []string
	for f := range fx.skills {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}
