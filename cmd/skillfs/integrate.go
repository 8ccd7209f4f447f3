package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillfs/skillfs/internal/render"
)

// `skillfs integrate HOST` puts the catalog where an agent host reads it
// (see the README, "Use the skills in your agent"). Without --write it
// prints the snippet and where it goes; --write adds it, idempotently;
// --remove takes it out again.
//
// Reversible. Before its first change to a file, --write keeps the file's
// exact bytes (or that it did not exist) in
// $XDG_STATE_HOME/skillfs/integrate/, with the digest of what it wrote.
// --remove puts those bytes back when the file is still as skillfs left
// it, and deletes a file skillfs created; when the file changed since (the
// user or the host edited it), --remove takes out only skillfs's part —
// the marked block, or the hook entry whose command is skillfs's — and
// keeps the rest.
//
// Careful with what it writes. It writes only the host's own file, never
// inside a folder named skills or commands (those a host loads as skills
// or commands). It follows a symlinked target that resolves inside the
// home directory (a dotfiles checkout) and refuses one that resolves
// outside it unless --force. A file it cannot parse (settings.json that is
// not a JSON object) is left alone, with an error.

// integrateHosts are the hosts `skillfs integrate` knows, as named on its
// command line.
var integrateHosts = []string{"claude-code", "codex", "gemini", "cursor", "generic"}

// The marker lines of a block skillfs writes in a Markdown file.
const (
	blockBegin = "<!-- skillfs:begin: added by `skillfs integrate %s`; remove with `skillfs integrate %s --remove` -->"
	blockEnd   = "<!-- skillfs:end -->"
)

// hookCommand is the command of the SessionStart hook skillfs adds to
// Claude Code's settings; an entry is skillfs's when its command starts so.
const hookCommand = "skillfs catalog --hook claude-code"

// snapshotCatalogBytes bounds the catalog written into a file that cannot
// import another (AGENTS.md, a Cursor rule): Codex cuts its combined
// instructions at 32 KiB.
const snapshotCatalogBytes = 16 << 10

type integrateOptions struct {
	mount, cacheDir, project string
	write, remove, force     bool
	claudeImport             bool
}

