package mcpserve

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/control/wire"
	"github.com/skillfs/skillfs/internal/skill"
)

// Attach mode: skillfs mcp serves a running mount's tree (OpenDirTree)
// and its skills' entries as the mount's control socket gives them, when a
// mount serves the same config from the same cache, so that there is one
// cache, one consent and one connection to each server.

// FindSameMount returns the control client of a live mount that serves
// the same servers (labels and keyed identities, which cover command, URL,
// env and headers) from the same cache, or nil when there is none.
func FindSameMount(ctx context.Context, root string, cfg *config.Config, log *slog.Logger) *control.Client {
	want := originKeys(cfg)
	clients, _ := control.Clients(control.Dirs(root))
	var found []*control.Client
	for _, c := range clients {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		rep, err := c.Status(sctx)
		cancel()
		if err != nil {
			log.Debug("a running mount did not answer; not attaching to it", "path", c.Mountpoint, "err", err)
			continue
		}
		if filepath.Clean(rep.Mount.CacheDir) != filepath.Clean(root) || rep.State == wire.MountStarting {
			continue
		}
		var got []string
		for _, s := range rep.Servers {
			got = append(got, s.Label+"\x00"+s.ID)
		}
		slices.Sort(got)
		if slices.Equal(got, want) {
			found = append(found, c)
		}
	}
	if len(found) == 0 {
		return nil
	}
	slices.SortFunc(found, func(a, b *control.Client) int { return strings.Compare(a.Mountpoint, b.Mountpoint) })
	if len(found) > 1 {
		log.Info("more than one mount serves this config; attaching to the first", "path", found[0].Mountpoint, "mounts", len(found))
	}
	return found[0]
}

func originKeys(cfg *config.Config) []string {
	var out []string
	for _, o := range cfg.Origins {
		out = append(out, o.Label+"\x00"+o.ID())
	}
	slices.Sort(out)
	return out
}

// MountSkills are a running mount's placed skills, as its control socket
// describes them (index rows, then each skill's inspection), for the
// SEP-2640 face in attach mode. An answer is kept for mountSkillsFor, so
// that a client paging through skills/list and reading files does not ask
// the mount about every skill for every request.
type MountSkills struct {
	C    *control.Client // the mount's control client
	mu   sync.Mutex
	at   time.Time
	last []Skill
}

const mountSkillsFor = 2 * time.Second

func (m *MountSkills) Skills(ctx context.Context) ([]Skill, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last != nil && time.Since(m.at) < mountSkillsFor {
		return m.last, nil
	}
	rows, err := m.C.Skills(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("ask the mount at %s for its skills: %w", m.C.Mountpoint, err)
	}
	out := []Skill{}
	for _, r := range rows {
		if r.State != wire.SkillAvailable && r.State != wire.SkillFailed {
			continue // pending, rejected, removed, and dynamic (unverified)
		}
		ins, err := m.C.Inspect(ctx, wire.SkillRef{Origin: r.Origin, URI: r.URI})
		if err != nil {
			return nil, fmt.Errorf("ask the mount at %s about %s: %w", m.C.Mountpoint, r.URI, err)
		}
		e, err := skill.ParseEntry(ins.Entry)
		if err != nil || len(ins.Files) != len(e.Resources) {
			return nil, fmt.Errorf("the mount at %s describes %s oddly (%v)", m.C.Mountpoint, r.URI, err)
		}
		sk := Skill{Label: r.Origin, Entry: e}
		for i, f := range ins.Files {
			sk.Files = append(sk.Files, f.Path)
			if e.Resources[i].URI == e.URI {
				sk.Path = f.Path
			}
		}
		if sk.Path == "" {
			sk.Path = path.Join(r.Path, "SKILL.md")
		}
		out = append(out, sk)
	}
	m.last, m.at = out, time.Now()
	return out, nil
}
