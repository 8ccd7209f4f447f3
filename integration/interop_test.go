//go:build linux

package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Interop with the Working Group's TypeScript SDK for SEP-2640
// (@olaservo/ext-skills on the v2 MCP SDK), both ways: its reference server
// mounted by skillfs, and a host built on its client helpers reading from
// `skillfs serve`. The node project in testdata/interop pins every package
// by package-lock.json; `npm ci` installs it once per machine
// (installPinned).
//
// When the SDK is unavailable the tests skip, saying why: node or npm not
// on PATH, node older than 20, or `npm ci` failing while `npm ping` cannot
// reach the registry either (offline, with nothing cached). An `npm ci`
// that fails while the registry answers is a failure: the pins are wrong.
// The install and npm's cache live in testCache() ($SKILLFS_TEST_CACHE, or
// .cache next to go.mod: testkit gives the test process a fresh, empty
// XDG_CACHE_HOME), so a machine that ran the tests once can run them
// offline.

var interop struct {
	once sync.Once
	dir  string // the installed project
	skip string // why the tests cannot run here
	err  error  // why the install failed although the registry answers
}

// interopProject returns the directory of the installed node project.
func interopProject(t *testing.T) string {
	t.Helper()
	interop.once.Do(installInterop)
	if interop.skip != "" {
		t.Skip(interop.skip)
	}
	if interop.err != nil {
		t.Fatal(interop.err)
	}
	return interop.dir
}

func installInterop() {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			interop.skip = fmt.Sprintf("the WG TypeScript SDK interop test needs %s on PATH: %v", tool, err)
			return
		}
	}
	out, err := exec.Command("node", "-p", "process.versions.node.split('.')[0]").Output()
	if err != nil {
		interop.skip = fmt.Sprintf("node does not run: %v", err)
		return
	}
	var major int
	if _, err := fmt.Sscan(string(out), &major); err != nil || major < 20 {
		interop.skip = fmt.Sprintf("the WG TypeScript SDK needs node 20 or later; node here is %s", strings.TrimSpace(string(out)))
		return
	}
	// The scripts are installed with the pins, out of the source tree, so
	// that node_modules never lands in it.
	interop.dir, interop.skip, interop.err = installPinned("interop", "the WG TypeScript SDK", "package.json", "package-lock.json", "server.mjs", "client.mjs")
	if interop.skip != "" || interop.err != nil {
		return
	}
	// Each node run loads one bundled module rather than the SDK's tree.
	for _, script := range []string{"server.mjs", "client.mjs"} {
		if interop.err = bundle("node", interop.dir, script, interopScript(interop.dir, script)); interop.err != nil {
			return
		}
	}
}

// interopScript is the bundle of one of the project's scripts (bundle),
// which the tests run: the script and the SDK in one file.
func interopScript(project, script string) string {
	return filepath.Join(project, strings.TrimSuffix(script, ".mjs")+".bundle.mjs")
}

// An interopTree is the folder both servers serve.
type interopTree struct {
	dir     string
	files   map[string][]byte // every file a published skill holds, by slash path
	skills  []string          // URIs of the SKILL.md of every skill both publish
	refused []string          // URIs of skills both must leave out
	// wgUnreadable: files the WG server lists but cannot serve (see
	// TestInteropWGServerMounted).
	wgUnreadable []string
	// wgSkips: skills that conform, which skillfs serve publishes and the
	// WG server skips (see writeInteropTree).
	wgSkips []string
}

