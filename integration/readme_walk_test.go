//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWalkReadmeRunItEveryDay walks README's "Run it every day" from a
// fresh home, with README's own config (the example under "skillfs mount")
// and its secret in the EnvironmentFile as the section's systemd lines make
// it: the shell lines of the section run as written (`mkdir`, `cp` of the
// unit from this checkout, `install -m 0600`, `echo 'ACME_TOKEN=…' >>`,
// then `skillfs mount --daemon`, `status`, `reload`, `unmount`), with the
// binary where `go install` puts it (~/go/bin, on the unit's PATH).
// systemd itself is not started: the daemon gets the environment a user
// service of the copied unit gets — its Environment=PATH (%h expanded)
// and the EnvironmentFile parsed as systemd parses one (VAR=value lines,
// # and ; comments, blank lines, surrounding quotes removed). Only the
// server that needs the network is replaced: acme's URL points at a local
// `skillfs serve --http` behind a proxy that answers 401 unless the
// request carries "Bearer " and the token from the env file. /home/me in
// README is the test's home.
func TestWalkReadmeRunItEveryDay(t *testing.T) {
	t.Parallel()
	root := moduleRoot()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	mountSection := readmeSection(t, string(readme), "### `skillfs mount [flags] MOUNTPOINT`")
	everyDay := readmeSection(t, string(readme), "### Run it every day")
	config := readmeBlocks(mountSection, "json")[0]
	shBlocks := readmeBlocks(everyDay, "sh")
	if len(shBlocks) < 2 {
		t.Fatalf("Run it every day has %d sh blocks, want the daemon's and systemd's", len(shBlocks))
	}
	daemonBlock, systemdBlock := shBlocks[0], shBlocks[1]

	home := t.TempDir()
	// `go install ./cmd/skillfs` put the binary in ~/go/bin.
	bin := filepath.Join(home, "go", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	placeExecutable(t, skillfsBin, filepath.Join(bin, "skillfs"))
	runtimeDir := filepath.Join(home, "run")
	if err := os.MkdirAll(runtimeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	const token = "walk-token-7f3a"

	// The systemd lines that set up files, run from the checkout as
	// README says; systemctl, journalctl and loginctl are systemd's.
	setup := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	for _, line := range readmeCommands(systemdBlock) {
		if strings.HasPrefix(line, "systemctl ") || strings.HasPrefix(line, "journalctl ") || strings.HasPrefix(line, "loginctl ") {
			continue
		}
		line = strings.Replace(line, "ACME_TOKEN=…", "ACME_TOKEN="+token, 1)
		if out, code := shell(t, setup, root, line); code != 0 {
			t.Fatalf("README's %q: exit %d\n%s", line, code, out)
		}
	}
	unit, err := os.ReadFile(filepath.Join(home, ".config", "systemd", "user", "skillfs@.service"))
	if err != nil {
		t.Fatalf("the unit README copies: %v", err)
	}
	envFile, unitPath := "", ""
	for _, line := range strings.Split(string(unit), "\n") {
		if v, ok := strings.CutPrefix(line, "EnvironmentFile="); ok {
			envFile = strings.ReplaceAll(strings.TrimPrefix(v, "-"), "%h", home)
		}
		if v, ok := strings.CutPrefix(line, "Environment=PATH="); ok {
			unitPath = strings.ReplaceAll(v, "%h", home)
		}
	}
	if envFile != filepath.Join(home, ".config", "skillfs", "env") || unitPath == "" {
		t.Fatalf("the unit's EnvironmentFile %q and PATH %q", envFile, unitPath)
	}
	if fi, err := os.Stat(envFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the env file README makes: %v, mode %v; README says 0600", err, fi.Mode())
	}
	// A user service's environment: what the manager sets, the unit's PATH,
	// then the env file.
	env := []string{"HOME=" + home, "USER=" + os.Getenv("USER"), "XDG_RUNTIME_DIR=" + runtimeDir, "PATH=" + unitPath}
	vars := systemdEnvironmentFile(t, envFile)
	if vars["ACME_TOKEN"] != token {
		t.Fatalf("ACME_TOKEN from the env file: %q, want %q (%v)", vars["ACME_TOKEN"], token, vars)
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}

	// README's config, in the default place, /home/me being this home;
	// acme, on the network in README, is served here.
	skills := filepath.Join(home, "skills")
	writeTree(t, skills, map[string]string{"notes/SKILL.md": skillMD("notes", "Take notes the team's way", "Write them down.\n")})
	acmeDir := t.TempDir()
	const refunds = "---\nname: refunds\ndescription: How Acme refunds an invoice\n---\nRefund within 30 days.\n"
	writeTree(t, acmeDir, map[string]string{"billing/refunds/SKILL.md": refunds})
	acme := serveHTTP(t, acmeDir)
	target, err := url.Parse(acme.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	proxy.FlushInterval = -1
	proxy.ErrorLog = log.New(io.Discard, "", 0) // the event stream cut at unmount
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "no or wrong token", http.StatusUnauthorized)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(gate.Close)
	acmeURL := gate.URL + target.RequestURI()
	if !strings.Contains(config, `"https://mcp.acme.example/mcp"`) || !strings.Contains(config, "/home/me/skills") {
		t.Fatalf("README's config is not the one this walk knows:\n%s", config)
	}
	config = strings.ReplaceAll(config, "/home/me", home)
	config = strings.Replace(config, "https://mcp.acme.example/mcp", acmeURL, 1)
	writeTree(t, filepath.Join(home, ".config", "skillfs"), map[string]string{"config.json": config})

	// The daemon block, line by line.
	lines := readmeCommands(daemonBlock)
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "skillfs mount --daemon ") || lines[1] != "skillfs status" ||
		lines[2] != "skillfs reload" || !strings.HasPrefix(lines[3], "skillfs unmount ") {
		t.Fatalf("Run it every day's commands are not mount --daemon, status, reload, unmount: %q", lines)
	}
	mnt := filepath.Join(home, ".cache", "mcp-skills")
	pid := 0
	cleanupDaemon(t, mnt, &pid, func() { shell(t, env, home, "skillfs unmount ~/.cache/mcp-skills") })
	out, code := shell(t, env, home, lines[0])
	if m := regexpPid.FindStringSubmatch(out); m != nil {
		pid, _ = strconv.Atoi(m[1])
	}
	if code == 3 {
		t.Skipf("FUSE cannot be mounted here: %s", out)
	}
	if code != 0 || pid == 0 {
		t.Fatalf("%s: exit %d\n%s", lines[0], code, out)
	}
	// What README shows it prints, /home/me being this home and the
	// counts and the file name this machine's.
	for _, want := range readmeOutput(daemonBlock) {
		re := regexp.QuoteMeta(strings.ReplaceAll(want, "/home/me", home))
		re = regexp.MustCompile(`\d+`).ReplaceAllString(re, `\d+`)
		re = strings.Replace(re, `home-me-\.cache-mcp-skills-\d+a\d+\.log`, `[A-Za-z0-9._-]+\.log`, 1)
		if !regexp.MustCompile("(?m)^" + re + "$").MatchString(out) {
			t.Errorf("%s printed no line like README's %q:\n%s", lines[0], want, out)
		}
	}
	logFile := regexp.MustCompile(`; log (\S+\.log);`).FindStringSubmatch(out)
	if logFile == nil {
		t.Fatalf("no log path in %q", out)
	}
	pidFile := strings.TrimSuffix(logFile[1], ".log") + ".pid"
	if b, err := os.ReadFile(pidFile); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(pid) {
		t.Errorf("pid file %s: %v %q, want %d", pidFile, err, b, pid)
	}
	logs := func() string { b, _ := os.ReadFile(logFile[1]); return string(b) }

	// Both servers connect — acme only with the token the env file gave.
	waitFor(t, 2*time.Minute, "local and acme to be connected", func() bool {
		st := status(t, env)
		n := 0
		for _, s := range st.Servers {
			if (s.Label == "local" || s.Label == "acme") && s.State == "connected" && s.Available > 0 {
				n++
			}
		}
		return n == 2
	})
	if b, err := os.ReadFile(filepath.Join(mnt, "acme", "billing", "refunds", "SKILL.md")); err != nil || string(b) != refunds {
		t.Errorf("acme's pinned skill through the mount: %v %q", err, b)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "local", "notes", "SKILL.md")); err != nil || !strings.Contains(string(b), "Write them down.") {
		t.Errorf("local's skill through the mount: %v %q", err, b)
	}

	out, code = shell(t, env, home, lines[1])
	if code != 0 || !regexpLine(out, `^acme\s+connected\s`) || !regexpLine(out, `^local\s+connected\s`) {
		t.Errorf("%s: exit %d\n%s", lines[1], code, out)
	}

	// After editing the config: a second folder served as "docs".
	docs := filepath.Join(home, "docs-skills")
	writeTree(t, docs, map[string]string{"style/SKILL.md": skillMD("style", "The house style", "Short sentences.\n")})
	var cfg map[string]any
	if err := json.Unmarshal([]byte(config), &cfg); err != nil {
		t.Fatalf("README's config: %v", err)
	}
	cfg["mcpServers"].(map[string]any)["docs"] = map[string]any{"command": "skillfs", "args": []string{"serve", docs}}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	writeTree(t, filepath.Join(home, ".config", "skillfs"), map[string]string{"config.json": string(b)})
	out, code = shell(t, env, home, lines[2])
	if code != 0 || !regexpLine(out, `^added\s+docs$`) {
		t.Errorf("%s: exit %d\n%s", lines[2], code, out)
	}
	waitFor(t, 2*time.Minute, "docs's skill in the mount", func() bool {
		_, err := os.Stat(filepath.Join(mnt, "docs", "style", "SKILL.md"))
		return err == nil
	})

	out, code = shell(t, env, home, lines[3])
	if code != 0 {
		t.Errorf("%s: exit %d\n%s", lines[3], code, out)
	}
	waitFor(t, 2*time.Minute, "the daemon to exit", func() bool { return syscall.Kill(pid, 0) != nil })
	if isMounted(mnt) {
		t.Errorf("%s is still mounted after %s", mnt, lines[3])
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("the pid file after unmount: %v, want it removed", err)
	}
	if strings.Contains(logs(), token) {
		t.Errorf("the log holds the token from the env file")
	}
	if t.Failed() {
		t.Logf("the daemon's log:\n%s", logs())
	}
}

