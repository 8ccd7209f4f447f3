package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Kind is how skillfs reaches a server.
type Kind string

const (
	Stdio Kind = "stdio" // a local command speaking MCP on stdin/stdout
	HTTP  Kind = "http"  // streamable HTTP
	SSE   Kind = "sse"   // the legacy HTTP+SSE transport
)

// A Config is the set of servers skillfs mounts.
type Config struct {
	Path    string   // the file it was loaded from ("" for the built-in demo)
	Origins []Origin // sorted by Label; disabled servers left out
	// Index shapes the generated .skillfs/index.md (skillfs.index_max_bytes
	// and skillfs.index_available_skills).
	Index Index
	// Cache is skillfs.cache: the store's size bound and how long an
	// unused server's cache is kept.
	Cache Cache
}

// Index shapes .skillfs/index.md, the file written for a model's context.
type Index struct {
	// MaxBytes bounds index.md and each .skillfs/servers/LABEL.md; 0 means
	// DefaultIndexMaxBytes.
	MaxBytes int64
	// AvailableSkills appends the Agent Skills <available_skills> block,
	// the one hosts put in a system prompt, to index.md.
	AvailableSkills bool
}

// Bounds of Index.MaxBytes. The default, 32 KiB, is about 8,000 tokens at
// the usual 4 bytes of English text per token (escaped Markdown and paths
// run a little denser, so it is an estimate, not a promise). Below the
// minimum the servers' health alone may not fit.
const (
	DefaultIndexMaxBytes = 32 << 10
	MinIndexMaxBytes     = 4 << 10
)

// Bound is the bound in force: MaxBytes, or the default.
func (i Index) Bound() int64 {
	if i.MaxBytes == 0 {
		return DefaultIndexMaxBytes
	}
	return i.MaxBytes
}

// Origin returns the origin with the given label.
func (c *Config) Origin(label string) (Origin, bool) {
	i := sort.Search(len(c.Origins), func(i int) bool { return c.Origins[i].Label >= label })
	if i < len(c.Origins) && c.Origins[i].Label == label {
		return c.Origins[i], true
	}
	return Origin{}, false
}

// An Origin is one configured server and the options skillfs applies to it.
// Every string has had ${VAR} expanded.
type Origin struct {
	// Label is the key the user gave the server; it names the origin's
	// directory under the mount.
	Label string
	Kind  Kind

	// Stdio. Env holds only the variables the file sets; Cwd is absolute
	// when the file was given by path ("" means skillfs's own directory).
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// PassEnv names variables of skillfs's own environment the server
	// gets besides BaseEnv and Env (see Environ): pass_env of
	// skillfs.defaults or skillfs.servers.LABEL. Stdio only.
	PassEnv []string

	// HTTP and SSE.
	URL     string
	Headers map[string]string

	// Strict accepts only the newest SEP-2640 shapes (every resource with
	// size). An entry without resources is refused either way.
	Strict bool
	// AllowDynamic shows skills whose resources are "dynamic", marked
	// unverified.
	AllowDynamic bool
	// Approval is "" (off, the default, and what "off" loads as: every
	// held skill is shown) or ApprovalRequired (a skill is shown only
	// while the user's approval, bound to its entry and full resource
	// set, holds; see package vfs).
	Approval Approval
	// Pin lists skill URIs (…/SKILL.md) confirmed with skills/get at
	// connect, for skills the server's listing may leave out.
	Pin    []string
	Limits Limits

	// Shared is set by the mount command, never by the file: the mount is
	// shared with other users (--allow-other), so a listing the server
	// marks cacheScope "private" (SEP-2549) is withheld from it.
	Shared bool

	// idKey keys ID's fingerprint; Config.SetIdentityKey sets it.
	idKey []byte
}

// Approval says whether an origin's skills need the user's approval before
// they appear in the mount.
type Approval string

const (
	// ApprovalOff shows every held skill; it is also what "" (not set)
	// means.
	ApprovalOff Approval = "off"
	// ApprovalRequired shows a skill only while an approval bound to its
	// origin identity, URI, frontmatter and resources holds.
	ApprovalRequired Approval = "required"
)

// Required reports whether the origin's skills need approval.
func (a Approval) Required() bool { return a == ApprovalRequired }

// SetShared marks every origin as mounted for other users too
// (--allow-other); see Origin.Shared.
func (c *Config) SetShared(shared bool) {
	for i := range c.Origins {
		c.Origins[i].Shared = shared
	}
}

