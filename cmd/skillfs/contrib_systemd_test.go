package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const systemdUnit = "../../contrib/systemd/skillfs@.service"

// unitKeys reads a systemd unit file into section → key → values.
func unitKeys(t *testing.T, path string) map[string]map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := map[string]map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			keys[section] = map[string][]string{}
		case section != "" && strings.Contains(line, "="):
			k, v, _ := strings.Cut(line, "=")
			keys[section][strings.TrimSpace(k)] = append(keys[section][strings.TrimSpace(k)], strings.TrimSpace(v))
		default:
			t.Fatalf("%s:%d: not a section or a key=value line: %q", path, n, line)
		}
	}
	return keys
}

// TestSystemdUnitRunsTheReadmeConfig: the example user unit runs the mount
// in the foreground with a command line this skillfs accepts, reads the
// config's ${VAR} secrets from an EnvironmentFile, gives stdio servers
// started with npx a PATH, and does not order on network-online.target
// (which a user manager never reaches).
func TestSystemdUnitRunsTheReadmeConfig(t *testing.T) {
	u := unitKeys(t, systemdUnit)
	svc := u["Service"]
	exec1 := svc["ExecStart"]
	if len(exec1) != 1 {
		t.Fatalf("ExecStart: %q, want one", exec1)
	}
	args := strings.Fields(exec1[0])
	if len(args) < 3 || filepath.Base(args[0]) != "skillfs" || args[1] != "mount" || slices.Contains(args, "--daemon") {
		t.Fatalf("ExecStart %q: want skillfs mount … %%I in the foreground", exec1[0])
	}
	cmd := newMountCommand()
	if err := cmd.ParseFlags(args[2:]); err != nil {
		t.Fatalf("skillfs mount %q: %v", args[2:], err)
	}
	if err := cmd.Args(cmd, cmd.Flags().Args()); err != nil {
		t.Errorf("skillfs mount %q: %v", args[2:], err)
	}
	if got := svc["Type"]; !slices.Equal(got, []string{"notify"}) {
		t.Errorf("Type=%q, want notify (the mount sends READY=1)", got)
	}
	if ef := svc["EnvironmentFile"]; len(ef) != 1 || !strings.HasPrefix(ef[0], "-%h/") {
		t.Errorf("EnvironmentFile=%q, want one optional file under the home directory", ef)
	}
	path := ""
	for _, e := range svc["Environment"] {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			path = v
		}
	}
	dirs := strings.Split(path, ":")
	for _, want := range []string{"/usr/local/bin", "/usr/bin", "/bin"} {
		if !slices.Contains(dirs, want) {
			t.Errorf("Environment=PATH=%q lacks %s (npx, node)", path, want)
		}
	}
	for _, sec := range []string{"Unit", "Install"} {
		for k, vs := range u[sec] {
			for _, v := range vs {
				if strings.Contains(v, "network-online.target") {
					t.Errorf("[%s] %s=%s: a user unit never reaches network-online.target", sec, k, v)
				}
			}
		}
	}
	if got := u["Install"]["WantedBy"]; !slices.Equal(got, []string{"default.target"}) {
		t.Errorf("WantedBy=%q, want default.target (the user manager's)", got)
	}
}

// TestSystemdUnitVerifies: systemd itself finds nothing wrong with the
// unit (no unknown key, no bad value), where systemd-analyze is installed.
func TestSystemdUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	// %h is the HOME given here; ExecStart must name an executable there.
	home := t.TempDir()
	bin := filepath.Join(home, "go", "bin", "skillfs")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(systemdUnit)
	if err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(t.TempDir(), "skillfs@home-me-.cache-mcp\\x2dskills.service")
	if err := os.WriteFile(unit, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(analyze, "verify", unit)
	cmd.Env = append(os.Environ(), "HOME="+home)
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "Failed to initialize manager") || strings.Contains(string(out), "Failed to lookup RuntimeDirectory") {
		t.Skipf("systemd-analyze cannot run here: %s", out)
	}
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", systemdUnit, err, out)
	}
}
