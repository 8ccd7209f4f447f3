package config

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// An AgentFolder is a folder agents scan for skills, commands, rules,
// agents or hooks and load as local, trusted files (DESIGN.md rule 9).
type AgentFolder struct {
	// Name is the folder as it sits in a home or a project: one or more
	// slash-separated components, ".claude" or ".config/agents".
	Name string
	// Reads says who reads what there, for the refusal message.
	Reads string
}

// AgentFolders are refused wherever they sit: under the home directory
// (~/.claude) and at any depth in a project (/src/app/.claude/commands),
// because agents look for them in the working directory and every parent
// up to the repository root. Names are compared without regard to case.
var AgentFolders = []AgentFolder{
	{".claude", "Claude Code loads skills, slash commands, subagents, settings and hooks"},
	{".agents", "Codex and other agents load skills (.agents/skills)"},
	{".config/agents", "agents load shared skills (~/.config/agents/skills)"},
	{".cursor", "Cursor loads rules, commands and skills"},
	{".copilot", "GitHub Copilot CLI loads skills and agents"},
	{".github", "GitHub Copilot loads skills, prompts, instructions and agents (.github/skills, .github/prompts, …)"},
	{".codex", "Codex loads config, prompts and skills"},
	{".gemini", "Gemini CLI loads commands, extensions and settings"},
	{".qwen", "Qwen Code loads commands and settings"},
	{".opencode", "OpenCode loads commands, agents and skills"},
	{".config/opencode", "OpenCode loads commands, agents and skills"},
	{".config/goose", "Goose loads its config and recipes"},
	{".windsurf", "Windsurf loads rules and workflows"},
	{".codeium", "Windsurf (Codeium) loads rules, workflows and memories"},
	{".continue", "Continue loads rules, prompts and agents"},
	{".roo", "Roo Code loads rules and commands"},
	{".clinerules", "Cline loads rules and workflows"},
	{".kiro", "Kiro loads steering files and specs"},
	{".amazonq", "Amazon Q Developer loads rules"},
}

// SystemAgentFolders are agent folders outside any home or project.
var SystemAgentFolders = []AgentFolder{
	{"/etc/codex", "Codex loads system-wide config and skills"},
	{"/etc/claude-code", "Claude Code loads managed settings, memory and skills"},
	{"/Library/Application Support/ClaudeCode", "Claude Code loads managed settings, memory and skills (macOS)"},
}

// SkillsFolderNames are folder names agents search for skills wherever they
// appear (a project's skills/, a plugin's skills/, ~/.config/x/skills).
var SkillsFolderNames = []string{"skills", ".skills"}

// A PlacementError says why a path may not hold the mount, an origin's
// directory or the store.
type PlacementError struct {
	Path      string // the path checked
	Resolved  string // Path with symlinks resolved, when that is what matched
	Discovery string // the agent folder as a user knows it: "~/.claude", "/etc/codex", "a .claude folder", "a folder named skills"
	Dir       string // the folder it is in, absolute
	Reads     string // who reads what there
	// Label, when set, is the server whose directory (mountpoint/Label)
	// Path is: the mountpoint itself passed.
	Label string
}

func (e *PlacementError) Error() string {
	subject := e.Path
	if e.Label != "" {
		subject = fmt.Sprintf("%s (the directory of server %q under the mountpoint)", e.Path, e.Label)
	}
	if e.Resolved != "" {
		subject = fmt.Sprintf("%s, which resolves to %s,", subject, e.Resolved)
	}
	where := e.Discovery
	if e.Dir != "" && e.Dir != e.Discovery {
		where = fmt.Sprintf("%s (%s)", e.Discovery, e.Dir)
	}
	fix := "choose a directory outside every agent's folders, such as ~/.cache/mcp-skills"
	if e.Label != "" {
		fix = fmt.Sprintf("rename server %q in the config (its label names its directory), or choose a mountpoint outside every agent's folders, such as ~/.cache/mcp-skills", e.Label)
	}
	return fmt.Sprintf("%s is inside %s, a filesystem-skill discovery path where %s: agents load skills from there as local, trusted files; "+
		"MCP-served skills must stay distinguishable (SEP-2640 cache isolation); %s",
		subject, where, e.Reads, fix)
}

// lookupHome is the user database's home directory of the current user;
// tests replace it.
var lookupHome = func() (string, error) {
	u, err := user.Current()
	if err != nil {
		return "", err
	}
	return u.HomeDir, nil
}