// writeInteropTree writes skills that exercise what a host meets: prefix
// paths, a nested skill, CRLF, non-ASCII text, every optional field of the
// Agent Skills specification, binary, empty and executable files, and one
// skill that breaks the specification (a description of 1025 characters),
// which both sides leave out.
func writeInteropTree(t *testing.T) *interopTree {
	t.Helper()
	rng := rand.New(rand.NewPCG(2640, 1))
	png := make([]byte, 5000)
	for i := range png {
		png[i] = byte(rng.IntN(256))
	}
	copy(png, "\x89PNG\r\n\x1a\n")
	files := map[string]string{
		"git-workflow/SKILL.md": "---\nname: git-workflow\ndescription: Follow the team's Git conventions for branches, commits and pull requests.\n" +
			"license: Apache-2.0\ncompatibility: Requires git 2.40 or later\nmetadata:\n  author: platform-team\n  version: \"1.2\"\n---\n" +
			"# Git workflow\n\nSee references/branching.md.\n\n---\n\nRun scripts/check-branch.sh first.\n",
		"git-workflow/references/branching.md": "# Branching\n\nfeature/<ticket>-<slug>\n",
		"git-workflow/scripts/check-branch.sh": "#!/bin/sh\ngit rev-parse --abbrev-ref HEAD\n",
		"acme/billing/refunds/SKILL.md": strings.ReplaceAll("---\nname: refunds\ndescription: \"Remboursements \u2014 politique d'entreprise, \u00e9tape par \u00e9tape \U0001F4B6\"\n---\n"+
			"# Refunds\r\n\r\nUse templates/email.md.\n", "\n", "\r\n"),
		"acme/billing/refunds/templates/email.md":        "Dear customer,\n\nYour refund of {{amount}} is on its way.\n",
		"acme/billing/refunds/assets/logo.png":           string(png),
		"acme/billing/refunds/data/rates.csv":            "region,rate\neu,0.2\nus,0.1\n",
		"acme/billing/refunds/partial-refunds/SKILL.md":  "---\nname: partial-refunds\ndescription: Partial refunds that need a supervisor.\nallowed-tools: Bash(refund-cli:*)\n---\nAsk a supervisor.\n",
		"acme/billing/refunds/partial-refunds/policy.md": "Up to 50% without approval.\n",
		"pdf-tools/SKILL.md":                             "---\nname: pdf-tools\ndescription: Extract text and tables from PDF documents.\nmetadata:\n  version: 2.1.0\n---\nUse notes/.\n",
		"pdf-tools/notes/empty.txt":                      "",
		"pdf-tools/notes/unicode-\u00fcml\u00e4ut.md":    "Gr\u00fc\u00dfe\n",
		"too-long/SKILL.md":                              "---\nname: too-long\ndescription: " + strings.Repeat("d", 1025) + "\n---\nbody\n",
		"too-long/ref.md":                                "never served\n",
		// 1024 characters (code points), 2048 UTF-16 units: within the
		// Agent Skills limit, which its reference validator (skills-ref)
		// counts in code points. The WG server (0.14.0) counts JavaScript
		// string length, UTF-16 units, and skips it: a divergence of
		// theirs, pinned here.
		"emoji/SKILL.md": "---\nname: emoji\ndescription: " + strings.Repeat("\U0001F600", 1024) + "\n---\nbody\n",
		// Scalars YAML 1.1 and 1.2 read differently, quoted and not, in
		// maps and lists: a YAML 1.2 server (the WG SDK) lists 0755 as
		// 755 and yes as "yes"; skillfs's check and serve read them so.
		"yaml-edges/SKILL.md": "---\nname: yaml-edges\ndescription: Frontmatter whose plain scalars YAML 1.1 and 1.2 read differently.\n" +
			"mode: 0755\nexact: 0o755\nquoted-mode: \"0755\"\nenabled: yes\ntoggle: on\nanswer: NO\nduration: 1:30\nthousand: 1_000\n" +
			"bits: 0b101\nsci: 1e3\nempty:\ntilde: ~\nunicode: \u00fcn\u00efc\u00f6d\u00e9 \u2014 \u2713\n" +
			"list: [yes, no, 0755, \"on\"]\nnested:\n  deeper:\n    flag: off\n    when: 2024-01-02\n---\nEdges.\n",
	}
	tr := &interopTree{dir: t.TempDir(), files: map[string][]byte{}}
	writeTree(t, tr.dir, files)
	for p, c := range files {
		if !strings.HasPrefix(p, "too-long/") {
			tr.files[p] = []byte(c)
		}
	}
	tr.skills = []string{"skill://acme/billing/refunds/SKILL.md", "skill://acme/billing/refunds/partial-refunds/SKILL.md", "skill://emoji/SKILL.md", "skill://git-workflow/SKILL.md", "skill://pdf-tools/SKILL.md", "skill://yaml-edges/SKILL.md"}
	tr.wgSkips = []string{"skill://emoji/SKILL.md"}
	tr.refused = []string{"skill://too-long/SKILL.md"}
	tr.wgUnreadable = []string{"pdf-tools/notes/unicode-\u00fcml\u00e4ut.md"}
	return tr
}

// wgServer starts the WG SDK's server over streamable HTTP and returns its URL.
func wgServer(t *testing.T, project, dir string) string {
	t.Helper()
	cmd := exec.Command("node", interopScript(project, "server.mjs"), "--http", dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("WG server stderr:\n%s", out)
		}
	})
	line, err := waitLine(t, stderr, out, "listening http://", time.Minute)
	if err != nil {
		t.Fatalf("WG server: %v\n%s", err, out)
	}
	return strings.TrimSpace(line[strings.Index(line, "http://"):])
}