// DefaultPath returns $XDG_CONFIG_HOME/skillfs/config.json (~/.config when
// XDG_CONFIG_HOME is unset or relative, as the XDG spec asks), or
// config.yaml / config.yml beside it when only that one exists. The file
// need not exist.
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find the config file: %w; set HOME or XDG_CONFIG_HOME, or pass --config FILE", err)
		}
		dir = filepath.Join(home, ".config")
	}
	base := filepath.Join(dir, "skillfs")
	json := filepath.Join(base, "config.json")
	if _, err := os.Stat(json); err == nil {
		return json, nil
	}
	for _, name := range []string{"config.yaml", "config.yml"} {
		if _, err := os.Stat(filepath.Join(base, name)); err == nil {
			return filepath.Join(base, name), nil
		}
	}
	return json, nil
}

// Load reads and parses the config file at path, expanding ${VAR} from the
// process environment. A missing file is an *Error wrapping fs.ErrNotExist,
// so that the caller can fall back to the built-in demo.
func Load(path string) (*Config, error) {
	deadline := time.Now().Add(ReadTimeout)
	data, ierr := readInput(path, MaxConfigSize, deadline)
	if ierr != nil {
		fix := ierr.fix
		switch {
		case errors.Is(ierr, fs.ErrNotExist):
			fix = "create it (see `skillfs mount --help` for its shape) or pass --config FILE"
		case fix == "":
			fix = "pass the config file itself, a regular file, with --config FILE"
		}
		return nil, &Error{File: path, Problem: ierr.problem, Fix: fix, Err: ierr.err}
	}
	base := filepath.Dir(path)
	if abs, err := filepath.Abs(base); err == nil {
		base = abs
	}
	return parse(data, path, base, os.LookupEnv, deadline)
}

// unwrapPath drops the *PathError wrapping, whose path the message already
// names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Parse parses a config file's contents. path names the file in errors,
// chooses the format by its extension (.json/.jsonc: JSON, .yaml/.yml:
// YAML, anything else: JSON, then YAML) and anchors a relative cwd. getenv
// looks up ${VAR}; nil means the process environment.
func Parse(data []byte, path string, getenv func(string) (string, bool)) (*Config, error) {
	return parse(data, path, filepath.Dir(path), getenv, time.Now().Add(ReadTimeout))
}

// parse parses data; the envFiles it names are read by deadline.
func parse(data []byte, path, baseDir string, getenv func(string) (string, bool), deadline time.Time) (*Config, error) {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	if path == "" {
		baseDir = ""
	}
	file := displayName(path)
	if len(data) > maxFileSize {
		return nil, &Error{File: file, Problem: fmt.Sprintf("is larger than %d MiB", maxFileSize>>20), Fix: "pass the MCP server config file with --config FILE"}
	}
	root, err := parseTree(data, path)
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			fix := se.fix
			if fix == "" {
				fix = "fix the syntax there"
			}
			return nil, &Error{File: file, Problem: se.Error(), Fix: fix, Err: err}
		}
		return nil, err
	}
	p := &parser{file: path, baseDir: baseDir, getenv: getenv, deadline: deadline, errs: errorList{file: file}}
	p.get = fields{baseDir: baseDir, getenv: getenv, errs: &p.errs}
	cfg := p.config(root)
	if err := p.errs.err(); err != nil {
		return nil, err
	}
	cfg.Path = path
	return cfg, nil
}

func parseTree(data []byte, path string) (*value, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json", ".jsonc":
		return parseJSON(data)
	case ".yaml", ".yml":
		return parseYAML(data)
	}
	v, jerr := parseJSON(data)
	if jerr == nil {
		return v, nil
	}
	v, yerr := parseYAML(data)
	if yerr == nil {
		return v, nil
	}
	// Report the error of the format the file was evidently meant to be.
	if t := bytes.TrimSpace(data); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return nil, jerr
	}
	return nil, yerr
}

type parser struct {
	file    string
	baseDir string
	getenv  func(string) (string, bool)
	// deadline is when reading envFiles gives up (ReadTimeout after Load
	// began).
	deadline time.Time
	errs     errorList
	get      fields // reads values into errs
}

// rawServer is one entry of mcpServers or servers, before parsing.
type rawServer struct {
	label string
	path  keyPath
	v     *value
}