// Homes returns the home directories whose agent folders CheckPlacement
// guards: $HOME when it is absolute, and the current user's home from the
// user database (/etc/passwd or NSS) when it differs or HOME is unset. An
// agent started without HOME, or by a login shell that sets it from the
// user database, looks in that one.
func Homes() []string {
	var homes []string
	add := func(h string) {
		if h == "" || !filepath.IsAbs(h) {
			return
		}
		h = filepath.Clean(h)
		for _, o := range homes {
			if o == h {
				return
			}
		}
		homes = append(homes, h)
	}
	add(os.Getenv("HOME"))
	if h, err := lookupHome(); err == nil {
		add(h)
	}
	return homes
}

// CheckPlacement refuses a mount or store path that is, or is inside, a
// filesystem-skill discovery path: an AgentFolder under one of homes
// (reported as ~/.claude), a SystemAgentFolder, an AgentFolder at any depth
// (a project's .claude, .claude/commands, .github/skills), or a folder
// named in SkillsFolderNames. path must be absolute and clean; homes come
// from Homes (empty ones are ignored).
//
// Symlinks in the part of path that exists are resolved (~/.cache/x →
// /real/x), as are those of the home and system folders, and every form is
// checked: a path that reaches ~/.claude through a link, or a ~/.claude
// that is itself a link, is refused all the same. Names are compared
// without regard to case, since on macOS ~/.Claude is ~/.claude.
//
// A path that merely contains a discovery directory (mounting at ~) is not
// refused here: mounting over a non-empty directory is refused anyway, and
// CheckMountPlacement checks the directories a mount would add.
func CheckPlacement(path string, homes ...string) error {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return fmt.Errorf("check placement of %q: not an absolute, clean path", path)
	}
	var hs []string
	for _, h := range homes {
		if h == "" {
			continue
		}
		if !filepath.IsAbs(h) || filepath.Clean(h) != h {
			return fmt.Errorf("check placement of %s: home %q is not an absolute, clean path", path, h)
		}
		hs = append(hs, h)
	}
	resolved, err := resolveExisting(path)
	if err != nil {
		return fmt.Errorf("check placement of %s: %w", path, err)
	}
	forms := []string{path}
	if resolved != path {
		forms = append(forms, resolved)
	}

	type dir struct{ name, path, reads string }
	var dirs []dir
	for _, h := range hs {
		for _, f := range AgentFolders {
			dirs = append(dirs, dir{"~/" + f.Name, filepath.Join(h, f.Name), f.Reads})
		}
	}
	for _, f := range SystemAgentFolders {
		dirs = append(dirs, dir{f.Name, f.Name, f.Reads})
	}

	// Named folders (the home's, the system's) first: they say the most,
	// and only they catch a discovery folder that is itself a link.
	for _, p := range forms {
		res := resolvedForm(path, p)
		for _, d := range dirs {
			candidates := []string{d.path}
			if r, err := resolveExisting(d.path); err == nil && r != d.path {
				candidates = append(candidates, r)
			}
			for _, c := range candidates {
				if within(p, c) {
					return &PlacementError{Path: path, Resolved: res, Discovery: d.name, Dir: c, Reads: d.reads}
				}
			}
		}
	}
	for _, p := range forms {
		res := resolvedForm(path, p)
		segs := strings.Split(p, "/")
		for i, s := range segs {
			for _, f := range AgentFolders {
				fs := strings.Split(f.Name, "/")
				if i+len(fs) <= len(segs) && equalFoldAll(segs[i:i+len(fs)], fs) {
					return &PlacementError{Path: path, Resolved: res, Discovery: fmt.Sprintf("a %s folder", f.Name),
						Dir: strings.Join(segs[:i+len(fs)], "/"), Reads: f.Reads}
				}
			}
			for _, name := range SkillsFolderNames {
				if strings.EqualFold(s, name) {
					return &PlacementError{Path: path, Resolved: res, Discovery: fmt.Sprintf("a folder named %s", s),
						Dir: strings.Join(segs[:i+1], "/"), Reads: "agents that search for skills folders load skills"}
				}
			}
		}
	}
	return nil
}

// CheckMountPlacement checks a mountpoint and the directory each label
// would add below it (mountpoint/<label>): a mount at an empty ~/.config
// with a server labelled "agents", or at a project's empty .github with one
// labelled "skills", would put MCP-served skills where agents look. The
// error for a label is a *PlacementError with Label set.
func CheckMountPlacement(mountpoint string, labels []string, homes ...string) error {
	if err := CheckPlacement(mountpoint, homes...); err != nil {
		return err
	}
	for _, l := range labels {
		if err := ValidLabel(l); err != nil {
			return fmt.Errorf("check placement under %s: %w", mountpoint, err)
		}
		err := CheckPlacement(filepath.Join(mountpoint, l), homes...)
		var pe *PlacementError
		if errors.As(err, &pe) {
			pe.Label = l
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func resolvedForm(path, p string) string {
	if p == path {
		return ""
	}
	return p
}

func equalFoldAll(a, b []string) bool {
	for i := range b {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
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
