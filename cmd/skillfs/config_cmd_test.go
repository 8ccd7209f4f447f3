package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillfs/skillfs/internal/exitcode"
)

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CHECK_SECRET", "hunter2")
	good := filepath.Join(dir, "good.json")
	os.WriteFile(filepath.Join(dir, ".env"), []byte("FROM_FILE=hunter2\n"), 0o600)
	os.WriteFile(good, []byte(`{"mcpServers": {
		"local": {"command": "sh", "args": ["a b"], "env": {"T": "${CHECK_SECRET}"}, "envFile": ".env"},
		"acme": {"url": "https://u:${CHECK_SECRET}@h/mcp?k=${CHECK_SECRET}", "headers": {"Authorization": "Bearer ${CHECK_SECRET}"}}}}`), 0o600)
	var out bytes.Buffer
	if err := runConfigCheck(&out, []string{good}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"2 server(s)", `sh "a b"`, "env FROM_FILE=***", "env T=***", "https://***@h/mcp?k=***", "header Authorization: ***", "no problems"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "hunter2") {
		t.Errorf("a secret is in the output:\n%s", out.String())
	}

	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"mcpServers": {"local": {"command": "x", "evn": {}}}}`), 0o600)
	out.Reset()
	err := runConfigCheck(&out, []string{bad})
	if exitcode.Of(err) != exitUsage || !strings.Contains(out.String(), `mcpServers.local.evn: unknown key "evn"; did you mean "env"?`) {
		t.Errorf("exit %d (%v)\n%s", exitcode.Of(err), err, out.String())
	}
}
