//go:build linux

package integration

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigCheckWhatMountWouldRefuse: a config that loads can still hold
// a label mount refuses ("skills") and a stdio command that is not there;
// config check names both, says what to change, and exits 2.
func TestConfigCheckWhatMountWouldRefuse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	writeFile(t, cfg, `{"mcpServers": {
  "skills": {"command": "sh"},
  "npxy":   {"command": "skillfs-no-such-command-op1", "args": ["-y", "@acme/mcp"]},
  "gone":   {"command": "`+dir+`/bin/srv"},
  "fine":   {"command": "sh"}
}}`)
	out, errOut, code := runSkillfs(t, nil, "config", "check", cfg)
	for _, want := range []string{
		"problems:\n",
		`  skills: skillfs mount refuses this label: its directory would be a folder named skills, which agents read skills from; rename the server (the key under mcpServers)`,
		`  npxy: command "skillfs-no-such-command-op1" is not found in PATH (`,
		`or give its absolute path in "command"; mount would start the other servers and show this one as failed-to-start`,
		"  gone: command " + dir + "/bin/srv does not exist: fix the path in \"command\"",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("config check output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "fine:") || strings.Contains(out, "no problems") {
		t.Errorf("config check blames a good server or says no problems:\n%s", out)
	}
	if code != 2 || !strings.Contains(errOut, "config check: 3 problems in "+cfg) {
		t.Errorf("exit %d, want 2 and the count:\n%s", code, errOut)
	}
	// mount agrees about the label.
	_, errOut, code = runSkillfs(t, nil, "mount", "--config", cfg, "--cache-dir", t.TempDir(), filepath.Join(t.TempDir(), "mnt"))
	if code != 2 || !strings.Contains(errOut, "skills") {
		t.Errorf("mount with a server labelled skills: exit %d, want 2:\n%s", code, errOut)
	}
}

// TestConfigCheckYAMLErrorLine: a YAML syntax error is reported at the
// line that breaks the file, not at the line before it or the start of
// the enclosing block (yaml.v3 reports those).
func TestConfigCheckYAMLErrorLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, yaml, want string }{
		{"unclosed flow sequence", "mcpServers:\n  local:\n    command: skillfs\n    args: [serve, /tmp\n  acme:\n    url: https://x\n", "line 4: did not find expected ',' or ']'"},
		{"bad indent", "mcpServers:\n  local:\n    command: skillfs\n   args: [x]\n", "line 4: did not find expected key"},
		{"tab", "mcpServers:\n  local:\n    command: skillfs\n\targs: [x]\n", "line 4: found a tab character"},
		{"mapping in a value", "mcpServers:\n  local:\n    command: skillfs\n    args: [x]\n  bad: x: y\n", "line 5: mapping values are not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "config.yaml")
			writeFile(t, cfg, tc.yaml)
			out, errOut, code := runSkillfs(t, nil, "config", "check", cfg)
			if code != 2 || !strings.Contains(out, cfg+": invalid YAML: "+tc.want) {
				t.Errorf("exit %d, want 2 and %q:\n%s%s", code, tc.want, out, errOut)
			}
		})
	}
}
