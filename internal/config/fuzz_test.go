package config

import (
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

var idRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*-[0-9a-f]{16}$`)

// FuzzParse checks that Parse never panics, that every error names the
// file, and that whatever it accepts is a config the rest of skillfs can
// trust: valid, sorted, case-distinct labels, well-formed kinds, URLs and
// limits, and a value that survives being written out and read back.
func FuzzParse(f *testing.F) {
	for _, seed := range []struct{ data, ext string }{
		{sampleJSON, ".json"},
		{sampleYAML, ".yaml"},
		{sampleJSON, ""},
		{sampleYAML, ""},
		{`{"servers": {"a": {"type": "stdio", "command": "x",},}, // c` + "\n}", ".json"},
		{`{"mcpServers": {"a": {"url": "https://h/${PORT}"}}, "skillfs": {"servers": {"a": {"pin": ["skill://a/SKILL.md"]}}}}`, ".json"},
		{`{"mcpServers": {"A": {"command": "a"}, "a": {"command": "b"}}}`, ".json"},
		{`{"mcpServers": {"a": {"command": "$${x} ${UNSET:-d} ${EMPTY}"}}}`, ".json"},
		{"mcpServers:\n  a: &x {command: a}\n  b: *x\n", ".yaml"},
		{"a: &a [*a]\n", ".yaml"},
		{"x: &a [1,1,1,1,1,1,1,1,1]\ny: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nz: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nw: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n", ".yaml"},
		{"mcpServers:\n  a: {<<: [{command: a}, {args: [1]}]}\n", ".yaml"},
		{`{"mcpServers": {"a": {"command": "a"}}, "skillfs": {"defaults": {"limits": {"budget": "1.5 GiB", "call_timeout": 5, "refresh_interval": "0"}}}}`, ".json"},
		{"{/* unterminated", ".json"},
		{"[" + strings.Repeat("[", 80), ".json"},
		{"\xff\xfe", ""},
		{"", ".yml"},
	} {
		f.Add([]byte(seed.data), seed.ext)
	}
	f.Fuzz(func(t *testing.T, data []byte, ext string) {
		// The extension picks the format; other path bytes only name the
		// file, so any other extension stands for "unknown".
		switch ext {
		case ".json", ".jsonc", ".yaml", ".yml", "":
		default:
			ext = ".conf"
		}
		path := "/cfg/c" + ext
		cfg, err := Parse(data, path, testEnv)
		if err != nil {
			var list *Errors
			var one *Error
			switch {
			case errors.As(err, &list):
				for _, e := range list.List {
					if e.File != path {
						t.Fatalf("error names file %q, want %q: %v", e.File, path, e)
					}
				}
			case errors.As(err, &one):
				if one.File != path {
					t.Fatalf("error names file %q: %v", one.File, one)
				}
			default:
				t.Fatalf("error %T is not a config error: %v", err, err)
			}
			if !strings.HasPrefix(err.Error(), path+": ") {
				t.Fatalf("message does not start with the file: %v", err)
			}
			return
		}
		checkConfig(t, cfg)

		again, err := Parse(data, path, testEnv)
		if err != nil || !reflect.DeepEqual(cfg, again) {
			t.Fatalf("second parse differs: %v", err)
		}

		// Written out as JSON and read back, a config means the same.
		out := render(cfg)
		back, err := Parse(out, "/cfg/back.json", testEnv)
		if err != nil {
			t.Fatalf("rendered config does not parse: %v\n%s", err, out)
		}
		back.Path = cfg.Path
		if !reflect.DeepEqual(cfg, back) {
			t.Fatalf("round trip differs:\n%+v\n%+v\n%s", cfg, back, out)
		}
	})
}