func (p *parser) config(root *value) *Config {
	cfg := &Config{}
	if root.kind != mapValue && !root.isNull() {
		p.errs.add("", `write an object with an "mcpServers" key, as MCP hosts use`, "the file holds %s, not an object", root.kind)
		return cfg
	}
	var raws []rawServer
	seen := map[string]keyPath{}
	for _, top := range []string{"mcpServers", "servers"} {
		m := root.field(top)
		if m.isNull() {
			continue
		}
		tp := keyPath("").key(top)
		if m.kind != mapValue {
			p.errs.add(tp, `write an object mapping each server's label to its settings, like {"acme": {"command": "acme-mcp"}}`, "is %s, not an object", m.kind)
			continue
		}
		for _, label := range m.keys {
			kp := tp.key(label)
			if other, dup := seen[label]; dup {
				p.errs.add(kp, "remove one of the two, or rename one", "label %q is also defined at %s", label, other)
				continue
			}
			seen[label] = kp
			raws = append(raws, rawServer{label, kp, m.fields[label]})
		}
	}
	if len(raws) == 0 {
		if len(p.errs.errs) > 0 {
			return cfg // a server map of the wrong type was reported already
		}
		p.errs.add("mcpServers", "add an mcpServers entry (see `skillfs mount --help`)", "no servers in %s", displayName(p.file))
		return cfg
	}

	byLower := map[string]string{}
	configured := map[string]bool{}
	for _, r := range raws {
		configured[r.label] = true
		o, ok := p.server(r)
		if !ok {
			continue
		}
		lower := strings.ToLower(o.Label)
		if other, dup := byLower[lower]; dup {
			p.errs.add(r.path, "rename one of them: labels become directory names, and on a case-insensitive filesystem (macOS) they would be one directory",
				"label %q differs from label %q only in case", o.Label, other)
			continue
		}
		byLower[lower] = o.Label
		cfg.Origins = append(cfg.Origins, o)
	}
	p.options(root.field("skillfs"), cfg, configured)
	sort.Slice(cfg.Origins, func(i, j int) bool { return cfg.Origins[i].Label < cfg.Origins[j].Label })
	return cfg
}

// server parses one entry; ok is false for a disabled or invalid one.
func (p *parser) server(r rawServer) (o Origin, ok bool) {
	v := r.v
	if v.kind != mapValue {
		p.errs.add(r.path, `write an object such as {"command": "acme-mcp"} or {"url": "https://…"}`, "is %s, not an object", v.kind)
		return o, false
	}
	nerr := len(p.errs.errs)
	// "disabled": true is Claude Code's and Cline's; "enabled": false is
	// opencode's. Either skips the server without checking the rest, which
	// may well name variables that are not set.
	if b, set := p.get.boolean(v, r.path, "disabled"); set && b {
		return o, false
	}
	if b, set := p.get.boolean(v, r.path, "enabled"); set && !b {
		return o, false
	}
	if err := ValidLabel(r.label); err != nil {
		le := err.(*LabelError)
		p.errs.add(r.path, le.Fix(), "label %q %s", r.label, le.Problem)
	}
	p.get.unknownKeys(v, r.path)
	o = Origin{Label: r.label, Limits: DefaultLimits()}

	urlKey := p.urlKey(v, r.path)
	hasCommand := !v.field("command").isNull()
	var typ string
	o.Kind, typ = p.serverKind(v, r.path, hasCommand, urlKey)
	p.transport(v, r.path, &o, typ, hasCommand, urlKey)
	return o, len(p.errs.errs) == nerr
}

// urlKey returns which of the hosts' names for the URL the entry uses, ""
// for none; giving more than one is an error.
func (p *parser) urlKey(v *value, path keyPath) string {
	var urlKey string
	for _, k := range []string{"url", "serverUrl", "httpUrl"} {
		if !v.field(k).isNull() {
			if urlKey != "" {
				p.errs.add(path.key(k), fmt.Sprintf("keep only %q", urlKey), "both %q and %q are given", urlKey, k)
				continue
			}
			urlKey = k
		}
	}
	return urlKey
}

// serverKind returns the entry's transport, from its type or, without one, from
// whether it has a command or a url; "" when that is unclear. typ is the
// type as written.
func (p *parser) serverKind(v *value, path keyPath, hasCommand bool, urlKey string) (kind Kind, typ string) {
	hasURL := urlKey != ""
	typeKey := "type"
	if v.field("type").isNull() && !v.field("transportType").isNull() {
		typeKey = "transportType" // Cline's
	}
	typ, _ = p.get.str(v, path, typeKey)
	switch strings.ToLower(typ) {
	case "":
		switch {
		case hasCommand && hasURL:
			p.errs.add(path, `keep "command" for a local (stdio) server or "url" for a remote one, not both`, "has both command and %s", urlKey)
		case hasCommand:
			kind = Stdio
		case hasURL:
			kind = HTTP
		default:
			p.errs.add(path, `add "command" (a local server started by skillfs) or "url" (a remote server)`, "has neither command nor url")
		}
	case "stdio":
		kind = Stdio
	case "http", "streamable-http", "streamablehttp":
		kind = HTTP
	case "sse":
		kind = SSE
	default:
		p.errs.add(path.key(typeKey), `use "stdio", "http" (also "streamable-http") or "sse", or leave it out`, "unknown server type %q", typ)
	}
	return kind, typ
}