// The WG SDK's server, mounted by skillfs: every file of every skill it
// serves reads back byte for byte, nothing else appears, and index.json
// shows each skill available. The skill it skips is absent.
func TestInteropWGServerMounted(t *testing.T) {
	t.Parallel()
	project := interopProject(t)
	tr := writeInteropTree(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			entry := map[string]any{"command": "node", "args": []string{interopScript(project, "server.mjs"), tr.dir}}
			if transport == "http" {
				entry = map[string]any{"type": "http", "url": wgServer(t, project, tr.dir)}
			}
			// node starting the WG server can take longer than the default
			// connect_timeout (15 s) on a saturated machine; a retry is a
			// warning, which this test counts against the mount.
			m := startMount(t, writeConfig(t, map[string]any{"wg": entry},
				map[string]any{"defaults": map[string]any{"limits": map[string]any{"connect_timeout": "5m"}}}))
			// The WG server's failures below are logged; every warning
			// must be about them (checked at the end).
			m.warnings = true

			var wantSkills []string
			for _, u := range tr.skills {
				if !slices.Contains(tr.wgSkips, u) {
					wantSkills = append(wantSkills, u)
				}
			}
			var idx indexJSON
			waitFor(t, time.Minute, "index.json to list the WG server's skills", func() bool {
				idx = readIndex(t, m)
				return len(idx.Skills) >= len(wantSkills)
			})
			var uris []string
			for _, s := range idx.Skills {
				uris = append(uris, s.URI)
				if s.Origin != "wg" || s.State != "available" {
					t.Errorf("index.json: %s from %q is %s (%s %s), want available", s.URI, s.Origin, s.State, s.Reason, s.Detail)
				}
			}
			slices.Sort(uris)
			if !slices.Equal(uris, wantSkills) {
				t.Errorf("index.json lists %q, want %q", uris, wantSkills)
			}

			files := map[string][]byte{}
			for rel, b := range tr.files {
				if !slices.ContainsFunc(tr.wgSkips, func(u string) bool { return strings.HasPrefix("skill://"+rel, strings.TrimSuffix(u, "SKILL.md")) }) {
					files[rel] = b
				}
			}
			for rel, want := range files {
				got, err := os.ReadFile(m.Path("wg", rel))
				if slices.Contains(tr.wgUnreadable, rel) {
					// Pinned incompatibility, theirs: the WG server (0.14.0)
					// lists a non-ASCII file name raw in its manifest
					// ("skill://pdf-tools/notes/unicode-ümläut.md", not an RFC
					// 3986 URI), but the v2 SDK hands its resource template
					// the URL-normalised, percent-encoded href, which it then
					// looks up verbatim among raw file names: "not found"
					// (-32602), whichever spelling the client sends, its own
					// client included. Over HTTP in 2026-07-28 the request
					// fails earlier: go-sdk sends the URI as raw UTF-8 in the
					// Mcp-Name header, node reads header bytes as Latin-1, and
					// the server answers -32020 "headers and body disagree".
					// skillfs serves nothing unverified: EIO, and one warning.
					if !errors.Is(err, syscall.EIO) {
						t.Errorf("read %s: %v, want EIO (the WG server cannot serve non-ASCII names); if it reads now, the WG SDK was fixed: drop wgUnreadable", rel, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("read %s: %v", rel, err)
				} else if !bytes.Equal(got, want) {
					t.Errorf("%s: %d bytes differ from the source's %d", rel, len(got), len(want))
				}
			}
			var seen []string
			err := filepath.WalkDir(m.Path("wg"), func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if !d.IsDir() {
					rel, _ := filepath.Rel(m.Path("wg"), p)
					seen = append(seen, filepath.ToSlash(rel))
				}
				return nil
			})
			if err != nil {
				t.Fatalf("walk the mount: %v", err)
			}
			var want []string
			for rel := range files {
				want = append(want, rel)
			}
			slices.Sort(seen)
			slices.Sort(want)
			if !slices.Equal(seen, want) {
				t.Errorf("the mount shows\n %q\nwant\n %q", seen, want)
			}
			for _, line := range strings.Split(m.log.String(), "\n") {
				if !strings.Contains(line, "level=WARN") && !strings.Contains(line, "level=ERROR") {
					continue
				}
				if !slices.ContainsFunc(tr.wgUnreadable, func(rel string) bool { return strings.Contains(line, "path=wg/"+rel) }) {
					t.Errorf("unexpected warning from the daemon: %s", line)
				}
			}
		})
	}
}

// A host built on the WG SDK's client helpers, against `skillfs serve`:
// every check of testdata/interop/client.mjs passes, over stdio and HTTP,
// in the 2025-11-25 protocol and with the SDK negotiating ("auto").
func TestInteropWGClientAgainstServe(t *testing.T) {
	t.Parallel()
	project := interopProject(t)
	tr := writeInteropTree(t)
	srv := serveHTTP(t, tr.dir)
	for _, transport := range []string{"stdio", "http"} {
		for _, era := range []string{"legacy", "auto"} {
			t.Run(transport+"/"+era, func(t *testing.T) {
				t.Parallel()
				args := []string{interopScript(project, "client.mjs"), "--dir", tr.dir, "--era", era,
					"--expect", strings.Join(tr.skills, ","), "--refused", strings.Join(tr.refused, ",")}
				if transport == "http" {
					args = append(args, "--url", srv.URL)
				} else {
					args = append(args, "--", skillfsBin, "serve", tr.dir)
				}
				ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, "node", args...)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				err := cmd.Run()
				checks := strings.Count(out.String(), "\nok   ") + strings.Count(out.String(), "\nFAIL ")
				switch {
				case err != nil:
					t.Errorf("client.mjs: %v\n%s", err, out.String())
				case !strings.HasSuffix(strings.TrimSpace(out.String()), "PASS") || checks < 40:
					t.Errorf("client.mjs exited 0 without passing %d+ checks:\n%s", 40, out.String())
				default:
					_, conn, _ := strings.Cut(out.String(), "ok   connect ")
					conn, _, _ = strings.Cut(conn, "\n")
					t.Logf("client.mjs: %d checks passed, connected %s", checks, conn)
				}
			})
		}
	}
}