func checkConfig(t *testing.T, cfg *Config) {
	t.Helper()
	lower := map[string]bool{}
	for i, o := range cfg.Origins {
		if err := ValidLabel(o.Label); err != nil {
			t.Fatalf("accepted invalid label: %v", err)
		}
		if i > 0 && cfg.Origins[i-1].Label >= o.Label {
			t.Fatalf("origins not sorted: %q before %q", cfg.Origins[i-1].Label, o.Label)
		}
		if lower[strings.ToLower(o.Label)] {
			t.Fatalf("labels differing only in case accepted: %q", o.Label)
		}
		lower[strings.ToLower(o.Label)] = true
		if !idRE.MatchString(o.ID()) || !strings.HasPrefix(o.ID(), o.Label+"-") {
			t.Fatalf("bad ID %q", o.ID())
		}
		switch o.Kind {
		case Stdio:
			if o.Command == "" || o.URL != "" || o.Headers != nil || strings.ContainsRune(o.Command, 0) {
				t.Fatalf("bad stdio origin %+v", o)
			}
		case HTTP, SSE:
			u, err := url.Parse(o.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || o.Command != "" || o.Args != nil || o.Env != nil {
				t.Fatalf("bad %s origin %+v", o.Kind, o)
			}
		default:
			t.Fatalf("bad kind %q", o.Kind)
		}
		for k, v := range o.Headers {
			if !validHeaderName(k) || strings.ContainsAny(v, "\r\n\x00") {
				t.Fatalf("bad header %q", k)
			}
		}
		for _, p := range o.Pin {
			if pinProblem(p) != "" {
				t.Fatalf("bad pin %q", p)
			}
		}
		l := o.Limits
		if l.MaxFileSize <= 0 || l.Budget <= 0 || l.BudgetWindow <= 0 || l.MaxListPages <= 0 || l.MaxListEntries <= 0 || l.MaxListResources <= 0 || l.MaxListBytes <= 0 || l.MaxDirPages <= 0 ||
			l.MaxDirEntries <= 0 || l.CallTimeout <= 0 || l.ConnectTimeout <= 0 || l.ListTimeout <= 0 || l.RefreshInterval < 0 || l.StartAttempts <= 0 {
			t.Fatalf("limits out of range: %+v", l)
		}
	}
}

// render writes a config as a JSON file that means the same, escaping
// "${" so that nothing is expanded twice.
func render(cfg *Config) []byte {
	esc := func(s string) string { return strings.ReplaceAll(s, "${", "$${") }
	escMap := func(m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		out := map[string]string{}
		for k, v := range m {
			out[k] = esc(v)
		}
		return out
	}
	servers := map[string]any{}
	options := map[string]any{}
	for _, o := range cfg.Origins {
		e := map[string]any{"type": string(o.Kind)}
		if o.Kind == Stdio {
			e["command"] = esc(o.Command)
			if o.Args != nil {
				args := make([]string, len(o.Args))
				for i, a := range o.Args {
					args[i] = esc(a)
				}
				e["args"] = args
			}
			if o.Env != nil {
				e["env"] = escMap(o.Env)
			}
			if o.Cwd != "" {
				e["cwd"] = esc(o.Cwd)
			}
		} else {
			e["url"] = esc(o.URL)
			if o.Headers != nil {
				e["headers"] = escMap(o.Headers)
			}
		}
		servers[o.Label] = e
		l := o.Limits
		opt := map[string]any{
			"strict": o.Strict, "allow_dynamic": o.AllowDynamic,
			"limits": map[string]any{
				"max_file_size": l.MaxFileSize, "budget": l.Budget, "budget_window": l.BudgetWindow.String(),
				"max_list_pages": l.MaxListPages, "max_list_entries": l.MaxListEntries,
				"max_list_resources": l.MaxListResources, "max_list_bytes": l.MaxListBytes,
				"max_dir_pages": l.MaxDirPages, "max_dir_entries": l.MaxDirEntries,
				"call_timeout": l.CallTimeout.String(), "connect_timeout": l.ConnectTimeout.String(),
				"list_timeout": l.ListTimeout.String(), "refresh_interval": l.RefreshInterval.String(), "start_attempts": l.StartAttempts,
			},
		}
		if o.Pin != nil {
			opt["pin"] = o.Pin
		}
		options[o.Label] = opt
	}
	if len(servers) == 0 {
		// An all-disabled config: keep one disabled server so the file
		// still has a server map.
		servers["off"] = map[string]any{"command": "x", "disabled": true}
	}
	b, err := json.Marshal(map[string]any{"mcpServers": servers, "skillfs": map[string]any{"servers": options}})
	if err != nil {
		panic(err)
	}
	return b
}
