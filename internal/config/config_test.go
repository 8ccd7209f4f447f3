package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

var testEnv = envOf(map[string]string{
	"HOME":       "/home/u",
	"ACME_TOKEN": "s3cret",
	"EMPTY":      "",
	"PORT":       "8931",
})

func mustParse(t *testing.T, src, path string) *Config {
	t.Helper()
	cfg, err := Parse([]byte(src), path, testEnv)
	if err != nil {
		t.Fatalf("Parse(%s): %v\n%s", path, err, src)
	}
	return cfg
}

// the same configuration in JSON, YAML, and with no extension in both.
const sampleJSON = `{
  "mcpServers": {
    "local": {
      "command": "skillfs",
      "args": ["serve", "${HOME}/skills", "--port", 8931],
      "env": {"LOG_LEVEL": "${LOG_LEVEL:-info}", "DEBUG": true},
      "cwd": "work"
    },
    "acme": {
      "url": "https://mcp.acme.example/mcp",
      "headers": {"Authorization": "Bearer ${ACME_TOKEN}"},
      "autoApprove": ["tool"], "dev": {"watch": "**/*.ts"}
    },
    "legacy": {"type": "sse", "url": "http://127.0.0.1:${PORT}/sse"},
    "old": {"command": "${NOT_SET}", "disabled": true}
  },
  "skillfs": {
    "defaults": {"allow_dynamic": true, "limits": {"call_timeout": "10s", "budget": "1GiB"}},
    "servers": {
      "acme": {"strict": true, "pin": ["skill://billing/refunds/SKILL.md"], "limits": {"budget": "64 MiB"}},
      "old": {"strict": true}
    }
  }
}`

const sampleYAML = `
mcpServers:
  local:
    command: skillfs
    args: [serve, "${HOME}/skills", --port, 8931]
    env:
      LOG_LEVEL: ${LOG_LEVEL:-info}
      DEBUG: true
    cwd: work
  acme:
    url: https://mcp.acme.example/mcp
    headers: {Authorization: "Bearer ${ACME_TOKEN}"}
    autoApprove: [tool]
  legacy: {type: sse, url: "http://127.0.0.1:${PORT}/sse"}
  old: {command: "${NOT_SET}", disabled: true}
skillfs:
  defaults:
    allow_dynamic: true
    limits: {call_timeout: 10s, budget: 1GiB}
  servers:
    acme:
      strict: true
      pin: ["skill://billing/refunds/SKILL.md"]
      limits: {budget: 64 MiB}
    old: {strict: true}
`

func sampleWant(dir string) *Config {
	limits := DefaultLimits()
	limits.CallTimeout = 10 * time.Second
	limits.Budget = 1 << 30
	acmeLimits := limits
	acmeLimits.Budget = 64 << 20
	return &Config{Origins: []Origin{
		{
			Label: "acme", Kind: HTTP, URL: "https://mcp.acme.example/mcp",
			Headers: map[string]string{"Authorization": "Bearer s3cret"},
			Strict:  true, AllowDynamic: true, Pin: []string{"skill://billing/refunds/SKILL.md"}, Limits: acmeLimits,
		},
		{Label: "legacy", Kind: SSE, URL: "http://127.0.0.1:8931/sse", AllowDynamic: true, Limits: limits},
		{
			Label: "local", Kind: Stdio, Command: "skillfs",
			Args: []string{"serve", "/home/u/skills", "--port", "8931"},
			Env:  map[string]string{"LOG_LEVEL": "info", "DEBUG": "true"},
			Cwd:  filepath.Join(dir, "work"), AllowDynamic: true, Limits: limits,
		},
	}}
}

