package integrate

import (
	"cmp"
	"encoding/json"
	"maps"
	"path/filepath"
	"strings"

	"github.com/skillfs/skillfs/internal/render"
)

// MCPHosts are the hosts Files can register skillfs mcp with, as
// `skillfs integrate` names them.
var MCPHosts = []string{"claude-code", "codex", "gemini", "cursor"}

// MCPServerName is the name the hosts know skillfs mcp by: Claude Code's
// tools are then mcp__skillfs__read_skill_file and so on.
const MCPServerName = "skillfs"

// A Setup is what one host's files are made from. What needs the running
// mount (its path, its catalog) or this binary's path is asked for only
// by the forms that use it, and not at all when removing.
type Setup struct {
	Host string
	Home string // the user's home directory, absolute
	// ClaudeConfigDir and CodexHome are $CLAUDE_CONFIG_DIR and
	// $CODEX_HOME ("" when unset); the caller has checked that a set
	// CLAUDE_CONFIG_DIR is absolute.
	ClaudeConfigDir, CodexHome string
	// Project is Cursor's project directory, absolute.
	Project string
	// Tools are skillfs mcp's tools, which Claude Code's allow rules name.
	Tools []string
	// Remove lists the files with no parts: Apply then takes skillfs's
	// part out of each. MCP chooses the form that registers skillfs mcp
	// instead of pointing the host at a mount; Import, for Claude Code,
	// imports the catalog in CLAUDE.md instead of a hook.
	Remove, MCP, Import bool

	// Mount is the mount's absolute path.
	Mount func() (string, error)
	// Snapshot is the catalog as the text of a file that cannot import
	// another, and the mount's path.
	Snapshot func() (body, mnt string, err error)
	// Hook is the SessionStart hook's command for the mount at mnt.
	Hook func(mnt string) (string, error)
	// Command is how the host starts skillfs mcp.
	Command func() (bin string, args []string, err error)
}

// Files are the files s.Host reads and what skillfs puts in each (no
// parts when removing): the chosen form's, and the other form's files,
// which a write empties of skillfs's part. Removing lists both forms'.
func Files(s Setup) ([]File, error) {
	switch {
	case s.Remove:
		files, err := s.mountFiles()
		if err != nil {
			return nil, err
		}
		more, err := s.mcpFiles()
		return append(files, more...), err
	case s.MCP:
		return s.mcpFiles()
	}
	return s.mountFiles()
}

func (s Setup) claudeDir() string          { return cmp.Or(s.ClaudeConfigDir, filepath.Join(s.Home, ".claude")) }
func (s Setup) codexDir() string           { return cmp.Or(s.CodexHome, filepath.Join(s.Home, ".codex")) }
func (s Setup) geminiDir() string          { return filepath.Join(s.Home, ".gemini") }
func (s Setup) file(p string, k Kind) File { return File{Host: s.Host, Path: p, Kind: k} }

// claudeJSON is Claude Code's user-scope state and MCP config: .claude.json
// in the home directory, or in CLAUDE_CONFIG_DIR when that is set.
func (s Setup) claudeJSON() string {
	if s.ClaudeConfigDir != "" {
		return filepath.Join(s.ClaudeConfigDir, ".claude.json")
	}
	return filepath.Join(s.Home, ".claude.json")
}

// mountFiles are the files of the forms that point the host at a mount.
func (s Setup) mountFiles() ([]File, error) {
	switch s.Host {
	case "claude-code":
		return s.claudeMountFiles()
	case "gemini":
		return s.snapshotFiles(func(body, mnt string) []File {
			gm := s.file(filepath.Join(s.geminiDir(), "GEMINI.md"), Markdown)
			settings := s.file(filepath.Join(s.geminiDir(), "settings.json"), JSON)
			if body != "" {
				gm.Parts = []Part{{Block: body}}
				settings.Parts = []Part{{List: []string{"context", "includeDirectories"}, Value: mnt}}
			}
			return []File{gm, settings}
		})
	case "codex":
		return s.snapshotFiles(func(body, _ string) []File {
			f := s.file(filepath.Join(s.codexDir(), "AGENTS.md"), Markdown)
			if body == "" {
				return []File{f}
			}
			f.Parts = []Part{{Block: body}}
			// The other form's file: its MCP server goes.
			return []File{f, s.file(filepath.Join(s.codexDir(), "config.toml"), TOML)}
		})
	case "cursor":
		return s.snapshotFiles(func(body, _ string) []File {
			f := s.file(filepath.Join(s.Project, ".cursor", "rules", "skillfs.mdc"), Whole)
			if body != "" {
				f.Parts = []Part{{Block: "---\ndescription: Skills served over MCP, mounted by skillfs\nalwaysApply: true\n---\n\n" + Mark(s.Host) + "\n\n" + body}}
			}
			return []File{f}
		})
	}
	return nil, nil
}

