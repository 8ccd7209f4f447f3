package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// HomeDiscoveryDirs are the directories under the user's home where agents
// look for filesystem skills (DESIGN.md rule 9). A mount or store inside one
// would make MCP-served skills look like local, trusted ones.
var HomeDiscoveryDirs = []string{
	".claude",
	".agents",
	".config/agents",
	".cursor",
	".copilot",
	".codex",
	".gemini",
	".config/opencode",
	".config/goose",
	".windsurf",
	".codeium",
}

// SystemDiscoveryDirs are the discovery directories outside any home.
var SystemDiscoveryDirs = []string{"/etc/codex"}

// SkillsFolderNames are folder names agents search for skills wherever they
// appear (./.github/skills, ~/.config/anything/skills, a project's skills/).
var SkillsFolderNames = []string{"skills", ".skills"}

// A PlacementError says why a path may not hold the mount or the store.
type PlacementError struct {
	Path      string // the path checked
	Resolved  string // Path with symlinks resolved, when that is what matched
	Discovery string // the discovery path as a user knows it: "~/.claude", "/etc/codex", "a folder named skills"
	Dir       string // the directory it is under, absolute
}

func (e *PlacementError) Error() string {
	subject := e.Path
	if e.Resolved != "" {
		subject = fmt.Sprintf("%s (which resolves to %s)", e.Path, e.Resolved)
	}
	where := e.Discovery
	if e.Dir != "" && e.Dir != e.Discovery {
		where = fmt.Sprintf("%s (%s)", e.Discovery, e.Dir)
	}
	return fmt.Sprintf("%s is inside %s, a filesystem-skill discovery path: agents load skills from there as local, trusted files; "+
		"MCP-served skills must stay distinguishable (SEP-2640 cache isolation); choose a directory outside every agent's skill folders, such as ~/.cache/mcp-skills",
		subject, where)
}

// CheckPlacement refuses a mount or store path that is, or is inside, a
// filesystem-skill discovery path. path must be absolute and clean; home is
// the user's home directory ("" checks only the system directories and
// skills folders).
//
// Symlinks in the part of path that exists are resolved (~/.cache/x →
// /real/x), as are those of the discovery directories, and every form is
// checked: a path that reaches ~/.claude through a link, or a ~/.claude
// that is itself a link, is refused all the same. Names are compared
// without regard to case, since on macOS ~/.Claude is ~/.claude.
//
// A path that merely contains a discovery directory (mounting at ~) is not
// refused here: mounting over a non-empty directory is refused anyway.
func CheckPlacement(path, home string) error {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return fmt.Errorf("check placement of %q: not an absolute, clean path", path)
	}
	if home != "" && (!filepath.IsAbs(home) || filepath.Clean(home) != home) {
		return fmt.Errorf("check placement of %s: home %q is not an absolute, clean path", path, home)
	}
	resolved, err := resolveExisting(path)
	if err != nil {
		return fmt.Errorf("check placement of %s: %w", path, err)
	}
	forms := []string{path}
	if resolved != path {
		forms = append(forms, resolved)
	}

	type dir struct{ name, path string }
	var dirs []dir
	for _, d := range HomeDiscoveryDirs {
		if home != "" {
			dirs = append(dirs, dir{"~/" + d, filepath.Join(home, d)})
		}
	}
	for _, d := range SystemDiscoveryDirs {
		dirs = append(dirs, dir{d, d})
	}

	for _, p := range forms {
		resolvedForm := ""
		if p != path {
			resolvedForm = p
		}
		for _, d := range dirs {
			candidates := []string{d.path}
			if r, err := resolveExisting(d.path); err == nil && r != d.path {
				candidates = append(candidates, r)
			}
			for _, c := range candidates {
				if within(p, c) {
					return &PlacementError{Path: path, Resolved: resolvedForm, Discovery: d.name, Dir: c}
				}
			}
		}
		segs := strings.Split(p, "/")
		for i, s := range segs {
			for _, name := range SkillsFolderNames {
				if strings.EqualFold(s, name) {
					return &PlacementError{Path: path, Resolved: resolvedForm,
						Discovery: fmt.Sprintf("a folder named %s", s), Dir: strings.Join(segs[:i+1], "/")}
				}
			}
		}
	}
	return nil
}

// within reports whether p is dir or inside it, comparing segments without
// regard to case. Both are absolute and clean.
func within(p, dir string) bool {
	ps := strings.Split(strings.TrimPrefix(p, "/"), "/")
	ds := strings.Split(strings.TrimPrefix(dir, "/"), "/")
	if dir == "/" {
		return true
	}
	if len(ps) < len(ds) {
		return false
	}
	for i := range ds {
		if !strings.EqualFold(ps[i], ds[i]) {
			return false
		}
	}
	return true
}

// maxLinks bounds symlink hops, as the kernel's ELOOP does.
const maxLinks = 40

// resolveExisting resolves every symlink along an absolute, clean path as
// far as the path exists, and keeps the rest as written. Unlike
// filepath.EvalSymlinks it follows a dangling link to where it points:
// creating the missing rest (mkdir -p) would land there.
func resolveExisting(path string) (string, error) {
	resolved := "/"
	rest := strings.Split(strings.TrimPrefix(path, "/"), "/")
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil {
			// Missing, or not reachable (a dead mount answers ENOTCONN):
			// the rest is what mkdir would create.
			return filepath.Join(append([]string{next}, rest...)...), nil
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if links++; links > maxLinks {
			return "", errors.New("too many levels of symbolic links")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("read link %s: %w", next, unwrapPath(err))
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return resolved, nil
}
