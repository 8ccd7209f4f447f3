//go:build linux

package integration

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/integration/hostile"
	"github.com/skillfs/skillfs/internal/skill"
)

// mcpSession starts `skillfs mcp ARGS` as a host would (a subprocess on
// stdio) and connects to it; the session is closed, and the process
// waited for, in t.Cleanup, which also checks that it exited 0.
func mcpSession(t *testing.T, args ...string) (*mcp.ClientSession, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	cmd := exec.Command(skillfsBin, append([]string{"mcp"}, args...)...)
	cmd.Stderr = logs
	c := mcp.NewClient(&mcp.Implementation{Name: "skillfs-test", Version: "1"}, nil)
	if err := mcp.AddSendingCustomMethod[*mcpListParams, *mcpListResult](c, skill.MethodList); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddSendingCustomMethod[*mcpReadDirParams, *mcpReadDirResult](c, skill.MethodReadDir); err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		if cmd.Process != nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		t.Fatalf("skillfs mcp: %v\n%s", err, logs.String())
	}
	t.Cleanup(func() {
		cs.Close()
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if !cmd.ProcessState.Success() {
			t.Errorf("skillfs mcp exited %v\n%s", cmd.ProcessState, logs.String())
		}
	})
	return cs, logs
}

// callTool calls a tool and returns its text, content items joined by
// "\x00", and whether it was a tool error.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	var parts []string
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("%s %v: content %T, want text", name, args, c)
		}
		parts = append(parts, tc.Text)
	}
	return strings.Join(parts, "\x00"), res.IsError
}

// checkMCPTree is what both modes must show of functionalConfig's servers.
func checkMCPTree(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ins := cs.InitializeResult().Instructions
	for _, entry := range []string{
		"<server>local</server>\n<name>alpha</name>\n<description>The first skill</description>\n<location>local/alpha/SKILL.md</location>",
		"<server>local</server>\n<name>beta</name>\n<description>A nested skill</description>\n<location>local/team/beta/SKILL.md</location>",
		"<server>evil</server>\n<name>" + hostile.HonestA + "</name>",
		"<location>evil/" + hostile.HonestA + "/SKILL.md</location>",
	} {
		if !strings.Contains(ins, entry) {
			t.Errorf("the instructions do not name %s:\n%s", entry, ins)
		}
	}
	if strings.Contains(ins, hostile.NameMismatch+"/") {
		t.Errorf("the instructions name the rejected skill %s:\n%s", hostile.NameMismatch, ins)
	}
	if !strings.Contains(ins, "read_skill_file") {
		t.Errorf("the instructions do not say which tool reads a skill:\n%s", ins)
	}

	got, isErr := callTool(t, cs, "list_skill_files", map[string]any{"path": "local/alpha"})
	want := "\"local/alpha\": 3 entries\nSKILL.md (" + strconv.Itoa(len(functionalFiles["alpha/SKILL.md"])) + " bytes)\nrefs/\nscripts/\n"
	if isErr || got != want {
		t.Errorf("list local/alpha: %q (isError %v), want %q", got, isErr, want)
	}
	for _, f := range []string{"alpha/SKILL.md", "alpha/scripts/run.sh", "team/beta/other.txt"} {
		got, isErr := callTool(t, cs, "read_skill_file", map[string]any{"path": "local/" + f})
		if isErr || got != functionalFiles[f] {
			t.Errorf("read local/%s: %q (isError %v), want its bytes %q", f, got, isErr, functionalFiles[f])
		}
	}
	for _, tc := range []struct{ path, want string }{
		{"nobody/x/SKILL.md", "no such file or directory"},
		{"local/alpha/missing.md", "no such file or directory"},
		{"evil/" + hostile.NameMismatch + "/SKILL.md", "no such file or directory"},
		{"../etc/passwd", `has a ".." name`},
		{"/etc/passwd", "is absolute"},
		{"local/alpha", "is a directory"},
		// The server's bytes do not match the digest it listed.
		{"evil/digest-mismatch/payload.txt", "read failed"},
	} {
		got, isErr := callTool(t, cs, "read_skill_file", map[string]any{"path": tc.path})
		if !isErr || !strings.Contains(got, tc.want) {
			t.Errorf("read %s: %q (isError %v), want a tool error saying %q", tc.path, got, isErr, tc.want)
		}
	}
}