func TestParseFormats(t *testing.T) {
	for _, tc := range []struct{ path, src string }{
		{"/etc/skillfs/config.json", sampleJSON},
		{"/etc/skillfs/config.JSON", sampleJSON},
		{"/etc/skillfs/config.yaml", sampleYAML},
		{"/etc/skillfs/config.yml", sampleYAML},
		{"/etc/skillfs/config", sampleJSON},
		{"/etc/skillfs/config", sampleYAML},
		{"/etc/skillfs/config.yaml", sampleJSON}, // JSON is YAML too
	} {
		t.Run(tc.path, func(t *testing.T) {
			got := mustParse(t, tc.src, tc.path)
			want := sampleWant("/etc/skillfs")
			want.Path = tc.path
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestVSCodeShape(t *testing.T) {
	// VS Code's mcp.json: "servers", JSONC comments and trailing commas,
	// explicit "stdio", ${env:VAR}, and an "inputs" key skillfs ignores.
	src := `{
  // Inputs are prompted by VS Code.
  "inputs": [{"type": "promptString", "id": "key"}],
  "servers": {
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
      "headers": {"Authorization": "Bearer ${env:ACME_TOKEN}"}, // trailing comma next
    },
    /* a block
       comment */
    "fs": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${env:HOME}",],},
  },
}`
	cfg := mustParse(t, src, "/p/.vscode/mcp.json")
	want := []Origin{
		{Label: "fs", Kind: Stdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/home/u"}, Limits: DefaultLimits()},
		{Label: "github", Kind: HTTP, URL: "https://api.githubcopilot.com/mcp/", Headers: map[string]string{"Authorization": "Bearer s3cret"}, Limits: DefaultLimits()},
	}
	if !reflect.DeepEqual(cfg.Origins, want) {
		t.Errorf("got  %+v\nwant %+v", cfg.Origins, want)
	}
	// A comment's line still counts: the error is reported on line 3.
	_, err := Parse([]byte("{\n// c\n\"servers\": {,}}x"), "mcp.json", testEnv)
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("error %v does not name line 3", err)
	}
}

func TestMergeServersAndMcpServers(t *testing.T) {
	cfg := mustParse(t, `{"mcpServers": {"b": {"command": "b"}}, "servers": {"a": {"command": "a"}}}`, "c.json")
	var labels []string
	for _, o := range cfg.Origins {
		labels = append(labels, o.Label)
	}
	if fmt.Sprint(labels) != "[a b]" {
		t.Errorf("labels %v, want [a b] (merged, sorted)", labels)
	}
	if o, ok := cfg.Origin("b"); !ok || o.Command != "b" {
		t.Errorf("Origin(b) = %+v, %v", o, ok)
	}
	if _, ok := cfg.Origin("c"); ok {
		t.Errorf("Origin(c) found")
	}
}

func TestTypeInference(t *testing.T) {
	for _, tc := range []struct {
		entry string
		kind  Kind
	}{
		{`{"command": "x"}`, Stdio},
		{`{"type": "stdio", "command": "x"}`, Stdio},
		{`{"url": "https://h/mcp"}`, HTTP},
		{`{"type": "http", "url": "https://h/mcp"}`, HTTP},
		{`{"type": "streamable-http", "url": "https://h/mcp"}`, HTTP},
		{`{"type": "streamableHttp", "url": "https://h/mcp"}`, HTTP},
		{`{"type": "sse", "url": "https://h/sse"}`, SSE},
		{`{"type": "SSE", "url": "https://h/sse"}`, SSE},
		{`{"serverUrl": "https://h/mcp"}`, HTTP},
		{`{"httpUrl": "https://h/mcp"}`, HTTP},
		{`{"type": "sse", "serverUrl": "https://h/sse"}`, SSE},
	} {
		cfg := mustParse(t, `{"mcpServers": {"s": `+tc.entry+`}}`, "c.json")
		if o := cfg.Origins[0]; o.Kind != tc.kind {
			t.Errorf("%s: kind %q, want %q", tc.entry, o.Kind, tc.kind)
		}
	}
}

func TestDisabled(t *testing.T) {
	cfg := mustParse(t, `{"mcpServers": {
		"a": {"command": "a", "disabled": false},
		"b": {"command": "${UNSET}", "disabled": true},
		"c": {"url": "ftp://not checked", "enabled": false},
		".bad label": {"disabled": true},
		"d": {"command": "d", "enabled": true}
	}}`, "c.json")
	var labels []string
	for _, o := range cfg.Origins {
		labels = append(labels, o.Label)
	}
	if fmt.Sprint(labels) != "[a d]" {
		t.Errorf("labels %v, want [a d]", labels)
	}
	// Every server disabled is a config that mounts nothing, not an error.
	cfg = mustParse(t, `{"mcpServers": {"a": {"command": "a", "disabled": true}}}`, "c.json")
	if len(cfg.Origins) != 0 {
		t.Errorf("origins %+v, want none", cfg.Origins)
	}
}

func TestDefaults(t *testing.T) {
	cfg := mustParse(t, `{"mcpServers": {"a": {"command": "a"}}}`, "c.json")
	o := cfg.Origins[0]
	if o.Strict || o.AllowDynamic || o.Pin != nil || o.Env != nil || o.Args != nil || o.Cwd != "" {
		t.Errorf("origin has non-default options: %+v", o)
	}
	want := Limits{
		MaxFileSize: 16 << 20, Budget: 512 << 20, BudgetWindow: time.Hour, MaxListPages: 1000, MaxListEntries: 100000,
		MaxListResources: 100000, MaxListBytes: 32 << 20,
		MaxDirPages: 100, MaxDirEntries: 10000, CallTimeout: 30 * time.Second,
		ConnectTimeout: 15 * time.Second, ListTimeout: 2 * time.Minute, RefreshInterval: 10 * time.Minute, StartAttempts: 10,
	}
	if o.Limits != want || DefaultLimits() != want {
		t.Errorf("limits %+v\nwant   %+v", o.Limits, want)
	}
}

func TestOptionLayers(t *testing.T) {
	cfg := mustParse(t, `
mcpServers:
  a: {command: a}
  b: {command: b}
  c: {command: c}
skillfs:
  defaults: {strict: true, allow_dynamic: true, limits: {max_file_size: 1MiB, call_timeout: 1s, refresh_interval: 0}}
  servers:
    a: {strict: false, limits: {call_timeout: 2s}}
    b: {allow_dynamic: false, pin: [skill://x/SKILL.md, skill://x/SKILL.md, github://o/r/y/SKILL.md]}
`, "c.yaml")
	a, _ := cfg.Origin("a")
	b, _ := cfg.Origin("b")
	c, _ := cfg.Origin("c")
	if a.Strict || !a.AllowDynamic || a.Limits.CallTimeout != 2*time.Second || a.Limits.MaxFileSize != 1<<20 || a.Limits.RefreshInterval != 0 {
		t.Errorf("a: %+v", a)
	}
	if !b.Strict || b.AllowDynamic || b.Limits.CallTimeout != time.Second || fmt.Sprint(b.Pin) != "[skill://x/SKILL.md github://o/r/y/SKILL.md]" {
		t.Errorf("b: %+v", b)
	}
	if !c.Strict || !c.AllowDynamic || c.Pin != nil || c.Limits.Budget != 512<<20 {
		t.Errorf("c: %+v", c)
	}
}

func TestApprovalOption(t *testing.T) {
	cfg := mustParse(t, `
mcpServers:
  a: {command: a}
  b: {command: b}
  c: {command: c}
skillfs:
  defaults: {approval: required}
  servers:
    b: {approval: "off"}
`, "c.yaml")
	for label, want := range map[string]Approval{"a": ApprovalRequired, "b": "", "c": ApprovalRequired} {
		o, _ := cfg.Origin(label)
		if o.Approval != want || o.Approval.Required() != (want == ApprovalRequired) {
			t.Errorf("%s: approval %q, want %q", label, o.Approval, want)
		}
	}
	cfg = mustParse(t, `{"mcpServers": {"a": {"command": "a"}}}`, "c.json")
	if o, _ := cfg.Origin("a"); o.Approval.Required() {
		t.Errorf("default approval %q, want off", o.Approval)
	}
}

func TestIndexOptions(t *testing.T) {
	cfg := mustParse(t, `{"mcpServers": {"a": {"command": "a"}}}`, "c.json")
	if cfg.Index != (Index{}) || cfg.Index.Bound() != DefaultIndexMaxBytes {
		t.Errorf("no index keys: %+v, bound %d", cfg.Index, cfg.Index.Bound())
	}
	cfg = mustParse(t, "mcpServers: {a: {command: a}}\nskillfs: {index_max_bytes: 64KiB, index_available_skills: true}\n", "c.yaml")
	if cfg.Index != (Index{MaxBytes: 64 << 10, AvailableSkills: true}) || cfg.Index.Bound() != 64<<10 {
		t.Errorf("index keys: %+v", cfg.Index)
	}
	cfg = mustParse(t, `{"mcpServers": {"a": {"command": "a"}}, "skillfs": {"index_max_bytes": 0}}`, "c.json")
	if cfg.Index.Bound() != DefaultIndexMaxBytes {
		t.Errorf("index_max_bytes 0: bound %d, want the default", cfg.Index.Bound())
	}
}

func TestYAMLAnchorsAndMerge(t *testing.T) {
	cfg := mustParse(t, `
common: &common
  command: runner
  env: {A: "1"}
mcpServers:
  one: {<<: *common, args: [one]}
  two:
    <<: *common
    command: other
`, "c.yaml")
	one, _ := cfg.Origin("one")
	two, _ := cfg.Origin("two")
	if one.Command != "runner" || fmt.Sprint(one.Args) != "[one]" || one.Env["A"] != "1" {
		t.Errorf("one: %+v", one)
	}
	if two.Command != "other" || two.Env["A"] != "1" {
		t.Errorf("two: %+v (a key written beside << must win)", two)
	}
}

func TestExpand(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "plain", want: "plain"},
		{in: "${HOME}/x", want: "/home/u/x"},
		{in: "a${ACME_TOKEN}b${PORT}", want: "as3cretb8931"},
		{in: "${EMPTY}", want: ""},
		{in: "${EMPTY:-d}", want: "d"},
		{in: "${UNSET:-d e f}", want: "d e f"},
		{in: "${UNSET:-}", want: ""},
		{in: "${HOME:-d}", want: "/home/u"},
		{in: "${UNSET:-${HOME}", want: "${HOME"}, // the default is literal and ends at the first }
		{in: "${env:HOME}", want: "/home/u"},
		{in: "$HOME $ $$ $5", want: "$HOME $ $$ $5"},
		{in: "$${HOME}", want: "${HOME}"},
		{in: "$$${HOME}", want: "$${HOME}"},
		{in: "${UNSET}", err: "environment variable UNSET is not set; set UNSET in the environment skillfs runs in, or give a default: ${UNSET:-default}"},
		{in: "x${HOME", err: "without a closing }"},
		{in: "${}", err: "is not a variable reference"},
		{in: "${1A}", err: "is not a variable reference"},
		{in: "${A B}", err: "is not a variable reference"},
		{in: "${A:?msg}", err: "is not a variable reference"},
		{in: "${input:token}", err: "VS Code prompt"},
	} {
		got, err := expand(tc.in, testEnv, "/cfg")
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("expand(%q) error %v, want one containing %q", tc.in, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("expand(%q): %v", tc.in, err)
		case tc.err == "" && got != tc.want:
			t.Errorf("expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestExpandedKeys(t *testing.T) {
	// Expansion applies to command, args, env values, cwd, url and header
	// values, and not to labels, env names, header names or pins.
	cfg := mustParse(t, `{"mcpServers": {
		"s": {"command": "${PORT}", "args": ["${PORT}"], "env": {"${PORT}": "${PORT}"}, "cwd": "/${PORT}"},
		"h": {"url": "https://h:${PORT}/", "headers": {"X-$PORT": "${PORT}"}}
	}, "skillfs": {"servers": {"s": {"pin": ["skill://a/${PORT}/SKILL.md"]}}}}`, "c.json")
	s, _ := cfg.Origin("s")
	h, _ := cfg.Origin("h")
	if s.Command != "8931" || s.Args[0] != "8931" || s.Env["${PORT}"] != "8931" || s.Cwd != "/8931" {
		t.Errorf("s: %+v", s)
	}
	if h.URL != "https://h:8931/" || h.Headers["X-$PORT"] != "8931" {
		t.Errorf("h: %+v", h)
	}
	if s.Pin[0] != "skill://a/${PORT}/SKILL.md" {
		t.Errorf("pin expanded: %q", s.Pin[0])
	}
}

func TestCwd(t *testing.T) {
	for _, tc := range []struct{ path, cwd, want string }{
		{"/etc/skillfs/c.json", "/abs/dir/", "/abs/dir"},
		{"/etc/skillfs/c.json", "rel/dir", "/etc/skillfs/rel/dir"},
		{"/etc/skillfs/c.json", "../up", "/etc/up"},
		{"/etc/skillfs/c.json", "~", "/home/u"},
		{"/etc/skillfs/c.json", "~/w", "/home/u/w"},
		{"/etc/skillfs/c.json", "~other/w", "/etc/skillfs/~other/w"},
		{"c.json", "rel", "rel"},
	} {
		cfg := mustParse(t, fmt.Sprintf(`{"mcpServers": {"s": {"command": "x", "cwd": %q}}}`, tc.cwd), tc.path)
		if got := cfg.Origins[0].Cwd; got != tc.want {
			t.Errorf("%s with cwd %q: got %q, want %q", tc.path, tc.cwd, got, tc.want)
		}
	}
}

// errorRE splits "<file>: <key>: <problem>; <fix>".
func checkError(t *testing.T, err error, file, key, problem, fix string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s: %s: …%s…; …%s…", file, key, problem, fix)
	}
	var list *Errors
	errs := []*Error{}
	if errors.As(err, &list) {
		errs = list.List
	} else {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("error %T %v is not a *config.Error", err, err)
		}
		errs = append(errs, e)
	}
	for _, e := range errs {
		if e.Key == key && strings.Contains(e.Problem, problem) && strings.Contains(e.Fix, fix) {
			prefix := file + ": "
			if key != "" {
				prefix += key + ": "
			}
			msg := e.Error()
			if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, "; ") || e.File != file {
				t.Errorf("message %q does not read %q<problem>; <fix>", msg, prefix)
			}
			return
		}
	}
	t.Errorf("error\n%v\nhas no %s: %s: …%s…; …%s…", err, file, key, problem, fix)
}

func TestErrors(t *testing.T) {
	const f = "/cfg/c.json"
	srv := func(label, entry string) string { return fmt.Sprintf(`{"mcpServers": {%q: %s}}`, label, entry) }
	sfs := func(section string) string {
		return `{"mcpServers": {"acme": {"command": "a"}, "local": {"command": "l", "disabled": true}}, "skillfs": ` + section + `}`
	}
	for _, tc := range []struct {
		name, path, src, key, problem, fix string
	}{
		{"json syntax", f, `{"mcpServers": }`, "", "invalid JSON: line 1, column 16", "fix the syntax"},
		{"json unclosed", f, `{"mcpServers": {`, "", "unexpected end of file", "fix the syntax"},
		{"json trailing data", f, `{} {}`, "", "after the top-level value", "fix the syntax"},
		{"json duplicate label", f, `{"mcpServers": {"a": {"command": "a"}, "a": {"command": "b"}}}`, "", `key "a" appears twice`, "fix the syntax"},
		{"jsonc open comment", f, "{/* x", "", "never closed", "fix the syntax"},
		{"json too deep", f, strings.Repeat("[", 100) + strings.Repeat("]", 100), "", "nested more than 64", "fix"},
		{"yaml syntax", "c.yaml", "mcpServers: [a\n", "", "invalid YAML", "fix the syntax"},
		{"yaml duplicate", "c.yaml", "mcpServers:\n  a: {command: a}\n  a: {command: b}\n", "", `line 3: key "a" appears twice`, "fix the syntax"},
		{"yaml two docs", "c.yaml", "a: 1\n---\nb: 2\n", "", "more than one YAML document", "keep one"},
		{"yaml bad merge", "c.yaml", "mcpServers:\n  <<: 5\n", "", "merge key", "fix"},
		{"yaml alias bomb", "c.yaml", aliasBomb(8), "", "more than 200000 values once aliases are expanded", "fix"},
		{"yaml alias loop", "c.yaml", "a: &a [*a]\n", "", "invalid YAML", "fix"},
		{"unknown ext reports YAML", "c.conf", "mcpServers: [a\n", "", "invalid YAML", "fix the syntax"},
		{"unknown ext reports JSON", "c.conf", "{\"mcpServers\": [}", "", "invalid JSON", "fix the syntax"},
		{"too large", f, `{"x": "` + strings.Repeat("a", maxFileSize) + `"}`, "", "larger than 4 MiB", "--config"},
		{"root not object", f, `[1]`, "", "holds a list, not an object", `"mcpServers"`},
		{"empty file", f, ``, "mcpServers", "no servers in " + f, "add an mcpServers entry"},
		{"blank file", f, " \n// nothing\n", "mcpServers", "no servers in " + f, "add an mcpServers entry"},
		{"empty yaml", "c.yaml", ``, "mcpServers", "no servers in c.yaml", "add an mcpServers entry (see `skillfs mount --help`)"},
		{"empty object", f, `{}`, "mcpServers", "no servers in " + f, "add an mcpServers entry"},
		{"empty map", f, `{"mcpServers": {}}`, "mcpServers", "no servers", "add an mcpServers entry"},
		{"builtin", "", `{}`, "mcpServers", "no servers in (built-in config)", "add"},
		{"servers not object", f, `{"mcpServers": ["a"]}`, "mcpServers", "is a list, not an object", "mapping each server's label"},
		{"label in both", f, `{"mcpServers": {"a": {"command": "a"}}, "servers": {"a": {"command": "b"}}}`, "servers.a", "also defined at mcpServers.a", "remove one"},
		{"entry not object", f, srv("a", `"npx a"`), "mcpServers.a", "is a string, not an object", `{"command": "acme-mcp"}`},
		{"disabled not bool", f, srv("a", `{"command": "a", "disabled": "yes"}`), "mcpServers.a.disabled", "is a string, not true or false", "without quotes"},
		{"label space", f, srv("my server", `{"command": "a"}`), `mcpServers["my server"]`, `contains ' '`, `rename the server, for example to "my-server"`},
		{"label dot", f, srv(".skillfs", `{"command": "a"}`), `mcpServers[".skillfs"]`, "starts with '.'", `"skillfs"`},
		{"label trailing dot", f, srv("a.", `{"command": "a"}`), `mcpServers["a."]`, "ends with '.'", `"a"`},
		{"label dash first", f, srv("-a", `{"command": "a"}`), "mcpServers.-a", "does not start with a letter or digit", `"a"`},
		{"label empty", f, srv("", `{"command": "a"}`), `mcpServers[""]`, "is empty", `"server"`},
		{"label long", f, srv(strings.Repeat("x", 65), `{"command": "a"}`), "mcpServers." + strings.Repeat("x", 65), "more than 64", strings.Repeat("x", 64)},
		{"label unicode", f, srv("café", `{"command": "a"}`), `mcpServers["café"]`, "contains 'é'", `"caf"`},
		{"label case", f, `{"mcpServers": {"Acme": {"command": "a"}, "acme": {"command": "b"}}}`, "mcpServers.acme", `label "acme" differs from label "Acme" only in case`, "case-insensitive"},
		{"command and url", f, srv("a", `{"command": "a", "url": "https://h"}`), "mcpServers.a", "has both command and url", `keep "command"`},
		{"neither", f, srv("a", `{"args": ["x"]}`), "mcpServers.a", "has neither command nor url", `add "command"`},
		{"two url keys", f, srv("a", `{"url": "https://h", "serverUrl": "https://h"}`), "mcpServers.a.serverUrl", `both "url" and "serverUrl"`, `keep only "url"`},
		{"type not string", f, srv("a", `{"type": 1, "command": "a"}`), "mcpServers.a.type", "is a number, not a string", "quotes"},
		{"type unknown", f, srv("a", `{"type": "websocket", "url": "wss://h"}`), "mcpServers.a.type", `unknown server type "websocket"`, `"stdio", "http"`},
		{"stdio with url", f, srv("a", `{"type": "stdio", "url": "https://h"}`), "mcpServers.a.url", "a stdio server has no url", `"type"`},
		{"stdio without command", f, srv("a", `{"type": "stdio"}`), "mcpServers.a", "needs a command", `add "command"`},
		{"http with command", f, srv("a", `{"type": "http", "command": "a", "url": "https://h"}`), "mcpServers.a.command", "type http takes no command", "remove it"},
		{"sse without url", f, srv("a", `{"type": "sse"}`), "mcpServers.a", "type sse needs a url", `add "url"`},
		{"command empty", f, srv("a", `{"command": ""}`), "mcpServers.a.command", "is empty", "name the program"},
		{"command empty after expansion", f, srv("a", `{"command": "${EMPTY}"}`), "mcpServers.a.command", "is empty", "name the program"},
		{"command not string", f, srv("a", `{"command": ["npx", "a"]}`), "mcpServers.a.command", "is a list, not a string", "quotes"},
		{"command NUL", f, srv("a", `{"command": "a\u0000b"}`), "mcpServers.a.command", "NUL", "remove"},
		{"args not list", f, srv("a", `{"command": "a", "args": "-y a"}`), "mcpServers.a.args", "is a string, not a list", `["-y", "acme-mcp"]`},
		{"arg object", f, srv("a", `{"command": "a", "args": ["x", {"y": 1}]}`), "mcpServers.a.args[1]", "is an object, not a string", "quotes"},
		{"arg null", f, srv("a", `{"command": "a", "args": [null]}`), "mcpServers.a.args[0]", "is null, not a string", "quotes"},
		{"arg NUL", f, srv("a", `{"command": "a", "args": ["\u0000"]}`), "mcpServers.a.args[0]", "NUL", "remove"},
		{"arg unset var", f, srv("a", `{"command": "a", "args": ["--token", "${TOKEN}"]}`), "mcpServers.a.args[1]", "environment variable TOKEN is not set", "${TOKEN:-default}"},
		{"env not object", f, srv("a", `{"command": "a", "env": ["A=1"]}`), "mcpServers.a.env", "is a list, not an object", `{"NAME": "value"}`},
		{"env bad name", f, srv("a", `{"command": "a", "env": {"A=B": "1"}}`), `mcpServers.a.env["A=B"]`, "not a valid environment variable name", "rename it"},
		{"env empty name", f, srv("a", `{"command": "a", "env": {"": "1"}}`), `mcpServers.a.env[""]`, "not a valid environment variable name", "rename it"},
		{"env value list", f, srv("a", `{"command": "a", "env": {"A": [1]}}`), "mcpServers.a.env.A", "is a list, not a string", "quotes"},
		{"env value NUL", f, srv("a", `{"command": "a", "env": {"A": "\u0000"}}`), "mcpServers.a.env.A", "NUL", "remove"},
		{"env unset var", f, srv("a", `{"command": "a", "env": {"API_KEY": "${API_KEY}"}}`), "mcpServers.a.env.API_KEY", "environment variable API_KEY is not set", "set API_KEY"},
		{"cwd not string", f, srv("a", `{"command": "a", "cwd": 1}`), "mcpServers.a.cwd", "is a number", "quotes"},
		{"cwd NUL", f, srv("a", `{"command": "a", "cwd": "/\u0000"}`), "mcpServers.a.cwd", "NUL", "absolute directory"},
		{"cwd malformed var", f, srv("a", `{"command": "a", "cwd": "${HOME"}`), "mcpServers.a.cwd", "without a closing }", "$${"},
		{"url scheme", f, srv("a", `{"url": "ftp://h/x"}`), "mcpServers.a.url", `scheme "ftp" is not http or https`, "https://"},
		{"url file", f, srv("a", `{"url": "file:///tmp/sock"}`), "mcpServers.a.url", `scheme "file"`, `"command"`},
		{"url relative", f, srv("a", `{"url": "/mcp"}`), "mcpServers.a.url", `scheme ""`, "https://"},
		{"url no host", f, srv("a", `{"url": "https:///mcp"}`), "mcpServers.a.url", "has no host", "https://mcp.example.com/mcp"},
		{"url port only", f, srv("a", `{"url": "http://:80/mcp"}`), "mcpServers.a.url", "has no host", "https://"},
		{"url parse", f, srv("a", `{"url": "http://h:port/"}`), "mcpServers.a.url", "is not a URL", "absolute URL"},
		{"url space", f, srv("a", `{"url": "https://h/a b"}`), "mcpServers.a.url", "whitespace", "percent-encode"},
		{"url var", f, srv("a", `{"url": "${MCP_URL}"}`), "mcpServers.a.url", "MCP_URL is not set", "${MCP_URL:-default}"},
		{"url input", f, srv("a", `{"url": "${input:url}"}`), "mcpServers.a.url", "VS Code prompt", "${VAR}"},
		{"headers not object", f, srv("a", `{"url": "https://h", "headers": "A: b"}`), "mcpServers.a.headers", "is a string, not an object", `{"NAME": "value"}`},
		{"header bad name", f, srv("a", `{"url": "https://h", "headers": {"Bad Name": "x"}}`), `mcpServers.a.headers["Bad Name"]`, "not a valid HTTP header name", "rename it"},
		{"header newline", f, srv("a", `{"url": "https://h", "headers": {"A": "x\r\nEvil: 1"}}`), "mcpServers.a.headers.A", "line break", "remove line breaks"},
		{"skillfs not object", f, sfs(`[]`), "skillfs", "is a list, not an object", "defaults and servers"},
		{"skillfs unknown", f, sfs(`{"defualts": {}}`), "skillfs.defualts", `unknown key "defualts"`, `did you mean "defaults"?`},
		{"skillfs far unknown", f, sfs(`{"zzzzzzzz": {}}`), "skillfs.zzzzzzzz", `unknown key`, "known keys: defaults, servers, index_max_bytes, index_available_skills, cache"},
		{"index bound typo", f, sfs(`{"index_max_byte": 1}`), "skillfs.index_max_byte", `unknown key "index_max_byte"`, `did you mean "index_max_bytes"?`},
		{"index bound too small", f, sfs(`{"index_max_bytes": "1KiB"}`), "skillfs.index_max_bytes", "1024 bytes is too small", "at least 4096 (4KiB)"},
		{"index bound unit", f, sfs(`{"index_max_bytes": "32K"}`), "skillfs.index_max_bytes", `unknown unit "K"`, "32KiB"},
		{"index bound negative", f, sfs(`{"index_max_bytes": -1}`), "skillfs.index_max_bytes", "-1 is negative", "32KiB"},
		{"index block not bool", f, sfs(`{"index_available_skills": "yes"}`), "skillfs.index_available_skills", "is a string, not true or false", "without quotes"},
		{"index bound in defaults", f, sfs(`{"defaults": {"index_max_bytes": 4096}}`), "skillfs.defaults.index_max_bytes", `unknown key "index_max_bytes"`, "top of the skillfs section"},
		{"skillfs strict at top", f, sfs(`{"strict": true}`), "skillfs.strict", `unknown key "strict"`, "skillfs.defaults"},
		{"skillfs pin at top", f, sfs(`{"pin": []}`), "skillfs.pin", `unknown key "pin"`, "skillfs.servers.LABEL"},
		{"defaults not object", f, sfs(`{"defaults": true}`), "skillfs.defaults", "is a boolean, not an object", "{strict: true"},
		{"defaults typo", f, sfs(`{"defaults": {"allowDynamic": true}}`), "skillfs.defaults.allowDynamic", `unknown key "allowDynamic"`, `did you mean "allow_dynamic"?`},
		{"approval typo", f, sfs(`{"defaults": {"approval": "requried"}}`), "skillfs.defaults.approval", `unknown value "requried"`, `write "required"`},
		{"approval bool", f, sfs(`{"servers": {"acme": {"approval": true}}}`), "skillfs.servers.acme.approval", "is a boolean, not a string", `"off"`},
		{"defaults pin", f, sfs(`{"defaults": {"pin": ["skill://a/SKILL.md"]}}`), "skillfs.defaults.pin", `unknown key "pin"`, "skillfs.servers.LABEL"},
		{"strict not bool", f, sfs(`{"defaults": {"strict": "true"}}`), "skillfs.defaults.strict", "is a string, not true or false", "without quotes"},
		{"servers not object", f, sfs(`{"servers": ["acme"]}`), "skillfs.servers", "is a list, not an object", "labels"},
		{"servers unknown label", f, sfs(`{"servers": {"acmee": {}}}`), "skillfs.servers.acmee", `there is no server "acmee"`, `did you mean "acme"? (servers: acme, local)`},
		{"servers far label", f, sfs(`{"servers": {"zzzzzzz": {}}}`), "skillfs.servers.zzzzzzz", `no server "zzzzzzz"`, "use one of the configured labels: acme, local"},
		{"server opts not object", f, sfs(`{"servers": {"acme": 1}}`), "skillfs.servers.acme", "is a number, not an object", "{strict"},
		{"server opts unknown", f, sfs(`{"servers": {"acme": {"pins": []}}}`), "skillfs.servers.acme.pins", `unknown key "pins"`, `did you mean "pin"?`},
		{"disabled server opts checked", f, sfs(`{"servers": {"local": {"limits": {"budget": -1}}}}`), "skillfs.servers.local.limits.budget", "-1 is negative", "16MiB"},
		{"pin not list", f, sfs(`{"servers": {"acme": {"pin": "skill://a/SKILL.md"}}}`), "skillfs.servers.acme.pin", "is a string, not a list", "list of skill URIs"},
		{"pin not string", f, sfs(`{"servers": {"acme": {"pin": [1]}}}`), "skillfs.servers.acme.pin[0]", "is a number, not a string", "as a string"},
		{"pin no scheme", f, sfs(`{"servers": {"acme": {"pin": ["a/SKILL.md"]}}}`), "skillfs.servers.acme.pin[0]", "is not a URI with a scheme", "skill://billing/refunds/SKILL.md"},
		{"pin file", f, sfs(`{"servers": {"acme": {"pin": ["file:///x/SKILL.md"]}}}`), "skillfs.servers.acme.pin[0]", `scheme "file"`, "SKILL.md"},
		{"pin https", f, sfs(`{"servers": {"acme": {"pin": ["HTTPS://h/x/SKILL.md"]}}}`), "skillfs.servers.acme.pin[0]", `scheme "https"`, "SKILL.md"},
		{"pin not SKILL.md", f, sfs(`{"servers": {"acme": {"pin": ["skill://a/b"]}}}`), "skillfs.servers.acme.pin[0]", "does not name a skill's SKILL.md", "skill://"},
		{"pin lower-case skill.md", f, sfs(`{"servers": {"acme": {"pin": ["skill://a/skill.md"]}}}`), "skillfs.servers.acme.pin[0]", "does not name", "SKILL.md"},
		{"pin no skill path", f, sfs(`{"servers": {"acme": {"pin": ["skill:///SKILL.md"]}}}`), "skillfs.servers.acme.pin[0]", "does not name", "SKILL.md"},
		{"limits not object", f, sfs(`{"defaults": {"limits": 5}}`), "skillfs.defaults.limits", "is a number, not an object", "{budget: 64MiB"},
		{"limit unknown", f, sfs(`{"defaults": {"limits": {"maxFileSize": 1}}}`), "skillfs.defaults.limits.maxFileSize", `unknown limit "maxFileSize"`, `did you mean "max_file_size"?`},
		{"limit typo", f, sfs(`{"defaults": {"limits": {"call_timout": "1s"}}}`), "skillfs.defaults.limits.call_timout", "unknown limit", `did you mean "call_timeout"?`},
		{"size unit", f, sfs(`{"defaults": {"limits": {"budget": "16M"}}}`), "skillfs.defaults.limits.budget", `unknown unit "M"`, "16MiB"},
		{"size words", f, sfs(`{"defaults": {"limits": {"budget": "lots"}}}`), "skillfs.defaults.limits.budget", "does not start with a number", "16MiB"},
		{"size float", f, sfs(`{"defaults": {"limits": {"budget": 1.5}}}`), "skillfs.defaults.limits.budget", "not a whole number of bytes", "16MiB"},
		{"size fraction", f, sfs(`{"defaults": {"limits": {"budget": "0.1KiB"}}}`), "skillfs.defaults.limits.budget", "not a whole number of bytes", "16MiB"},
		{"size overflow", f, sfs(`{"defaults": {"limits": {"budget": "9999999999TiB"}}}`), "skillfs.defaults.limits.budget", "too large", "16MiB"},
		{"size bool", f, sfs(`{"defaults": {"limits": {"budget": true}}}`), "skillfs.defaults.limits.budget", "is a boolean, not a size", "16MiB"},
		{"size zero", f, sfs(`{"defaults": {"limits": {"max_file_size": 0}}}`), "skillfs.defaults.limits.max_file_size", "is 0", "positive value"},
		{"count string", f, sfs(`{"defaults": {"limits": {"max_list_pages": "10"}}}`), "skillfs.defaults.limits.max_list_pages", "is a string, not an integer", "positive integer"},
		{"count negative", f, sfs(`{"defaults": {"limits": {"max_dir_entries": -1}}}`), "skillfs.defaults.limits.max_dir_entries", "negative", "positive integer"},
		{"count huge", f, sfs(`{"defaults": {"limits": {"max_dir_pages": 99999999999}}}`), "skillfs.defaults.limits.max_dir_pages", "below 2^31", "positive integer"},
		{"count zero", f, sfs(`{"defaults": {"limits": {"max_list_entries": 0}}}`), "skillfs.defaults.limits.max_list_entries", "is 0", "positive value"},
		{"list resources zero", f, sfs(`{"defaults": {"limits": {"max_list_resources": 0}}}`), "skillfs.defaults.limits.max_list_resources", "is 0", "positive value"},
		{"list bytes zero", f, sfs(`{"defaults": {"limits": {"max_list_bytes": "0MiB"}}}`), "skillfs.defaults.limits.max_list_bytes", "is 0", "positive value"},
		{"list bytes unit", f, sfs(`{"defaults": {"limits": {"max_list_bytes": "32M"}}}`), "skillfs.defaults.limits.max_list_bytes", `unknown unit "M"`, "16MiB"},
		{"duration bad", f, sfs(`{"defaults": {"limits": {"call_timeout": "30 secs"}}}`), "skillfs.defaults.limits.call_timeout", `"30 secs" is not a duration`, `"30s"`},
		{"duration negative", f, sfs(`{"defaults": {"limits": {"list_timeout": "-1s"}}}`), "skillfs.defaults.limits.list_timeout", "negative", `"30s"`},
		{"duration negative ms", f, sfs(`{"defaults": {"limits": {"list_timeout": -5}}}`), "skillfs.defaults.limits.list_timeout", "negative", `"30s"`},
		{"duration float ms", f, sfs(`{"defaults": {"limits": {"call_timeout": 1.5}}}`), "skillfs.defaults.limits.call_timeout", "not a whole number of milliseconds", "milliseconds"},
		{"duration zero", f, sfs(`{"defaults": {"limits": {"connect_timeout": "0s"}}}`), "skillfs.defaults.limits.connect_timeout", "is 0", "positive value"},
		{"duration list", f, sfs(`{"defaults": {"limits": {"call_timeout": []}}}`), "skillfs.defaults.limits.call_timeout", "is a list, not a duration", "milliseconds"},
		{"duration overflow", f, sfs(`{"defaults": {"limits": {"call_timeout": 99999999999999999}}}`), "skillfs.defaults.limits.call_timeout", "too long", "milliseconds"},
		{"yaml limit typo", "c.yaml", "mcpServers: {a: {command: a}}\nskillfs: {servers: {a: {limits: {budgte: 1MiB}}}}\n", "skillfs.servers.a.limits.budgte", "unknown limit", `did you mean "budget"?`},
		{"yaml disabled yes", "c.yaml", "mcpServers: {a: {command: a, disabled: yes}}\n", "mcpServers.a.disabled", "is a string, not true or false", "true or false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), tc.path, testEnv)
			checkError(t, err, displayName(tc.path), tc.key, tc.problem, tc.fix)
		})
	}
}

// aliasBomb is a YAML file whose aliases expand to 10^levels values.
func aliasBomb(levels int) string {
	var b strings.Builder
	b.WriteString("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*l%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func TestErrorsListEveryProblem(t *testing.T) {
	_, err := Parse([]byte(`{"mcpServers": {
		"a": {"command": "${A1}"},
		"b": {"url": "ftp://x"},
		"c d": {"command": "c"}
	}, "skillfs": {"defaults": {"limits": {"budget": "x"}}}}`), "c.json", testEnv)
	var list *Errors
	if !errors.As(err, &list) {
		t.Fatalf("error %T %v is not *Errors", err, err)
	}
	var keys []string
	for _, e := range list.List {
		keys = append(keys, e.Key)
	}
	want := `[mcpServers.a.command mcpServers.b.url mcpServers["c d"] skillfs.defaults.limits.budget]`
	if fmt.Sprint(keys) != want {
		t.Errorf("keys %v, want %s", keys, want)
	}
	if n := strings.Count(err.Error(), "\n"); n != 3 {
		t.Errorf("message has %d line breaks, want one error per line:\n%v", n, err)
	}
	// A file wrong everywhere is cut short.
	var b strings.Builder
	b.WriteString(`{"mcpServers": {`)
	for i := range 30 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"s%d": {}`, i)
	}
	b.WriteString("}}")
	_, err = Parse([]byte(b.String()), "c.json", testEnv)
	if !errors.As(err, &list) || len(list.List) != maxErrors || list.More != 10 || !strings.HasSuffix(err.Error(), "(and 10 more)") {
		t.Errorf("30 errors reported as %d + %d:\n%v", len(list.List), list.More, err)
	}
}

func TestErrorsKeepSecrets(t *testing.T) {
	// Messages name keys and variables, never an expanded value.
	_, err := Parse([]byte(`{"mcpServers": {
		"a": {"url": "ftp://${ACME_TOKEN}@h/"},
		"b": {"url": "https://h", "headers": {"A": "${ACME_TOKEN}\n"}},
		"c": {"command": "c", "env": {"A": "${ACME_TOKEN}\u0000"}}
	}}`), "c.json", testEnv)
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error leaks a secret:\n%v", err)
	}
	if strings.Count(err.Error(), "\n") != 2 {
		t.Errorf("want three errors:\n%v", err)
	}
}

func TestID(t *testing.T) {
	base := Origin{Label: "acme", Kind: Stdio, Command: "npx", Args: []string{"-y", "acme-mcp"}, Cwd: "/w",
		Env: map[string]string{"TOKEN": "a"}}
	web := Origin{Label: "acme", Kind: HTTP, URL: "https://mcp.acme.example/mcp", Headers: map[string]string{"Authorization": "Bearer a"}}
	id := base.ID()
	if !regexp.MustCompile(`^acme-[0-9a-f]{16}$`).MatchString(id) {
		t.Fatalf("ID %q is not label-16hex", id)
	}
	if id != base.ID() {
		t.Fatal("ID is not deterministic")
	}
	with := func(o Origin, f func(*Origin)) Origin {
		o.Args = append([]string(nil), o.Args...)
		f(&o)
		return o
	}
	for _, tc := range []struct {
		name string
		a, b Origin
		same bool
	}{
		{"env value", base, with(base, func(o *Origin) { o.Env = map[string]string{"TOKEN": "b"} }), false},
		{"env added", base, with(base, func(o *Origin) { o.Env = map[string]string{"TOKEN": "a", "DIR": "/b"} }), false},
		{"env removed", base, with(base, func(o *Origin) { o.Env = nil }), false},
		{"env name", base, with(base, func(o *Origin) { o.Env = map[string]string{"TOKEN2": "a"} }), false},
		{"env name and value run together", base, with(base, func(o *Origin) { o.Env = map[string]string{"TOKE": "Na"} }), false},
		{"env same", base, with(base, func(o *Origin) { o.Env = map[string]string{"TOKEN": "a"} }), true},
		{"options change", base, with(base, func(o *Origin) { o.Strict, o.AllowDynamic, o.Pin = true, true, []string{"x"} }), true},
		{"limits change", base, with(base, func(o *Origin) { o.Limits.Budget = 1 }), true},
		{"header value", web, with(web, func(o *Origin) { o.Headers = map[string]string{"Authorization": "Bearer b"} }), false},
		{"headers removed", web, with(web, func(o *Origin) { o.Headers = nil }), false},
		{"header added", web, with(web, func(o *Origin) { o.Headers = map[string]string{"Authorization": "Bearer a", "X-Tenant": "b"} }), false},
		{"header name case", web, with(web, func(o *Origin) { o.Headers = map[string]string{"authorization": "Bearer a"} }), true},
		{"url userinfo", web, with(web, func(o *Origin) { o.URL = "https://user:pw@mcp.acme.example/mcp" }), false},
		{"url fragment", web, with(web, func(o *Origin) { o.URL = "https://mcp.acme.example/mcp#x" }), true},
		{"url host case", web, with(web, func(o *Origin) { o.URL = "HTTPS://MCP.Acme.example/mcp" }), true},
		{"label", base, with(base, func(o *Origin) { o.Label = "other" }), false},
		{"command", base, with(base, func(o *Origin) { o.Command = "bunx" }), false},
		{"arg", base, with(base, func(o *Origin) { o.Args[1] = "evil-mcp" }), false},
		{"arg added", base, with(base, func(o *Origin) { o.Args = append(o.Args, "") }), false},
		{"args split differently", base, with(base, func(o *Origin) { o.Args = []string{"-yacme-mcp"} }), false},
		{"command absorbs arg", base, with(base, func(o *Origin) { o.Command, o.Args = "npx-y", []string{"acme-mcp"} }), false},
		{"cwd", base, with(base, func(o *Origin) { o.Cwd = "/elsewhere" }), false},
		{"url path", web, with(web, func(o *Origin) { o.URL = "https://mcp.acme.example/other" }), false},
		{"url host", web, with(web, func(o *Origin) { o.URL = "https://evil.example/mcp" }), false},
		{"url query", web, with(web, func(o *Origin) { o.URL = "https://mcp.acme.example/mcp?tenant=b" }), false},
		{"kind", web, with(web, func(o *Origin) { o.Kind = SSE }), false},
	} {
		if got := tc.a.ID() == tc.b.ID(); got != tc.same {
			t.Errorf("%s: same ID = %v, want %v (%s vs %s)", tc.name, got, tc.same, tc.a.ID(), tc.b.ID())
		}
	}
	// Pinned value: the store keys directories by it, so a change to the
	// hash input would orphan every user's store. Change it only on purpose
	// (v2 added env, headers and userinfo, and the store's key).
	web.idKey = []byte("0123456789abcdef0123456789abcdef")
	if got, want := web.ID(), pinnedWebID; got != want {
		t.Errorf("web.ID() = %s, want %s", got, want)
	}
}

const pinnedWebID = "acme-267a89cff37b5455"

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SKILLFS_TEST_TOKEN", "tok")

	path := filepath.Join(dir, "config.yaml")
	write(t, path, "mcpServers:\n  a: {command: a, cwd: sub, env: {T: \"${SKILLFS_TEST_TOKEN}\"}}\n")
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Path != path || cfg.Origins[0].Cwd != filepath.Join(dir, "sub") || cfg.Origins[0].Env["T"] != "tok" {
		t.Errorf("Load: %+v", cfg)
	}

	// A relative path anchors cwd at the file's absolute directory.
	t.Chdir(dir)
	cfg, err = Load("config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Path != "config.yaml" || cfg.Origins[0].Cwd != filepath.Join(dir, "sub") {
		t.Errorf("Load(relative): %+v", cfg)
	}

	missing := filepath.Join(dir, "nope.json")
	_, err = Load(missing)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want an error wrapping fs.ErrNotExist", err)
	}
	checkError(t, err, missing, "", "no such file", "--config FILE")

	_, err = Load(dir)
	checkError(t, err, dir, "", "not a regular file", "--config FILE")
	if errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a directory is reported as missing")
	}

	empty := filepath.Join(dir, "empty.json")
	write(t, empty, "{}")
	_, err = Load(empty)
	checkError(t, err, empty, "mcpServers", "no servers in "+empty, "add an mcpServers entry")
	if errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an empty file is reported as missing")
	}

	if os.Geteuid() != 0 {
		unreadable := filepath.Join(dir, "unreadable.json")
		write(t, unreadable, "{}")
		os.Chmod(unreadable, 0)
		_, err = Load(unreadable)
		checkError(t, err, unreadable, "", "cannot open it: permission denied", "readable")
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultPath(t *testing.T) {
	home := t.TempDir()
	xdg := t.TempDir()
	t.Setenv("HOME", home)

	t.Setenv("XDG_CONFIG_HOME", "")
	check(t, filepath.Join(home, ".config/skillfs/config.json"))
	t.Setenv("XDG_CONFIG_HOME", "relative/ignored")
	check(t, filepath.Join(home, ".config/skillfs/config.json"))

	t.Setenv("XDG_CONFIG_HOME", xdg)
	check(t, filepath.Join(xdg, "skillfs/config.json"))
	write(t, filepath.Join(xdg, "skillfs/config.yml"), "")
	check(t, filepath.Join(xdg, "skillfs/config.yml"))
	write(t, filepath.Join(xdg, "skillfs/config.yaml"), "")
	check(t, filepath.Join(xdg, "skillfs/config.yaml"))
	write(t, filepath.Join(xdg, "skillfs/config.json"), "")
	check(t, filepath.Join(xdg, "skillfs/config.json"))
}

func check(t *testing.T, want string) {
	t.Helper()
	got, err := DefaultPath()
	if err != nil || got != want {
		t.Errorf("DefaultPath() = %q, %v; want %q", got, err, want)
	}
}

func TestValidLabel(t *testing.T) {
	for _, tc := range []struct {
		label string
		ok    bool
	}{
		{"acme", true}, {"a", true}, {"0", true}, {"Acme_2.b-c", true}, {strings.Repeat("a", 64), true},
		{"a-", true}, {"a_", true}, {"a..b", true},
		{"", false}, {".", false}, {"..", false}, {".skillfs", false}, {".hidden", false},
		{"-a", false}, {"_a", false}, {"a.", false}, {"a/b", false}, {"a\\b", false}, {"a b", false},
		{"a\x00", false}, {"@github", false}, {"ä", false}, {strings.Repeat("a", 65), false},
	} {
		err := ValidLabel(tc.label)
		if (err == nil) != tc.ok {
			t.Errorf("ValidLabel(%q) = %v, want ok=%v", tc.label, err, tc.ok)
		}
		if err != nil {
			var le *LabelError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), "rename the server") {
				t.Errorf("ValidLabel(%q) error %q says no fix", tc.label, err)
			}
			if s := SuggestLabel(tc.label); ValidLabel(s) != nil {
				t.Errorf("SuggestLabel(%q) = %q, itself invalid", tc.label, s)
			}
		}
	}
}

func TestSizes(t *testing.T) {
	for _, tc := range []struct {
		v    *value
		want int64
		bad  bool
	}{
		{v: num("0"), want: 0},
		{v: num("1024"), want: 1024},
		{v: str("1024"), want: 1024},
		{v: str("16MiB"), want: 16 << 20},
		{v: str("16 MiB"), want: 16 << 20},
		{v: str(" 16mib "), want: 16 << 20},
		{v: str("2KiB"), want: 2048},
		{v: str("2KB"), want: 2000},
		{v: str("2kb"), want: 2000},
		{v: str("3MB"), want: 3_000_000},
		{v: str("1GiB"), want: 1 << 30},
		{v: str("1GB"), want: 1e9},
		{v: str("1TiB"), want: 1 << 40},
		{v: str("1.5GiB"), want: 3 << 29},
		{v: str("7B"), want: 7},
		{v: str("8388607TiB"), want: 8388607 << 40},
		{v: str("8388608TiB"), bad: true},
		{v: str(""), bad: true},
		{v: str("MiB"), bad: true},
		{v: str("1.2.3MiB"), bad: true},
		{v: str("16 M"), bad: true},
		{v: str("16Mb it"), bad: true},
		{v: str("-1"), bad: true},
		{v: num("-1"), bad: true},
		{v: num("1e3"), bad: true},
		{v: num("99999999999999999999"), bad: true},
		{v: &value{kind: nullValue}, bad: true},
	} {
		got, problem := parseSize(tc.v)
		if (problem != "") != tc.bad || !tc.bad && got != tc.want {
			t.Errorf("parseSize(%q) = %d, %q; want %d, bad=%v", tc.v.text, got, problem, tc.want, tc.bad)
		}
	}
}

func TestDurations(t *testing.T) {
	for _, tc := range []struct {
		v    *value
		want time.Duration
		bad  bool
	}{
		{v: num("0"), want: 0},
		{v: num("1500"), want: 1500 * time.Millisecond},
		{v: str("1500"), want: 1500 * time.Millisecond},
		{v: str("30s"), want: 30 * time.Second},
		{v: str(" 1m30s "), want: 90 * time.Second},
		{v: str("250ms"), want: 250 * time.Millisecond},
		{v: str("2h"), want: 2 * time.Hour},
		{v: str("0"), want: 0},
		{v: str("30"), want: 30 * time.Millisecond},
		{v: str("-"), bad: true},
		{v: str("-5"), bad: true},
		{v: str("-5s"), bad: true},
		{v: num("-5"), bad: true},
		{v: num("1.5"), bad: true},
		{v: str("30 s"), bad: true},
		{v: str("thirty"), bad: true},
		{v: str(""), bad: true},
		{v: num("9223372036854775807"), bad: true},
		{v: &value{kind: boolValue, text: "true"}, bad: true},
	} {
		got, problem := parseDuration(tc.v)
		if (problem != "") != tc.bad || !tc.bad && time.Duration(got) != tc.want {
			t.Errorf("parseDuration(%q) = %v, %q; want %v, bad=%v", tc.v.text, time.Duration(got), problem, tc.want, tc.bad)
		}
	}
}

func num(s string) *value { return &value{kind: numberValue, text: s} }
func str(s string) *value { return &value{kind: stringValue, text: s} }

func TestSuggest(t *testing.T) {
	known := limitKeyNames()
	for in, want := range map[string]string{
		"max_file_size":   "max_file_size",
		"maxFileSize":     "max_file_size",
		"max-file-size":   "max_file_size",
		"MAX_FILE_SIZE":   "max_file_size",
		"max_file_szie":   "max_file_size",
		"budgte":          "budget",
		"timeout":         "",
		"refresh":         "",
		"connect_timeotu": "connect_timeout",
		"x":               "",
	} {
		if got := suggest(in, known); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

// The example in doc.go is the one users copy; it must parse to what it says.
func TestDocExample(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur []string
	for _, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(line, "//\t"); ok {
			cur = append(cur, rest)
			continue
		}
		if cur != nil {
			blocks = append(blocks, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	if len(blocks) != 2 {
		t.Fatalf("doc.go has %d example blocks, want 2 (JSON, YAML)", len(blocks))
	}
	env := envOf(map[string]string{"HOME": "/home/u", "ACME_TOKEN": "t"})
	j, err := Parse([]byte(blocks[0]), "/h/.config/skillfs/config.json", env)
	if err != nil {
		t.Fatalf("doc.go JSON example: %v", err)
	}
	if len(j.Origins) != 3 {
		t.Errorf("JSON example has %d origins, want 3 (one disabled)", len(j.Origins))
	}
	for _, o := range j.Origins {
		want := DefaultLimits()
		if o.Label == "acme" {
			want.Budget = 64 << 20
		}
		if o.Limits != want {
			t.Errorf("%s: limits %+v; the example claims to show the defaults", o.Label, o.Limits)
		}
	}
	if local, _ := j.Origin("local"); local.Cwd != "/home/u/work" || local.Env["LOG_LEVEL"] != "info" {
		t.Errorf("local: %+v", local)
	}
	y, err := Parse([]byte(blocks[1]), "/h/.config/skillfs/config.yaml", env)
	if err != nil {
		t.Fatalf("doc.go YAML example: %v", err)
	}
	ya, _ := y.Origin("acme")
	ja, _ := j.Origin("acme")
	if !reflect.DeepEqual(ya, ja) {
		t.Errorf("YAML acme %+v\nJSON acme %+v", ya, ja)
	}
}

func TestExample(t *testing.T) {
	cfg, err := Parse([]byte(Example), "", envOf(map[string]string{"HOME": "/h", "ACME_TOKEN": "t"}))
	if err != nil {
		t.Fatalf("Example does not parse: %v", err)
	}
	var kinds []string
	for _, o := range cfg.Origins {
		kinds = append(kinds, o.Label+":"+string(o.Kind))
	}
	if got := strings.Join(kinds, " "); got != "acme:http legacy:sse local:stdio" {
		t.Errorf("Example origins %s", got)
	}
	if acme, _ := cfg.Origin("acme"); !acme.Strict || acme.Limits.Budget != 64<<20 || len(acme.Pin) != 1 {
		t.Errorf("Example acme %+v", acme)
	}
}

func TestEndpoint(t *testing.T) {
	for _, tc := range []struct {
		o    Origin
		want string
	}{
		{Origin{Kind: Stdio, Command: "npx", Args: []string{"--token", "s3cret"}}, "stdio npx"},
		{Origin{Kind: HTTP, URL: "https://u:s3cret@Mcp.Example/a%20b/mcp?key=s3cret#s3cret"}, "http https://Mcp.Example/a%20b/mcp"},
		{Origin{Kind: SSE, URL: "http://127.0.0.1:8931/sse"}, "sse http://127.0.0.1:8931/sse"},
		{Origin{Kind: HTTP, URL: "http://h:bad/"}, "http"},
	} {
		if got := tc.o.Endpoint(); got != tc.want {
			t.Errorf("Endpoint() = %q, want %q", got, tc.want)
		}
	}
}
