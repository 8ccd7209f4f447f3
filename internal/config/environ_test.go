package config

import (
	"slices"
	"strings"
	"testing"
)

func TestPassEnvOption(t *testing.T) {
	cfg := mustParse(t, `
mcpServers:
  a: {command: a, env: {OWN: "1"}}
  b: {command: b}
  h: {url: "https://h/mcp"}
skillfs:
  defaults: {pass_env: [SSH_AUTH_SOCK]}
  servers:
    b: {pass_env: [HTTPS_PROXY, HTTPS_PROXY, NO_PROXY]}
`, "c.yaml")
	for label, want := range map[string][]string{"a": {"SSH_AUTH_SOCK"}, "b": {"HTTPS_PROXY", "NO_PROXY"}, "h": nil} {
		o, _ := cfg.Origin(label)
		if !slices.Equal(o.PassEnv, want) {
			t.Errorf("%s: pass_env %q, want %q", label, o.PassEnv, want)
		}
	}

	const f = "/cfg/c.json"
	for _, tc := range []struct{ src, key, problem, fix string }{
		{`{"mcpServers": {"a": {"command": "a"}}, "skillfs": {"servers": {"a": {"pass_env": "PATH"}}}}`,
			"skillfs.servers.a.pass_env", "is a string, not a list", "write a list of variable names"},
		{`{"mcpServers": {"a": {"command": "a"}}, "skillfs": {"defaults": {"pass_env": ["A=1"]}}}`,
			"skillfs.defaults.pass_env[0]", `"A=1" is not a variable name`, "without $ or a value"},
		{`{"mcpServers": {"a": {"command": "a"}}, "skillfs": {"defaults": {"pass_env": [1]}}}`,
			"skillfs.defaults.pass_env[0]", "not a string", "as a string"},
		{`{"mcpServers": {"h": {"url": "https://h/mcp"}}, "skillfs": {"servers": {"h": {"pass_env": ["X"]}}}}`,
			"skillfs.servers.h.pass_env", "server h is reached by URL (http)", `only a server skillfs starts ("command")`},
		{`{"mcpServers": {"a": {"command": "a"}}, "skillfs": {"pass_env": ["X"]}}`,
			"skillfs.pass_env", `unknown key "pass_env"`, "skillfs.defaults"},
	} {
		_, err := Parse([]byte(tc.src), f, testEnv)
		checkError(t, err, f, tc.key, tc.problem, tc.fix)
	}
}

func TestEnviron(t *testing.T) {
	o := Origin{Kind: Stdio, Env: map[string]string{"OWN": "own", "PATH": "/own/bin"}, PassEnv: []string{"PASSED"}}
	got := o.Environ([]string{
		"HOME=/home/u", "PATH=/usr/bin", "ACME_TOKEN=secret", "PASSED=yes", "LC_ALL=C", "LANG=C.UTF-8",
		"TMPDIR=/tmp/u", "USER=u", "LOGNAME=u", "SHELL=/bin/sh", "TERM=xterm", "SSH_AUTH_SOCK=/s", "NOEQUALS",
	})
	want := []string{"HOME=/home/u", "LANG=C.UTF-8", "LC_ALL=C", "LOGNAME=u", "OWN=own", "PASSED=yes", "PATH=/own/bin", "SHELL=/bin/sh", "TERM=xterm", "TMPDIR=/tmp/u", "USER=u"}
	if !slices.Equal(got, want) {
		t.Errorf("Environ:\n got %s\nwant %s", strings.Join(got, " "), strings.Join(want, " "))
	}
}