// snapshotFiles are the files build makes from the catalog's snapshot
// (body "" when removing: nothing is asked of the mount).
func (s Setup) snapshotFiles(build func(body, mnt string) []File) ([]File, error) {
	if s.Remove {
		return build("", ""), nil
	}
	body, mnt, err := s.Snapshot()
	if err != nil {
		return nil, err
	}
	return build(body, mnt), nil
}

// claudeMountFiles are Claude Code's mount form: the hook (or with Import
// the CLAUDE.md line) and the Read rule for the mount, and .claude.json,
// whose MCP server a write takes out.
func (s Setup) claudeMountFiles() ([]File, error) {
	settings := s.file(filepath.Join(s.claudeDir(), "settings.json"), JSON)
	claudeMD := s.file(filepath.Join(s.claudeDir(), "CLAUDE.md"), Markdown)
	if s.Remove {
		return []File{settings, claudeMD}, nil
	}
	mnt, err := s.Mount()
	if err != nil {
		return nil, err
	}
	if s.Import {
		// A bare line, absolute: Claude Code imports it so.
		claudeMD.Parts = []Part{{Block: "Skills served over MCP, mounted by skillfs (each names its server; see the file):\n@" +
			filepath.Join(mnt, render.MetaDir, render.CatalogFile) + "\n"}}
	} else {
		cmd, err := s.Hook(mnt)
		if err != nil {
			return nil, err
		}
		settings.Parts = []Part{{Hook: cmd}}
	}
	// "//" starts an absolute path in Claude Code's rules; a Read rule
	// covers its Glob and Grep tools too.
	settings.Parts = append(settings.Parts, Part{List: []string{"permissions", "allow"}, Value: "Read(/" + mnt + "/**)"})
	// The other form's file: its MCP server goes.
	return []File{settings, claudeMD, s.file(s.claudeJSON(), JSON)}, nil
}

// mcpFiles are the files that register skillfs mcp with the host (their
// parts empty when removing), and the files of the mount's form that a
// write of this form empties.
func (s Setup) mcpFiles() ([]File, error) {
	var server map[string]any
	if !s.Remove {
		cmd, args, err := s.Command()
		if err != nil {
			return nil, err
		}
		server = map[string]any{"command": cmd, "args": args}
	}
	member := func(f File, extra map[string]any) File {
		if server == nil {
			return f
		}
		v := maps.Clone(server)
		maps.Copy(v, extra)
		b, _ := json.Marshal(v)
		f.Parts = append(f.Parts, Part{Member: []string{"mcpServers", MCPServerName}, JSON: b})
		return f
	}
	switch s.Host {
	case "claude-code":
		state := member(s.file(s.claudeJSON(), JSON), map[string]any{"type": "stdio", "env": map[string]any{}})
		if s.Remove {
			return []File{state}, nil
		}
		// In -p mode an MCP tool needs an allow rule; these name the two
		// read tools only.
		settings := s.file(filepath.Join(s.claudeDir(), "settings.json"), JSON)
		for _, tool := range s.Tools {
			settings.Parts = append(settings.Parts, Part{List: []string{"permissions", "allow"}, Value: "mcp__" + MCPServerName + "__" + tool})
		}
		return []File{state, settings, s.file(filepath.Join(s.claudeDir(), "CLAUDE.md"), Markdown)}, nil
	case "gemini":
		// The mount's form keeps GEMINI.md's block and includeDirectories
		// in settings.json: a write of this form takes them out.
		settings := member(s.file(filepath.Join(s.geminiDir(), "settings.json"), JSON), map[string]any{"trust": true})
		if s.Remove {
			return nil, nil // the mount's form lists settings.json, with no parts
		}
		return []File{s.file(filepath.Join(s.geminiDir(), "GEMINI.md"), Markdown), settings}, nil
	case "codex":
		conf := s.file(filepath.Join(s.codexDir(), "config.toml"), TOML)
		if server == nil {
			return []File{conf}, nil
		}
		conf.Parts = []Part{{Block: codexServer(server["command"].(string), server["args"].([]string))}}
		return []File{s.file(filepath.Join(s.codexDir(), "AGENTS.md"), Markdown), conf}, nil
	case "cursor":
		return []File{member(s.file(filepath.Join(s.Home, ".cursor", "mcp.json"), JSON), nil)}, nil
	}
	return nil, nil
}

// codexServer is skillfs mcp's table in Codex's config.toml.
func codexServer(cmd string, args []string) string {
	var b strings.Builder
	b.WriteString("[mcp_servers." + MCPServerName + "]\ncommand = " + tomlString(cmd) + "\nargs = [")
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tomlString(a))
	}
	b.WriteString("]\n")
	return b.String()
}

// tomlString is s as a TOML basic string: JSON's escapes are TOML's.
func tomlString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