// transport checks that the entry has what o.Kind needs and nothing of the
// other kind, and reads the settings of that kind into o.
func (p *parser) transport(v *value, path keyPath, o *Origin, typ string, hasCommand bool, urlKey string) {
	hasURL := urlKey != ""
	switch o.Kind {
	case Stdio:
		if hasURL {
			p.errs.add(path.key(urlKey), `remove it, or set "type" to "http" or "sse" and remove "command"`, "a stdio server has no url")
		}
		if !hasCommand {
			p.errs.add(path, `add "command": the program that runs the server`, "a stdio server needs a command")
		}
		p.stdio(v, path, o)
	case HTTP, SSE:
		if hasCommand {
			p.errs.add(path.key("command"), fmt.Sprintf(`remove it, or remove "type": %q and %q`, typ, urlKey), "type %s takes no command", o.Kind)
		}
		if !hasURL {
			p.errs.add(path, `add "url": the server's http(s) endpoint`, "type %s needs a url", o.Kind)
		} else {
			p.remote(v, path, urlKey, o)
		}
	}
}

func (p *parser) stdio(v *value, path keyPath, o *Origin) {
	if cmd, ok := p.get.expanded(v, path, "command"); ok {
		switch {
		case cmd == "":
			p.errs.add(path.key("command"), "name the program that runs the server", "is empty")
		case strings.ContainsRune(cmd, 0):
			p.errs.add(path.key("command"), "remove the NUL character", "contains a NUL character")
		}
		o.Command = cmd
	}
	if args := v.field("args"); !args.isNull() {
		ap := path.key("args")
		if args.kind != listValue {
			p.errs.add(ap, `write a list of strings, like ["-y", "acme-mcp"]`, "is %s, not a list", args.kind)
		} else {
			o.Args = make([]string, 0, len(args.list))
			for i, a := range args.list {
				s, ok := p.get.expandScalar(a, ap.index(i))
				if ok && strings.ContainsRune(s, 0) {
					p.errs.add(ap.index(i), "remove the NUL character", "contains a NUL character")
				}
				o.Args = append(o.Args, s)
			}
		}
	}
	o.Env = p.envFile(v, path)
	env := p.get.stringMap(v, path, "env", func(k string) string {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return "is not a valid environment variable name (empty, or holds '=' or NUL)"
		}
		return ""
	}, "\x00")
	if o.Env == nil {
		o.Env = env
	} else {
		maps.Copy(o.Env, env) // "env" wins over envFile, as in VS Code
	}
	if cwd, ok := p.get.expanded(v, path, "cwd"); ok && cwd != "" {
		cwd, problem := p.get.resolveCwd(cwd)
		if problem != "" {
			p.errs.add(path.key("cwd"), "give an absolute directory, or one relative to the config file", "%s", problem)
		}
		o.Cwd = cwd
	}
}

// entryKeys are the keys of a server entry skillfs reads; any other key
// that is not in IgnoredServerKeys is an error.
var entryKeys = []string{
	"type", "transportType",
	"command", "args", "env", "envFile", "cwd",
	"url", "serverUrl", "httpUrl", "headers",
	"disabled", "enabled",
}

// IgnoredServerKeys are keys MCP hosts document for a server entry that
// mean nothing to skillfs (tool approval, timeouts of the host's own tool
// calls, descriptions, VS Code's dev mode and gallery metadata). They are
// accepted and ignored, so a file shared with those hosts loads; any other
// unknown key is an error, so a misspelt "env" is never silently dropped.
var IgnoredServerKeys = []string{
	"alwaysAllow",   // Cline, Roo Code
	"autoApprove",   // Cline, Claude Desktop extensions
	"description",   // several hosts
	"dev",           // VS Code
	"disabledTools", // Windsurf, Roo Code
	"excludeTools",  // Gemini CLI
	"gallery",       // VS Code
	"includeTools",  // Gemini CLI
	"timeout",       // Cline, Gemini CLI, Roo Code
	"trust",         // Gemini CLI
	"version",       // VS Code
}