// TestMCPStandalone: with no mount anywhere, `skillfs mcp` connects to the
// servers itself and serves only verified bytes.
func TestMCPStandalone(t *testing.T) {
	t.Parallel()
	cfg := functionalConfig(t)
	cs, logs := mcpSession(t, "--config", cfg, "--cache-dir", filepath.Join(t.TempDir(), "cache"), "--startup-timeout", "10m")
	checkMCPTree(t, cs)
	got, _ := callTool(t, cs, "read_skill_file", map[string]any{"path": "evil/digest-mismatch/payload.txt"})
	if !strings.Contains(got, "digest-mismatch") {
		t.Errorf("the tampered file's error does not name the reason: %q", got)
	}
	if strings.Contains(logs.String(), "attached") {
		t.Errorf("attached with no mount running:\n%s", logs.String())
	}
	checkMCPSkills(t, cs)
}

type mcpListParams struct {
	mcp.ParamsBase
	skill.ListParams
}

type mcpListResult struct {
	mcp.ResultBase
	skill.ListResult[json.RawMessage]
}

type mcpReadDirParams struct {
	mcp.ParamsBase
	skill.ReadDirParams
}

type mcpReadDirResult struct {
	mcp.ResultBase
	skill.ReadDirResult[skill.DirChild]
}

// walkMCPDirs walks resources/directory/read from uri down and returns
// every file it names, with its size.
func walkMCPDirs(t *testing.T, cs *mcp.ClientSession, uri string, files map[string]int64) {
	t.Helper()
	cursor := ""
	for {
		res, err := mcp.CallCustomMethod[*mcpReadDirParams, *mcpReadDirResult](t.Context(), cs, skill.MethodReadDir,
			&mcpReadDirParams{ReadDirParams: skill.ReadDirParams{URI: uri, Cursor: cursor}})
		if err != nil {
			t.Fatalf("directory read %s: %v", uri, err)
		}
		for _, c := range res.Resources {
			if !strings.HasPrefix(c.URI, uri+"/") {
				t.Errorf("directory read %s names %s, outside it", uri, c.URI)
				continue
			}
			if c.MIMEType == skill.MIMEDirectory {
				walkMCPDirs(t, cs, c.URI, files)
			} else {
				files[c.URI] = c.Size
			}
		}
		if cursor = res.NextCursor; cursor == "" {
			return
		}
	}
}

