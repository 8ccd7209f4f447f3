package vfs

import (
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/resolver"
	"github.com/skillfs/skillfs/verify"
)

// TestWithheldCatalogBuildsAnEmptyTree: a withheld catalog shows nothing —
// no skill, no rejection, no directory — but is kept whole for saving.
func TestWithheldCatalogBuildsAnEmptyTree(t *testing.T) {
	md := skill.Resource{URI: "skill://a/SKILL.md", Digest: verify.DigestOf([]byte("x")), Size: 1, HasSize: true}
	s, err := verify.CheckEntry(skill.Entry{URI: md.URI, Frontmatter: map[string]any{"name": "a", "description": "A"}, Resources: []skill.Resource{md}}, verify.EntryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cat := &resolver.Catalog{
		Skills:     []*verify.Skill{s},
		Rejected:   []resolver.Rejection{{URI: "skill://b/SKILL.md", Reason: verify.BadName}},
		CacheScope: resolver.ScopePrivate,
		Withheld:   resolver.WithheldReason(1),
	}
	tr := buildTree("o", cat, "live", nil, time.Now(), nil)
	if len(tr.nodes) != 1 || len(tr.skills) != 0 || len(tr.rejected) != 0 || tr.withheld == "" {
		t.Errorf("withheld tree: %d nodes, %d skills, %d rejected, withheld %q", len(tr.nodes), len(tr.skills), len(tr.rejected), tr.withheld)
	}
	if c := tr.catalog(); len(c.Skills) != 1 || c.Withheld == "" || c.CacheScope != resolver.ScopePrivate {
		t.Errorf("the catalog kept for saving: %d skills, withheld %q, scope %q", len(c.Skills), c.Withheld, c.CacheScope)
	}
}

// TestCredentialsFingerprint: env, headers and URL userinfo each change
// the fingerprint a private saved catalog is bound to; nothing else does.
func TestCredentialsFingerprint(t *testing.T) {
	base := config.Origin{Label: "o", Kind: config.HTTP, URL: "https://u:p@h.example/mcp", Headers: map[string]string{"Authorization": "Bearer a"}, Env: map[string]string{"T": "1"}}
	same := base
	same.Limits.Budget = 1
	same.Pin = []string{"skill://x/SKILL.md"}
	if credentials(same) != credentials(base) {
		t.Error("options that are not credentials changed the fingerprint")
	}
	for name, edit := range map[string]func(*config.Origin){
		"header":   func(o *config.Origin) { o.Headers = map[string]string{"Authorization": "Bearer b"} },
		"userinfo": func(o *config.Origin) { o.URL = "https://u:q@h.example/mcp" },
		"moved":    func(o *config.Origin) { o.Headers = map[string]string{"T": "1", "Authorization": "Bearer a"} },
	} {
		o := base
		edit(&o)
		if credentials(o) == credentials(base) {
			t.Errorf("%s: the fingerprint did not change", name)
		}
	}
	stdio := config.Origin{Label: "o", Kind: config.Stdio, Command: "srv", Env: map[string]string{"T": "1"}}
	other := stdio
	other.Env = map[string]string{"T": "2"}
	if credentials(stdio) == credentials(other) {
		t.Error("env: the fingerprint did not change")
	}
}