func newIntegrateCommand() *cobra.Command {
	var o integrateOptions
	cmd := &cobra.Command{
		Use:   "integrate HOST [--write | --remove]",
		Short: "Show, add or remove the setup that puts the skills catalog in an agent host's context (claude-code, codex, gemini, cursor, generic)",
		Long: `Integrate sets up an agent host to see the mount's skills: without --write
it prints the snippet and the file it goes in; --write adds it there (again:
nothing changes, or the snippet is brought up to date); --remove takes it
out, restoring the file byte for byte when nothing else changed it (and
removing a file skillfs created).

  claude-code  a SessionStart hook in ~/.claude/settings.json whose command,
               skillfs catalog --hook claude-code, prints the catalog as the
               hook's additionalContext; with --import instead, a line
               @MOUNT/.skillfs/catalog.md in ~/.claude/CLAUDE.md
  codex        the catalog in a marked block of ~/.codex/AGENTS.md
               ($CODEX_HOME/AGENTS.md); run --write again when skills change
  gemini       a line @MOUNT/.skillfs/catalog.md in ~/.gemini/GEMINI.md
  cursor       the rule .cursor/rules/skillfs.mdc (alwaysApply) in the
               project (--project DIR, default the current directory) with
               the catalog; run --write again when skills change
  generic      prints the catalog to paste into a system prompt

It never writes inside a skills or commands folder. A target that is a
symlink resolving outside your home directory is refused unless --force.
The mount is the one at --mount DIR, or the only one running.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || !slices.Contains(integrateHosts, args[0]) {
				return usageError(fmt.Errorf("integrate: name one host of %s (see `skillfs integrate --help`)", strings.Join(integrateHosts, ", ")))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.write && o.remove {
				return usageError(errors.New("integrate: --write or --remove, not both"))
			}
			if o.claudeImport && args[0] != "claude-code" {
				return usageError(errors.New("integrate: --import is for claude-code"))
			}
			return runIntegrate(cmd.Context(), cmd.OutOrStdout(), args[0], o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.write, "write", false, "add the snippet to the host's file")
	f.BoolVar(&o.remove, "remove", false, "take the snippet out of the host's file, restoring it")
	f.BoolVar(&o.force, "force", false, "write through a symlink that resolves outside the home directory")
	f.BoolVar(&o.claudeImport, "import", false, "claude-code: import .skillfs/catalog.md in ~/.claude/CLAUDE.md instead of a hook")
	f.StringVar(&o.mount, "mount", "", "the mount (`DIR`); needed when more than one is running")
	f.StringVar(&o.cacheDir, "cache-dir", "", "the mount's --cache-dir, where its socket is when $XDG_RUNTIME_DIR is not set")
	f.StringVar(&o.project, "project", "", "cursor: the project `DIR` (default the current directory)")
	return cmd
}

// An integration is what one host gets: the file and how skillfs's part of
// it is written.
type integration struct {
	host   string
	target string // absolute path of the host's file
	// json: target is Claude Code's settings.json, skillfs's part the hook
	// entry; whole: skillfs owns the whole file (a Cursor rule); else a
	// marked block of a Markdown file.
	json, whole bool
	snippet     string // the hook command, or the block's (or file's) body
}

func runIntegrate(ctx context.Context, out io.Writer, host string, o integrateOptions) error {
	home, err := os.UserHomeDir()
	if err != nil {
		return fmt.Errorf("integrate: find the home directory: %w", err)
	}
	in := integration{host: host}
	switch {
	case host == "claude-code" && !o.claudeImport:
		in.target, in.json = filepath.Join(home, ".claude", "settings.json"), true
		in.snippet = hookCommand
		if o.mount != "" {
			abs, err := filepath.Abs(o.mount)
			if err != nil {
				return err
			}
			in.snippet += " --mount " + shellQuote(abs)
		}
	case host == "claude-code", host == "gemini":
		dir := ".claude"
		name := "CLAUDE.md"
		if host == "gemini" {
			dir, name = ".gemini", "GEMINI.md"
		}
		in.target = filepath.Join(home, dir, name)
		if !o.remove {
			mnt, err := o.mountPath(ctx)
			if err != nil {
				return err
			}
			// A bare line, absolute: both hosts import it so.
			in.snippet = "Skills served over MCP, mounted by skillfs (each names its server; see the file):\n@" +
				filepath.Join(mnt, render.MetaDir, render.CatalogFile) + "\n"
		}
	case host == "codex":
		dir := os.Getenv("CODEX_HOME")
		if dir == "" {
			dir = filepath.Join(home, ".codex")
		}
		in.target = filepath.Join(dir, "AGENTS.md")
	case host == "cursor":
		project := o.project
		if project == "" {
			if project, err = os.Getwd(); err != nil {
				return err
			}
		}
		abs, err := filepath.Abs(project)
		if err != nil {
			return err
		}
		in.target, in.whole = filepath.Join(abs, ".cursor", "rules", "skillfs.mdc"), true
	case host == "generic":
		if o.write || o.remove {
			return usageError(errors.New("integrate generic: there is no file to write; paste what it prints into your system prompt"))
		}
	}
	if !o.remove && (host == "codex" || host == "cursor" || host == "generic") {
		cat, mnt, err := o.catalog(ctx)
		if err != nil {
			return err
		}
		in.snippet = string(cat)
		if host != "generic" {
			in.snippet += "\nThe live catalog is " + filepath.Join(mnt, render.MetaDir, render.CatalogFile) +
				"; this copy was written by `skillfs integrate " + host + " --write`, run again when skills change.\n"
		}
		if host == "cursor" {
			in.snippet = "---\ndescription: Skills served over MCP, mounted by skillfs\nalwaysApply: true\n---\n\n" + in.mark() + "\n\n" + in.snippet
		}
	}
	if host == "generic" {
		fmt.Fprintln(out, "# Paste this into your agent's system prompt (it lists the skills that can be loaded now):")
		fmt.Fprintln(out)
		_, err := io.WriteString(out, in.snippet)
		return err
	}
	if err := checkTarget(in.target, home, o.force); err != nil {
		return err
	}
	switch {
	case o.write:
		changed, err := in.write()
		if err != nil {
			return err
		}
		if changed {
			fmt.Fprintf(out, "skillfs: added to %s (undo with `skillfs integrate %s --remove`)\n", in.target, host)
		} else {
			fmt.Fprintf(out, "skillfs: %s is already set up; nothing changed\n", in.target)
		}
		return nil
	case o.remove:
		msg, err := in.undo()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "skillfs: %s\n", msg)
		return nil
	}
	return in.show(out)
}

// mountPath is the mount's absolute path: --mount, or the running one's.
func (o integrateOptions) mountPath(ctx context.Context) (string, error) {
	if o.mount != "" {
		return filepath.Abs(o.mount)
	}
	c, err := (&controlOptions{cacheDir: o.cacheDir}).client()
	if err != nil {
		return "", fmt.Errorf("%w; or name the mount with --mount DIR", err)
	}
	return c.Mountpoint, nil
}

// catalog is the running mount's catalog, as a snapshot for a file, and
// the mount's path.
func (o integrateOptions) catalog(ctx context.Context) ([]byte, string, error) {
	c, err := (&controlOptions{cacheDir: o.cacheDir, mount: o.mount}).client()
	if err != nil {
		return nil, "", err
	}
	b, err := catalogOf(ctx, c, render.FormatXML, snapshotCatalogBytes)
	return b, c.Mountpoint, err
}

// show prints the snippet and where it goes.
func (in integration) show(out io.Writer) error {
	switch {
	case in.json:
		entry, _ := json.MarshalIndent(hookEntry(in.snippet), "      ", "  ")
		fmt.Fprintf(out, "# Add this SessionStart hook to %s, under \"hooks\" (or run `skillfs integrate claude-code --write`):\n\n", in.target)
		fmt.Fprintf(out, "{\n  \"hooks\": {\n    \"SessionStart\": [\n      %s\n    ]\n  }\n}\n", entry)
	case in.whole:
		fmt.Fprintf(out, "# Write this as %s (or run `skillfs integrate %s --write`):\n\n%s", in.target, in.host, in.snippet)
	default:
		fmt.Fprintf(out, "# Add this to %s (or run `skillfs integrate %s --write`):\n\n%s", in.target, in.host, in.block())
	}
	return nil
}

// mark is the line that says a file or block is skillfs's.
func (in integration) mark() string { return fmt.Sprintf(blockBegin, in.host, in.host) }

// block is the marked block of a Markdown file, newline-terminated.
func (in integration) block() string {
	body := in.snippet
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return in.mark() + "\n" + body + blockEnd + "\n"
}

// checkTarget refuses a target inside a skills or commands folder, and one
// that is a symlink resolving outside home unless force.
func checkTarget(target, home string, force bool) error {
	for _, p := range strings.Split(filepath.ToSlash(filepath.Dir(target)), "/") {
		if p == "skills" || p == "commands" {
			return fmt.Errorf("integrate: %s is inside a %s folder, which the host loads as %s: skillfs does not write there", target, p, p)
		}
	}
	fi, err := os.Lstat(target)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	real, err := filepath.EvalSymlinks(target)
	if err != nil {
		return fmt.Errorf("integrate: %s is a symlink that does not resolve: %w", target, err)
	}
	realHome, err := filepath.EvalSymlinks(home)
	if err != nil {
		realHome = home
	}
	if rel, err := filepath.Rel(realHome, real); (err != nil || rel == ".." || strings.HasPrefix(rel, "../")) && !force {
		return fmt.Errorf("integrate: %s is a symlink to %s, outside your home directory: refused (--force writes there)", target, real)
	}
	return nil
}

// record is what --remove needs to undo --write: the file's bytes before
// skillfs first changed it, and the digest of what it last wrote.
type record struct {
	Target  string `json:"target"`
	Existed bool   `json:"existed"`
	Before  []byte `json:"before,omitempty"`
	Mode    uint32 `json:"mode,omitempty"`
	After   string `json:"after"` // sha256, hex
}

// recordPath is where the record of target is kept.
func recordPath(target string) (string, error) {
	dir, err := stateDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(target))
	return filepath.Join(dir, "integrate", hex.EncodeToString(sum[:8])+".json"), nil
}

func loadRecord(target string) (*record, string, error) {
	p, err := recordPath(target)
	if err != nil {
		return nil, "", err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, p, nil
	}
	if err != nil {
		return nil, p, err
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil || r.Target != target {
		return nil, p, fmt.Errorf("integrate: the record %s is damaged; remove it to go on: %v", p, err)
	}
	return &r, p, nil
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// read returns the target's bytes (through a symlink) and mode, nil when it
// does not exist.
func (in integration) read() ([]byte, fs.FileMode, bool, error) {
	b, err := os.ReadFile(in.target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o644, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	fi, err := os.Stat(in.target)
	if err != nil {
		return nil, 0, false, err
	}
	return b, fi.Mode().Perm(), true, nil
}

// write adds skillfs's part to the target, or brings it up to date, and
// reports whether the file changed.
func (in integration) write() (bool, error) {
	old, mode, existed, err := in.read()
	if err != nil {
		return false, err
	}
	next, err := in.with(old, existed)
	if err != nil {
		return false, err
	}
	if existed && bytes.Equal(next, old) {
		return false, nil
	}
	rec, rp, err := loadRecord(in.target)
	if err != nil {
		return false, err
	}
	if rec == nil {
		rec = &record{Target: in.target, Existed: existed, Before: old, Mode: uint32(mode)}
		if rec.Before == nil {
			rec.Before = []byte{}
		}
	}
	rec.After = digest(next)
	// The record first: a crash between the two leaves a record of a
	// write that did not happen, which --remove handles (the file is not
	// as recorded: only skillfs's part is taken out, and there is none).
	if err := saveFile(rp, mustJSON(rec), 0o600); err != nil {
		return false, fmt.Errorf("integrate: keep the record to undo with: %w", err)
	}
	if err := saveFile(in.target, next, mode); err != nil {
		return false, err
	}
	return true, nil
}

// undo takes skillfs's part out of the target and says what it did.
func (in integration) undo() (string, error) {
	cur, mode, existed, err := in.read()
	if err != nil {
		return "", err
	}
	rec, rp, err := loadRecord(in.target)
	if err != nil {
		return "", err
	}
	switch {
	case rec != nil && existed && digest(cur) == rec.After:
		if !rec.Existed {
			if err := os.Remove(in.target); err != nil {
				return "", err
			}
			os.Remove(rp)
			return fmt.Sprintf("removed %s, which skillfs had created", in.target), nil
		}
		if err := saveFile(in.target, rec.Before, fs.FileMode(rec.Mode)); err != nil {
			return "", err
		}
		os.Remove(rp)
		return fmt.Sprintf("restored %s as it was before `skillfs integrate %s --write`", in.target, in.host), nil
	case !existed:
		if rec != nil {
			os.Remove(rp)
		}
		return fmt.Sprintf("%s does not exist; nothing to remove", in.target), nil
	}
	if in.whole {
		return "", fmt.Errorf("integrate: %s changed since skillfs wrote it: left alone (remove it yourself if you no longer want it)", in.target)
	}
	next, found, err := in.without(cur)
	if err != nil {
		return "", err
	}
	if rec != nil {
		os.Remove(rp)
	}
	if !found {
		return fmt.Sprintf("%s has nothing of skillfs's; nothing changed", in.target), nil
	}
	if len(bytes.TrimSpace(next)) == 0 && rec != nil && !rec.Existed {
		if err := os.Remove(in.target); err != nil {
			return "", err
		}
		return fmt.Sprintf("removed %s", in.target), nil
	}
	if err := saveFile(in.target, next, mode); err != nil {
		return "", err
	}
	return fmt.Sprintf("took skillfs's part out of %s (it had changed since skillfs wrote it: the rest is kept as it is)", in.target), nil
}

// with is the target's content with skillfs's part in place.
func (in integration) with(old []byte, existed bool) ([]byte, error) {
	switch {
	case in.whole:
		if existed && !bytes.Contains(old, []byte(in.mark())) {
			return nil, fmt.Errorf("integrate: %s exists and is not skillfs's: left alone", in.target)
		}
		return []byte(in.snippet), nil
	case in.json:
		return withHook(old, existed, in.snippet, in.target)
	}
	block := in.block()
	if i, j, ok := findBlock(old); ok {
		return slices.Concat(old[:i], []byte(block), old[j:]), nil
	}
	out := slices.Clone(old)
	if len(out) > 0 {
		if !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, '\n')
		}
		out = append(out, '\n')
	}
	return append(out, block...), nil
}

// without is the target's content without skillfs's part, and whether
// there was one.
func (in integration) without(cur []byte) ([]byte, bool, error) {
	switch {
	case in.whole:
		return nil, true, nil
	case in.json:
		return withoutHook(cur, in.target)
	}
	i, j, ok := findBlock(cur)
	if !ok {
		return cur, false, nil
	}
	// The blank line --write put before the block goes with it.
	if i >= 2 && cur[i-1] == '\n' && cur[i-2] == '\n' {
		i--
	}
	return slices.Concat(cur[:i], cur[j:]), true, nil
}

// findBlock finds skillfs's marked block: from its begin line to the end
// of its end line.
func findBlock(b []byte) (int, int, bool) {
	prefix := []byte(strings.SplitN(blockBegin, "%s", 2)[0])
	i := bytes.Index(b, prefix)
	if i < 0 || (i > 0 && b[i-1] != '\n') {
		return 0, 0, false
	}
	k := bytes.Index(b[i:], []byte("\n"+blockEnd))
	if k < 0 {
		return 0, 0, false
	}
	j := i + k + 1 + len(blockEnd)
	if j < len(b) && b[j] == '\n' {
		j++
	}
	return i, j, true
}

// Claude Code's settings.json.

type hookSpec struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

type hookGroup struct {
	Matcher string     `json:"matcher"`
	Hooks   []hookSpec `json:"hooks"`
}

func hookEntry(command string) hookGroup {
	return hookGroup{Matcher: "", Hooks: []hookSpec{{Type: "command", Command: command, Timeout: 10}}}
}

// withHook adds skillfs's SessionStart hook to settings, or updates its
// command, keeping every other key and hook in their order.
func withHook(settings []byte, existed bool, command, target string) ([]byte, error) {
	top, err := parseObject(settings, existed, target)
	if err != nil {
		return nil, err
	}
	hooks, err := parseObject(top.get("hooks"), top.has("hooks"), target+": \"hooks\"")
	if err != nil {
		return nil, err
	}
	var groups []json.RawMessage
	if raw := hooks.get("SessionStart"); raw != nil {
		if err := json.Unmarshal(raw, &groups); err != nil {
			return nil, fmt.Errorf("integrate: %s: \"hooks\".\"SessionStart\" is not a list: left alone", target)
		}
	}
	entry, _ := json.Marshal(hookEntry(command))
	// The first group of skillfs's takes the entry; any other goes.
	found := false
	next := make([]json.RawMessage, 0, len(groups)+1)
	for _, g := range groups {
		switch {
		case !isOurs(g):
			next = append(next, g)
		case !found:
			next, found = append(next, entry), true
		}
	}
	if !found {
		next = append(next, entry)
	}
	list, _ := json.Marshal(next)
	hooks.set("SessionStart", list)
	top.set("hooks", hooks.marshal(""))
	return append(top.marshal(""), '\n'), nil
}

// withoutHook takes skillfs's SessionStart hook out of settings.
func withoutHook(settings []byte, target string) ([]byte, bool, error) {
	top, err := parseObject(settings, true, target)
	if err != nil {
		return nil, false, err
	}
	hooks, err := parseObject(top.get("hooks"), top.has("hooks"), target+": \"hooks\"")
	if err != nil || !hooks.has("SessionStart") {
		return settings, false, err
	}
	var groups []json.RawMessage
	if err := json.Unmarshal(hooks.get("SessionStart"), &groups); err != nil {
		return settings, false, nil
	}
	kept := slices.DeleteFunc(slices.Clone(groups), isOurs)
	if len(kept) == len(groups) {
		return settings, false, nil
	}
	if len(kept) == 0 {
		hooks.del("SessionStart")
	} else {
		list, _ := json.Marshal(kept)
		hooks.set("SessionStart", list)
	}
	if len(hooks.keys) == 0 {
		top.del("hooks")
	} else {
		top.set("hooks", hooks.marshal(""))
	}
	return append(top.marshal(""), '\n'), true, nil
}

// isOurs reports whether a SessionStart group is skillfs's: one of its
// hooks runs `skillfs catalog --hook claude-code`.
func isOurs(raw json.RawMessage) bool {
	var g hookGroup
	if json.Unmarshal(raw, &g) != nil {
		return false
	}
	for _, h := range g.Hooks {
		if h.Command == hookCommand || strings.HasPrefix(h.Command, hookCommand+" ") {
			return true
		}
	}
	return false
}

// An object is a JSON object whose keys keep their order.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

// parseObject parses b as a JSON object; an absent one (!present, or
// only white space) is empty.
func parseObject(b []byte, present bool, what string) (*object, error) {
	o := &object{vals: map[string]json.RawMessage{}}
	if !present || len(bytes.TrimSpace(b)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	bad := fmt.Errorf("integrate: %s is not a JSON object: left alone (fix it, or add the hook by hand)", what)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, bad
	}
	for dec.More() {
		t, err := dec.Token()
		k, ok := t.(string)
		if err != nil || !ok {
			return nil, bad
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, bad
		}
		o.set(k, v)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, bad
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad
	}
	return o, nil
}

func (o *object) has(k string) bool            { _, ok := o.vals[k]; return ok }
func (o *object) get(k string) json.RawMessage { return o.vals[k] }

func (o *object) set(k string, v json.RawMessage) {
	if !o.has(k) {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) del(k string) {
	delete(o.vals, k)
	o.keys = slices.DeleteFunc(o.keys, func(x string) bool { return x == k })
}

// marshal writes o indented by two spaces, keys in order.
func (o *object) marshal(prefix string) []byte {
	if len(o.keys) == 0 {
		return []byte("{}")
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, k := range o.keys {
		key, _ := json.Marshal(k)
		b.WriteString(prefix + "  ")
		b.Write(key)
		b.WriteString(": ")
		var v bytes.Buffer
		if json.Indent(&v, o.vals[k], prefix+"  ", "  ") != nil {
			v.Reset()
			v.Write(o.vals[k])
		}
		b.Write(v.Bytes())
		if i < len(o.keys)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(prefix + "}")
	return b.Bytes()
}

func mustJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// saveFile writes b to path atomically (through a symlink, to the file it
// names), creating the directory.
func saveFile(path string, b []byte, mode fs.FileMode) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".skillfs-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