// envFile reads the entry's envFile (KEY=VALUE lines, as Cursor and VS
// Code take them). Its path has ${…} expanded and is relative to the
// config file's folder. Problems name the file and the line, never a
// value, which may be a secret.
func (p *parser) envFile(v *value, path keyPath) map[string]string {
	name, ok := p.get.expanded(v, path, "envFile")
	if !ok {
		return nil
	}
	kp := path.key("envFile")
	if name == "" || strings.ContainsRune(name, 0) {
		p.errs.add(kp, "name a file of KEY=VALUE lines, or remove envFile", "is empty or holds a NUL character")
		return nil
	}
	if name == "~" || strings.HasPrefix(name, "~/") {
		if home, ok := p.getenv("HOME"); ok && home != "" {
			name = filepath.Join(home, name[1:])
		}
	}
	if !filepath.IsAbs(name) && p.baseDir != "" {
		name = filepath.Join(p.baseDir, name)
	}
	data, ierr := readInput(name, MaxEnvFileSize, p.deadline)
	if ierr != nil {
		problem, fix := name+": "+ierr.problem, ierr.fix
		switch {
		case errors.Is(ierr, fs.ErrNotExist):
			problem = fmt.Sprintf("cannot read %s: %v", name, unwrapPath(ierr.err))
			fix = "create it, correct the path (relative paths start at the config file's folder), or remove envFile"
		case fix == "":
			fix = "point envFile at a regular file of KEY=VALUE lines"
		}
		p.errs.add(kp, fix, "%s", problem)
		return nil
	}
	env, line, problem := parseEnvFile(data)
	if problem != "" {
		p.errs.add(kp, "write KEY=VALUE on each line (# starts a comment; export and quotes are allowed)", "%s line %d: %s", name, line, problem)
		return nil
	}
	return env
}

// parseEnvFile reads dotenv lines: KEY=VALUE, blank lines and # comments,
// an optional leading "export ", and a value in matching single or double
// quotes taken without them. Nothing is expanded. A problem is reported
// with its line number and never quotes the line.
func parseEnvFile(data []byte) (env map[string]string, line int, problem string) {
	env = map[string]string{}
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(strings.TrimSuffix(l, "\r"))
		if l == "" || l[0] == '#' {
			continue
		}
		if rest, ok := strings.CutPrefix(l, "export"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			l = strings.TrimSpace(rest)
		}
		k, val, ok := strings.Cut(l, "=")
		k = strings.TrimSpace(k)
		if !ok {
			return nil, i + 1, "is not KEY=VALUE"
		}
		if !validVarName(k) {
			return nil, i + 1, "the name before '=' is not a variable name (letters, digits and _)"
		}
		val = strings.TrimSpace(val)
		if len(val) >= 2 && (val[0] == '"' || val[0] == '\'') && val[len(val)-1] == val[0] {
			val = val[1 : len(val)-1]
		}
		if strings.ContainsRune(val, 0) {
			return nil, i + 1, "the value holds a NUL character"
		}
		env[k] = val
	}
	return env, 0, ""
}

func (p *parser) remote(v *value, path keyPath, urlKey string, o *Origin) {
	kp := path.key(urlKey)
	raw, ok := p.get.expanded(v, path, urlKey)
	if !ok {
		return
	}
	// The problem names the scheme or host, never the whole expanded URL,
	// which may carry a token.
	u, err := url.Parse(raw)
	switch {
	case strings.ContainsAny(raw, " \t\r\n\x00"):
		p.errs.add(kp, "remove the whitespace, or percent-encode it", "contains whitespace or control characters")
	case err != nil:
		p.errs.add(kp, `write an absolute URL such as "https://mcp.example.com/mcp"`, "is not a URL: %v", err.(*url.Error).Err)
	case !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https"):
		p.errs.add(kp, `write an http:// or https:// URL; for a local program use "command"`, "scheme %q is not http or https", u.Scheme)
	case u.Host == "" || u.Hostname() == "":
		p.errs.add(kp, `write an absolute URL such as "https://mcp.example.com/mcp"`, "has no host")
	}
	o.URL = raw
	o.Headers = p.get.stringMap(v, path, "headers", func(k string) string {
		if !validHeaderName(k) {
			return "is not a valid HTTP header name"
		}
		return ""
	}, "\r\n\x00")
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(alnum(rune(c)) || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
