package skillserver_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestURISpellings: skills/get, resources/read and resources/directory/read
// agree on what a URI is. Every spelling the one parser (verify.ParseURI)
// maps to a served URI works with all three; every other fails with all.
func TestURISpellings(t *testing.T) {
	fx := newFixture(t, 1)
	want := string(fx.files["solo-00/SKILL.md"])
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			p := startStdio(t, fx.dir, era)
			ctx := t.Context()
			for _, c := range []struct {
				skill, dir string
				ok         bool
			}{
				{"skill://solo-00/SKILL.md", "skill://solo-00", true},
				{"SKILL://solo-00/SKILL.md", "SKILL://solo-00", true},
				{"Skill://solo-00/SKILL.md", "sKiLl://solo-00", true},
				{"skill://solo-00/%53KILL.md", "skill://solo-%30%30", true},
				{"skill://solo-00/%53%4b%49%4c%4c%2e%6d%64", "skill://%73olo-00", true},
				{"skill://SOLO-00/SKILL.md", "skill://SOLO-00", false},
				{"skill://solo-00/skill.md", "skill://solo-00/", false},
				{"skill://solo-00/SKILL.md/", "skill://solo-00//", false},
				{"skill://solo-00/SKILL.md?x", "skill://solo-00?x", false},
				{"skill://solo-00/%GG", "skill://solo-%GG", false},
			} {
				_, gerr := mcp.CallCustomMethod[*getParams, *getResult](ctx, p.cs, "skills/get", &getParams{URI: c.skill})
				rres, rerr := p.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: c.skill})
				_, derr := mcp.CallCustomMethod[*dirParams, *dirResult](ctx, p.cs, "resources/directory/read", &dirParams{URI: c.dir})
				if !c.ok {
					wantInvalidParams(t, "skills/get "+c.skill, gerr)
					wantInvalidParams(t, "resources/read "+c.skill, rerr)
					wantInvalidParams(t, "resources/directory/read "+c.dir, derr)
					continue
				}
				if gerr != nil || rerr != nil || derr != nil {
					t.Errorf("%s / %s: skills/get %v, resources/read %v, directory read %v; want all to succeed", c.skill, c.dir, gerr, rerr, derr)
					continue
				}
				if len(rres.Contents) != 1 || rres.Contents[0].Text != want || rres.Contents[0].URI != c.skill {
					t.Errorf("resources/read %s: contents %+v, want the SKILL.md under the URI asked", c.skill, rres.Contents)
				}
			}
		})
	}
}
