package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestServerKeys(t *testing.T) {
	for _, tc := range []struct {
		name, entry string
		err         string // "" for no error
	}{
		{"typo env", `{"command": "x", "evn": {"A": "1"}}`, `mcpServers.s.evn: unknown key "evn"; did you mean "env"?`},
		{"typo args", `{"command": "x", "arsg": []}`, `mcpServers.s.arsg: unknown key "arsg"; did you mean "args"?`},
		{"case", `{"command": "x", "EnvFile": "e"}`, `did you mean "envFile"?`},
		{"typo of an ignored key", `{"command": "x", "autoAprove": []}`, `did you mean "autoApprove"?`},
		{"nothing close", `{"command": "x", "zzzzzzzzzzz": 1}`, `known keys: type, transportType, command`},
		{"claude/cline keys", `{"command": "x", "autoApprove": ["a"], "alwaysAllow": [], "timeout": 60, "description": "d", "disabled": false}`, ""},
		{"vs code keys", `{"type": "stdio", "command": "x", "dev": {"watch": "src/**"}, "gallery": true, "version": "1.0"}`, ""},
		{"gemini and windsurf keys", `{"httpUrl": "https://h/mcp", "trust": true, "includeTools": [], "excludeTools": [], "disabledTools": []}`, ""},
		{"cline transportType", `{"transportType": "bogus", "url": "https://h/mcp"}`, `mcpServers.s.transportType: unknown server type "bogus"`},
		{"disabled entry not checked", `{"command": "x", "evn": {}, "disabled": true}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(`{"mcpServers": {"s": `+tc.entry+`, "t": {"command": "y"}}}`), "/cfg/c.json", testEnv)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want one containing %q", err, tc.err)
			case tc.err != "" && !strings.HasPrefix(err.Error(), "/cfg/c.json: "):
				t.Errorf("error %v does not name the file", err)
			}
		})
	}
}

func TestTransportType(t *testing.T) {
	cfg := mustParse(t, `{"mcpServers": {"s": {"transportType": "sse", "url": "https://h/sse"}}}`, "/cfg/c.json")
	if cfg.Origins[0].Kind != SSE {
		t.Errorf("kind %s, want sse", cfg.Origins[0].Kind)
	}
}

func TestEnvFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("good.env", "# a comment\n\nA=1\nexport B = two words \nC=\"quoted # kept\"\nD='single'\nE=\nF=a=b\r\nexported=x\nOVER=file\n")
	write("bad.env", "A=1\nthis line has no equals sign s3cret\n")
	write("badname.env", "1A=x\n")
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o700)
	write("sub/rel.env", "R=rel\n")

	for _, tc := range []struct {
		name, entry string
		want        map[string]string
		err         string
	}{
		{"parsing and precedence", `{"command": "x", "envFile": "good.env", "env": {"OVER": "env", "G": "g"}}`,
			map[string]string{"A": "1", "B": "two words", "C": "quoted # kept", "D": "single", "E": "", "F": "a=b", "exported": "x", "OVER": "env", "G": "g"}, ""},
		{"relative to the config's folder", `{"command": "x", "envFile": "sub/rel.env"}`, map[string]string{"R": "rel"}, ""},
		{"workspaceFolder", `{"command": "x", "envFile": "${workspaceFolder}/sub/rel.env"}`, map[string]string{"R": "rel"}, ""},
		{"absolute", `{"command": "x", "envFile": "` + filepath.Join(sub, "rel.env") + `"}`, map[string]string{"R": "rel"}, ""},
		{"missing", `{"command": "x", "envFile": "nope.env"}`, nil,
			`mcpServers.s.envFile: cannot read ` + filepath.Join(dir, "nope.env") + `: no such file or directory; create it`},
		{"bad line", `{"command": "x", "envFile": "bad.env"}`, nil, `mcpServers.s.envFile: ` + filepath.Join(dir, "bad.env") + ` line 2: is not KEY=VALUE`},
		{"bad name", `{"command": "x", "envFile": "badname.env"}`, nil, `line 1: the name before '=' is not a variable name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "c.json")
			cfg, err := Parse([]byte(`{"mcpServers": {"s": `+tc.entry+`}}`), path, testEnv)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("error shows the file's contents: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Origins[0].Env; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("env %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseEnvFileEmpty(t *testing.T) {
	env, _, problem := parseEnvFile([]byte("# only comments\n\n"))
	if problem != "" || len(env) != 0 {
		t.Errorf("got %v %q", env, problem)
	}
}

func TestHostVariables(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
		workspace     string
		env           map[string]string
	}{
		{in: "${workspaceFolder}/x", want: "/cfg/x", workspace: "/cfg"},
		{in: "${userHome}/x", want: "/home/u/x", env: map[string]string{"HOME": "/home/u"}},
		{in: "${env:TOKEN}", want: "t", env: map[string]string{"TOKEN": "t"}},
		{in: "${env:TOKEN:-d}", want: "d"},
		{in: "${env:workspaceFolder}", want: "from-env", workspace: "/cfg", env: map[string]string{"workspaceFolder": "from-env"}},
		{in: "${workspaceFolder}", workspace: "", err: "${workspaceFolder} is the config file's folder, and this config has no file"},
		{in: "${userHome}", err: "${userHome} is $HOME, which is not set"},
		{in: "${input:token}", workspace: "/cfg", err: "${input:token} is a VS Code prompt, which skillfs cannot show; put the value in an environment variable"},
		{in: "${env:NOPE}", err: "environment variable NOPE is not set"},
	} {
		got, err := expand(tc.in, envOf(tc.env), tc.workspace)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("expand(%q) error %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("expand(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestHostVariablesInAFile(t *testing.T) {
	cfg := mustParse(t, `{"servers": {"s": {"command": "${workspaceFolder}/bin/srv", "args": ["${userHome}/skills"], "cwd": "${workspaceFolder}"}}}`, "/proj/.vscode/mcp.json")
	o := cfg.Origins[0]
	if o.Command != "/proj/.vscode/bin/srv" || o.Args[0] != "/home/u/skills" || o.Cwd != "/proj/.vscode" {
		t.Errorf("got %q %q %q", o.Command, o.Args, o.Cwd)
	}
	_, err := Parse([]byte(`{"servers": {"s": {"command": "x", "args": ["${input:key}"]}}}`), "/p/mcp.json", testEnv)
	if err == nil || !strings.Contains(err.Error(), `/p/mcp.json: servers.s.args[0]: ${input:key} is a VS Code prompt`) {
		t.Errorf("error %v", err)
	}
}
