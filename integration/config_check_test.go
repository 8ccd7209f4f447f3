//go:build linux

package integration

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Config hygiene as a user meets it: `skillfs config check` and a mount
// that refuses a misspelt key.

const configSecret = "hunter2-do-not-print"

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func runSkillfs(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(skillfsBin, args...)
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	return o.String(), e.String(), exitCode(err)
}

func TestConfigCheckGoodFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "secrets.env"), "# tokens\nexport FILE_TOKEN=\""+configSecret+"\"\n")
	// The command is there to start: config check looks.
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "srv"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "mcp.json")
	writeFile(t, cfg, `{
  // VS Code's shape, with its own keys
  "servers": {
    "local": {"type": "stdio", "command": "${workspaceFolder}/bin/srv", "args": ["--token", "x"],
              "env": {"TOKEN": "${env:CONFIG_CHECK_TOKEN}"}, "envFile": "secrets.env", "dev": {"watch": "**"}},
    "acme": {"url": "https://me:${CONFIG_CHECK_TOKEN}@mcp.acme.example/mcp?key=${CONFIG_CHECK_TOKEN}",
             "headers": {"Authorization": "Bearer ${CONFIG_CHECK_TOKEN}"}, "autoApprove": ["x"], "timeout": 30}
  }
}`)
	out, errOut, code := runSkillfs(t, []string{"CONFIG_CHECK_TOKEN=" + configSecret}, "config", "check", cfg)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"local", "stdio", dir + "/bin/srv --token x", "env FILE_TOKEN=***", "env TOKEN=***",
		"acme", "http", "https://***@mcp.acme.example/mcp?key=***", "header Authorization: ***", "no problems",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+errOut, configSecret) {
		t.Errorf("a secret is in the output:\n%s%s", out, errOut)
	}
}

func TestConfigCheckTypo(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, `{"mcpServers": {"local": {"command": "srv", "evn": {"A": "1"}}}}`)
	out, errOut, code := runSkillfs(t, nil, "config", "check", cfg)
	want := cfg + `: mcpServers.local.evn: unknown key "evn"; did you mean "env"?`
	if code != 2 || !strings.Contains(out, want) {
		t.Errorf("exit %d, want 2 and %q in\nstdout:\n%s\nstderr:\n%s", code, want, out, errOut)
	}
}

func TestConfigTypoRefusedByMount(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	writeFile(t, cfg, `{"mcpServers": {"local": {"command": "srv", "evn": {"A": "1"}}}}`)
	mnt := filepath.Join(dir, "mnt")
	out, errOut, code := runSkillfs(t, nil, "mount", "--config", cfg, "--cache-dir", filepath.Join(dir, "cache"), mnt)
	want := `mcpServers.local.evn: unknown key "evn"; did you mean "env"?`
	if code != 2 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, want 2 and %q in\nstdout:\n%s\nstderr:\n%s", code, want, out, errOut)
	}
	if isMounted(mnt) {
		t.Errorf("%s is mounted", mnt)
	}
}