// readmeSection is the text under heading, up to the next heading of the
// same or a higher level.
func readmeSection(t *testing.T, readme, heading string) string {
	t.Helper()
	i := strings.Index(readme, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README has no %q section", heading)
	}
	rest := readme[i+len(heading)+2:]
	level := strings.Index(heading, " ")
	for _, l := range []string{"\n## ", "\n### "}[:level-1] {
		if j := strings.Index(rest, l); j >= 0 {
			rest = rest[:j]
		}
	}
	return rest
}

// readmeBlocks are the section's fenced code blocks of one language.
func readmeBlocks(section, lang string) []string {
	var out []string
	re := regexp.MustCompile("(?s)\n```" + lang + "\n(.*?)\n```")
	for _, m := range re.FindAllStringSubmatch(section, -1) {
		out = append(out, m[1])
	}
	return out
}

// readmeCommands are a sh block's commands, without their comments.
func readmeCommands(block string) []string {
	var out []string
	for _, line := range strings.Split(block, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.Index(line, " # "); i >= 0 {
			line = line[:i]
		}
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// readmeOutput are the lines a sh block shows as output: its comment
// lines that start with "# skillfs:".
func readmeOutput(block string) []string {
	var out []string
	for _, line := range strings.Split(block, "\n") {
		if v, ok := strings.CutPrefix(line, "# "); ok && strings.HasPrefix(v, "skillfs:") {
			out = append(out, v)
		}
	}
	return out
}

// shell runs a README line with sh, as a user's shell would (~ expanded
// from HOME), and returns its combined output and exit code.
func shell(t *testing.T, env []string, dir, line string) (string, int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", line)
	cmd.Env, cmd.Dir = env, dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), exitCode(err)
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%q hung", line)
	}
	return "", -1
}

// systemdEnvironmentFile reads an EnvironmentFile= as systemd does for
// these lines: VAR=value a line, leading and trailing blanks ignored, lines
// starting with # or ; and blank ones skipped, a value in matching single
// or double quotes unquoted. (systemd also joins lines ending in a
// backslash and unescapes inside double quotes; README's file needs
// neither.)
func systemdEnvironmentFile(t *testing.T, name string) map[string]string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Errorf("%s: %q is not VAR=value; systemd ignores it", name, line)
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		vars[k] = v
	}
	return vars
}