// checkMCPSkills checks the SEP-2640 face: skills/list names exactly the
// skills the mount shows, under skill://LABEL/, with the origin's sizes
// and digests; resources/read returns verified bytes and refuses the
// tampered file.
func checkMCPSkills(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	if _, ok := cs.InitializeResult().Capabilities.Extensions[skill.ExtensionID]; !ok {
		t.Fatalf("skillfs mcp does not declare the skills extension")
	}
	res, err := mcp.CallCustomMethod[*mcpListParams, *mcpListResult](t.Context(), cs, skill.MethodList, &mcpListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	sizes := map[string]int64{}
	for _, raw := range res.Skills {
		var e struct {
			URI       string `json:"uri"`
			Resources []struct {
				URI    string `json:"uri"`
				Digest string `json:"digest"`
				Size   int64  `json:"size"`
			} `json:"resources"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		uris = append(uris, e.URI)
		for _, r := range e.Resources {
			sizes[r.URI] = r.Size
			if !strings.HasPrefix(r.Digest, "sha256:") {
				t.Errorf("%s: digest %q", r.URI, r.Digest)
			}
		}
	}
	slices.Sort(uris)
	// A client walking the directories finds exactly the listed files.
	walked := map[string]int64{}
	walkMCPDirs(t, cs, "skill://local", walked)
	walkMCPDirs(t, cs, "skill://evil", walked)
	if !maps.Equal(walked, sizes) {
		t.Errorf("the directory reads name\n%v\nskills/list names\n%v", walked, sizes)
	}
	want := []string{"skill://evil/digest-mismatch/SKILL.md", "skill://evil/" + hostile.HonestA + "/SKILL.md", "skill://evil/" + hostile.HonestB + "/SKILL.md",
		"skill://evil/size-shorter/SKILL.md", "skill://local/alpha/SKILL.md", "skill://local/team/beta/SKILL.md"}
	if !slices.Equal(uris, want) {
		t.Errorf("skills/list: %q\nwant %q", uris, want)
	}
	if got := sizes["skill://local/alpha/scripts/run.sh"]; got != int64(len(functionalFiles["alpha/scripts/run.sh"])) {
		t.Errorf("the size of run.sh in skills/list: %d", got)
	}
	rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://local/alpha/SKILL.md"})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != functionalFiles["alpha/SKILL.md"] {
		t.Errorf("resources/read SKILL.md: %v %+v", err, rr)
	}
	if rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://evil/digest-mismatch/payload.txt"}); err == nil || !strings.Contains(err.Error(), "digest-mismatch") {
		t.Errorf("resources/read of the tampered file: %v %+v, want an error naming digest-mismatch", err, rr)
	}
}

// TestMCPAttachesToTheMount: with a mount of the same config running,
// `skillfs mcp` reads through it: the servers see no second session.
func TestMCPAttachesToTheMount(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, functionalFiles)
	access := filepath.Join(t.TempDir(), "access.log")
	cfg := writeConfig(t, map[string]any{
		"local": stdioServe(dir, access),
		"evil": hostileStdio(t, hostile.Options{Fixtures: []string{
			hostile.HonestA, hostile.DigestMismatch, hostile.SizeShorter, hostile.NameMismatch,
		}}),
	}, nil)
	m := startMount(t, cfg)
	m.warnings = true // the hostile server's files are logged
	cs, logs := mcpSession(t, "--config", cfg, "--cache-dir", m.Cache)
	checkMCPTree(t, cs)
	if !strings.Contains(logs.String(), "attached to the running mount") {
		t.Errorf("did not attach to the mount at %s:\n%s", m.Dir, logs.String())
	}
	b, err := os.ReadFile(access)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "skills/list\n"); n != 1 {
		t.Errorf("the server saw %d sessions, want the mount's one:\n%s", n, b)
	}
	checkMCPSkills(t, cs)
	// With --attach never it runs the servers itself, from the same cache.
	cs2, logs2 := mcpSession(t, "--config", cfg, "--cache-dir", m.Cache, "--attach", "never", "--startup-timeout", "10m")
	if got, isErr := callTool(t, cs2, "read_skill_file", map[string]any{"path": "local/alpha/SKILL.md"}); isErr || got != functionalFiles["alpha/SKILL.md"] {
		t.Errorf("--attach never: %q (isError %v)", got, isErr)
	}
	if strings.Contains(logs2.String(), "attached") {
		t.Errorf("--attach never attached:\n%s", logs2.String())
	}
}

// TestInspectorVerifiesMCP: MCP Inspector 2.12.0's `--verify` against
// `skillfs mcp` (no mount), in both protocol eras, over the generated
// corpus served by `skillfs serve`: every skill the mount would show is
// reported verified under skill://team/, with every file, and no
// conformance or frontmatter finding; then the same with a mount of that
// config running, which skillfs mcp attaches to.
func TestInspectorVerifiesMCP(t *testing.T) {
	t.Parallel()
	node, cli := inspectorCLI(t)
	gen := t.TempDir()
	genTree(t, gen, "team")
	cfg := writeConfig(t, map[string]any{"team": stdioServe(gen, os.DevNull)}, nil)
	target := []string{"--", skillfsBin, "mcp", "--config", cfg, "--cache-dir", filepath.Join(t.TempDir(), "cache"), "--startup-timeout", "10m"}
	skills := []string{"skill://team/alpha/SKILL.md", "skill://team/only-team/SKILL.md", "skill://team/shared/refunds/SKILL.md",
		"skill://team/team/beta/SKILL.md", "skill://team/team/beta/gamma/SKILL.md"}
	for _, era := range []string{"legacy", "modern"} {
		verifyWithInspector(t, node, cli, era, target, skills)
		// The Inspector's directory read, decoded by its own schema.
		var got []string
		for _, c := range inspectorReadDir(t, node, cli, era, "skill://team/alpha", target) {
			got = append(got, c.Name+" "+c.MIMEType)
		}
		if want := []string{"SKILL.md text/markdown", "refs inode/directory", "scripts inode/directory"}; !slices.Equal(got, want) {
			t.Errorf("inspector (%s) directory read of skill://team/alpha: %q, want %q", era, got, want)
		}
	}

	// With a mount of the same config running, attached to it: the same
	// skills, verified the same. The Inspector starts the server with a
	// few variables of its own environment; XDG_RUNTIME_DIR is where the
	// mount's control socket is.
	m := startMount(t, cfg)
	logFile := filepath.Join(t.TempDir(), "mcp.log")
	target = []string{"-e", "XDG_RUNTIME_DIR=" + os.Getenv("XDG_RUNTIME_DIR"), "--", skillfsBin, "mcp", "--config", cfg, "--cache-dir", m.Cache, "--log-file", logFile}
	for _, era := range []string{"legacy", "modern"} {
		verifyWithInspector(t, node, cli, era, target, skills)
	}
	if b, _ := os.ReadFile(logFile); !strings.Contains(string(b), "attached to the running mount") {
		t.Errorf("skillfs mcp did not attach to the mount at %s:\n%s", m.Dir, b)
	}
}

// TestMCPHostileInput attacks skillfs mcp (standalone) with real hostile
// servers: a description and folder name made to steer or hide (Markdown,
// line breaks, bidi, zero-width), one made to act on a terminal, a read
// error made of escapes, and two servers serving the same URIs. The
// instructions and every listing and error carry them as visible text
// (<U+…>), never raw; each server's files stay under its own label, in
// the tools and in skills/list; and a configured env value reaches no
// answer. A SKILL.md's own bytes come back exact, escapes and all, as cat
// shows them through the mount.
func TestMCPHostileInput(t *testing.T) {
	t.Parallel()
	const secret = "sk-live-Zq8mcp-secret-value"
	steer := hostileStdio(t, hostile.Options{Fixtures: []string{hostile.MarkdownSteering}})
	steer["env"].(map[string]string)["SKILLFS_TEST_TOKEN"] = secret
	cfg := writeConfig(t, map[string]any{
		"steer": steer,
		"esc":   hostileStdio(t, hostile.Options{Fixtures: []string{}, Mode: hostile.ModeTerminalEscapes}),
		"x":     hostileStdio(t, hostile.Options{Fixtures: []string{hostile.SameURIOtherOrigin}, Variant: "x"}),
		"y":     hostileStdio(t, hostile.Options{Fixtures: []string{hostile.SameURIOtherOrigin}, Variant: "y"}),
	}, nil)
	cs, logs := mcpSession(t, "--config", cfg, "--cache-dir", filepath.Join(t.TempDir(), "cache"), "--startup-timeout", "10m")
	var answers []string // everything the server said, for the secret
	inert := func(what, out string) {
		t.Helper()
		answers = append(answers, out)
		if bad := rawControl(out); bad != "" {
			t.Errorf("%s carries a raw control character: %s", what, bad)
		}
	}

	ins := cs.InitializeResult().Instructions
	inert("the instructions", ins)
	// Shown as text (<U+202E>), then XML-escaped as the catalog's
	// elements are.
	if !strings.Contains(ins, "&lt;U+202E&gt;evil&lt;U+202C&gt;") || !strings.Contains(ins, "&lt;U+001B&gt;[31mred") {
		t.Errorf("the instructions do not show the hostile descriptions as text:\n%s", ins)
	}
	// Each entry is one <skill> element: a description cannot open another.
	if n, want := strings.Count(ins, "\n<skill>\n"), strings.Count(ins, "<server>"); n != want || n < 6 {
		t.Errorf("%d <skill> elements, %d <server> lines:\n%s", n, want, ins)
	}
	for _, line := range strings.Split(ins, "\n") {
		if strings.HasPrefix(line, "<server>") && !slices.Contains([]string{"steer", "esc", "x", "y"}, strings.TrimSuffix(strings.TrimPrefix(line, "<server>"), "</server>")) {
			t.Errorf("an entry names a server that is not configured: %q", line)
		}
	}

	// Listings name the steering folder escaped; the walk finds it.
	got, isErr := callTool(t, cs, "list_skill_files", map[string]any{"path": "steer/markdown-steering"})
	inert("list steer/markdown-steering", got)
	if isErr || !strings.Contains(got, `\u200d\u00ady"/`) {
		t.Errorf("list steer/markdown-steering: %q (isError %v), want the folder named with its hidden characters visible", got, isErr)
	}
	// A read error made of escapes arrives as text.
	got, isErr = callTool(t, cs, "read_skill_file", map[string]any{"path": "esc/" + hostile.EscapesUnreadable + "/SKILL.md"})
	inert("the escapes-unreadable read error", got)
	if !isErr || !strings.Contains(got, "<U+001B>") {
		t.Errorf("read of escapes-unreadable: %q (isError %v), want a tool error showing the server's escapes", got, isErr)
	}
	// The SKILL.md's own bytes, exact.
	if got, isErr := callTool(t, cs, "read_skill_file", map[string]any{"path": "esc/" + hostile.EscapesSkill + "/SKILL.md"}); isErr || got != hostile.EscapesSkillMD {
		t.Errorf("read of %s: %q (isError %v), want its exact bytes", hostile.EscapesSkill, got, isErr)
	}

	// Two servers, the same URIs: each label serves its own server's file.
	for _, label := range []string{"x", "y"} {
		got, isErr := callTool(t, cs, "read_skill_file", map[string]any{"path": label + "/shared/notes.md"})
		answers = append(answers, got)
		if isErr || !strings.Contains(got, "the "+label+" variant") {
			t.Errorf("%s/shared/notes.md: %q (isError %v), want the %s server's", label, got, isErr, label)
		}
		rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://" + label + "/shared/notes.md"})
		if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "the "+label+" variant") {
			t.Errorf("resources/read skill://%s/shared/notes.md: %v %+v", label, err, rr)
		}
	}
	res, err := mcp.CallCustomMethod[*mcpListParams, *mcpListResult](t.Context(), cs, skill.MethodList, &mcpListParams{})
	if err != nil {
		t.Fatal(err)
	}
	digests := map[string]string{}
	for _, raw := range res.Skills {
		answers = append(answers, string(raw))
		var e struct {
			URI       string `json:"uri"`
			Resources []struct{ URI, Digest string }
		}
		json.Unmarshal(raw, &e)
		label := strings.SplitN(strings.TrimPrefix(e.URI, "skill://"), "/", 2)[0]
		for _, r := range e.Resources {
			if !strings.HasPrefix(r.URI, "skill://"+label+"/") {
				t.Errorf("skills/list: %s lists %s, outside its label", e.URI, r.URI)
			}
			digests[r.URI] = r.Digest
		}
	}
	if x, y := digests["skill://x/shared/notes.md"], digests["skill://y/shared/notes.md"]; x == "" || x == y {
		t.Errorf("the two servers' notes.md in skills/list: %q and %q, want each its own digest", x, y)
	}
	for _, a := range append(answers, logs.String()) {
		if strings.Contains(a, secret) {
			t.Errorf("a configured env value reached an answer or the log: …%s…", a[max(0, strings.Index(a, secret)-80):strings.Index(a, secret)+len(secret)])
		}
	}
}
