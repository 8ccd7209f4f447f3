//go:build linux

package integration

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Approval (config approval: required): a skill the user has not approved
// is not in the mount (ENOENT) but is listed by skillfs list and pending
// (index.json and index.md only count it);
// an approved skill whose entry changes on the server leaves the mount at
// once, an open file of it fails with EIO, and it waits in skillfs
// pending with what changed. Each test runs against `skillfs serve` over
// stdio and over HTTP.

var approvalFiles = map[string]string{
	"alpha/SKILL.md":           skillMD("alpha", "Alpha skill", "alpha body\n"),
	"alpha/refs/a.md":          "aaa\n",
	"team/beta/SKILL.md":       skillMD("beta", "Beta skill", "beta body\n"),
	"team/beta/data.txt":       "beta data\n",
	"team/beta/gamma/SKILL.md": skillMD("gamma", "Nested skill", "gamma\n"),
	"team/beta/gamma/n.txt":    "gamma notes\n",
}

type approvalSetup struct {
	dir, accessLog, cfg string
	m                   *mount
}

// mountRequired serves approvalFiles with `skillfs serve` (stdio or http)
// and mounts it with approval: required.
func mountRequired(t *testing.T, transport string) *approvalSetup {
	t.Helper()
	s := &approvalSetup{dir: t.TempDir()}
	writeTree(t, s.dir, approvalFiles)
	var entry map[string]any
	switch transport {
	case "stdio":
		s.accessLog = filepath.Join(t.TempDir(), "access.log")
		entry = stdioServe(s.dir, s.accessLog, "--poll", "200ms")
	case "http":
		srv := serveHTTP(t, s.dir, "--poll", "200ms")
		s.accessLog = srv.AccessLog
		entry = map[string]any{"type": "http", "url": srv.URL}
	}
	cfg := writeConfig(t, map[string]any{"local": entry}, map[string]any{"defaults": map[string]any{"approval": "required"}})
	s.cfg = cfg
	s.m = startMount(t, cfg)
	return s
}

type approvalRow struct {
	Path     string `json:"path"`
	Name     string `json:"name"`
	State    string `json:"state"`
	Approval string `json:"approval"`
	NestedIn string `json:"nested_in"`
}

// approvalRows is `skillfs list --json local`: the person's view, which
// has the rows of skills waiting for approval.
func approvalRows(t *testing.T, m *mount) map[string]approvalRow {
	t.Helper()
	// The JSON is stdout alone: stderr may say what the client skipped.
	var stderr bytes.Buffer
	cmd := exec.Command(skillfsBin, "list", "--mount", m.Dir, "--cache-dir", m.Cache, "--json", "local")
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("skillfs list --json local: %v\n%s%s", err, b, stderr.String())
	}
	var rows []approvalRow
	if err := json.Unmarshal([]byte(b), &rows); err != nil {
		t.Fatalf("skillfs list --json local: %v\n%s", err, b)
	}
	out := map[string]approvalRow{}
	for _, r := range rows {
		out[r.Path] = r
	}
	return out
}

func bothTransports(t *testing.T, fn func(t *testing.T, transport string)) {
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) { fn(t, tr) })
	}
}

func TestApprovalPendingIsInvisible(t *testing.T) {
	t.Parallel()
	bothTransports(t, func(t *testing.T, transport string) {
		s := mountRequired(t, transport)
		m := s.m
		for _, p := range []string{"alpha", "alpha/SKILL.md", "team/beta", "team/beta/data.txt", "team/beta/gamma/n.txt"} {
			if _, err := os.Stat(m.Path("local", p)); !errors.Is(err, syscall.ENOENT) {
				t.Errorf("stat %s of a pending skill: %v, want ENOENT", p, err)
			}
		}
		if _, err := os.ReadFile(m.Path("local", "alpha", "SKILL.md")); !errors.Is(err, syscall.ENOENT) {
			t.Errorf("read of a pending skill's SKILL.md: %v, want ENOENT", err)
		}
		ents, err := os.ReadDir(m.Path("local"))
		if err != nil || len(ents) != 0 {
			t.Errorf("ls local with every skill pending: %v, %v", ents, err)
		}
		rows := approvalRows(t, m)
		for _, p := range []string{"local/alpha", "local/team/beta", "local/team/beta/gamma"} {
			if r := rows[p]; r.State != "pending" || r.Approval != "pending" || r.Name == "" {
				t.Errorf("skillfs list row %s: %+v", p, r)
			}
		}
		if r := rows["local/team/beta/gamma"]; r.NestedIn != "local/team/beta" {
			t.Errorf("nested pending skill: %+v", r)
		}
		// The generated files count them and name none.
		md, err := os.ReadFile(m.Path(".skillfs", "index.md"))
		if err != nil || !bytes.Contains(md, []byte("3 skills wait for the user's approval")) || bytes.Contains(md, []byte("local/alpha")) {
			t.Errorf("index.md does not count the pending skills, or names one: %v\n%s", err, md)
		}
		ij, err := readGenerated(m.Path(".skillfs", "index.json"))
		if err != nil || !bytes.Contains(ij, []byte(`"local": 3`)) || bytes.Contains(ij, []byte("local/alpha")) {
			t.Errorf("index.json does not count the pending skills, or names one: %v\n%s", err, ij)
		}
		if r := reads(t, s.accessLog); len(r) != 0 {
			t.Errorf("pending skills were fetched: %v", r)
		}
	})
}

// skillfsCmd runs a skillfs command against the mount and returns its
// output; it skips the test when the control commands are not built in.
func skillfsCmd(t *testing.T, m *mount, args ...string) (string, error) {
	t.Helper()
	// An unknown command's --help prints the root help and exits 0:
	// look for the command's own usage line.
	if out, err := exec.Command(skillfsBin, "approve", "--help").CombinedOutput(); err != nil || !strings.Contains(string(out), "Usage:\n  skillfs approve") {
		t.Skip("needs the control commands (skillfs approve, pending, revoke)")
	}
	// The mount registers its control socket under $XDG_RUNTIME_DIR or, when
	// that is unset, under its cache directory: name both.
	cmd := exec.Command(skillfsBin, append([]string{args[0], "--mount", m.Dir, "--cache-dir", m.Cache}, args[1:]...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestApprovalApproveChangeRevoke(t *testing.T) {
	t.Parallel()
	bothTransports(t, func(t *testing.T, transport string) {
		s := mountRequired(t, transport)
		m := s.m
		if out, err := skillfsCmd(t, m, "approve", "--yes", "local/alpha"); err != nil {
			t.Fatalf("skillfs approve: %v\n%s", err, out)
		}
		// Approving keeps the approved bytes for the diff of a later
		// change: it fetches alpha's own files, and nothing of another skill.
		for _, r := range reads(t, s.accessLog) {
			if !strings.HasPrefix(r, "skill://alpha/") {
				t.Errorf("approving alpha fetched %s", r)
			}
		}
		a := m.Path("local", "alpha", "refs", "a.md")
		if got, err := os.ReadFile(a); err != nil || string(got) != "aaa\n" {
			t.Fatalf("read after approval: %q, %v", got, err)
		}
		if _, err := os.Stat(m.Path("local", "team", "beta")); !errors.Is(err, syscall.ENOENT) {
			t.Errorf("approving alpha showed beta: %v", err)
		}
		// An open file of the approved version.
		fh, err := os.Open(a)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		buf := make([]byte, 1)
		if _, err := fh.Read(buf); err != nil {
			t.Fatal(err)
		}

		// The server changes the skill: it leaves the mount.
		writeTree(t, s.dir, map[string]string{"alpha/refs/a.md": "changed by the server\n"})
		waitFor(t, 2*time.Minute, "alpha to leave the mount", func() bool {
			_, err := os.Stat(m.Path("local", "alpha"))
			return errors.Is(err, syscall.ENOENT)
		})
		m.warnings = true // the failed read of the open file is logged
		rest := make([]byte, 64)
		if n, err := fh.ReadAt(rest, 1); !errors.Is(err, syscall.EIO) {
			t.Errorf("read of the open file after the change: %d bytes %q, %v; want EIO", n, rest[:n], err)
		}
		if r := approvalRows(t, m)["local/alpha"]; r.State != "pending" || r.Approval != "changed" {
			t.Errorf("index row after the change: %+v", r)
		}
		out, err := skillfsCmd(t, m, "pending")
		if err != nil || !strings.Contains(out, "local/alpha") || !strings.Contains(out, "refs/a.md") {
			t.Errorf("skillfs pending after the change: %v\n%s", err, out)
		}
		if out, err := skillfsCmd(t, m, "approve", "--yes", "local/alpha"); err != nil {
			t.Fatalf("re-approve: %v\n%s", err, out)
		}
		if got, err := os.ReadFile(a); err != nil || string(got) != "changed by the server\n" {
			t.Errorf("read after re-approval: %q, %v", got, err)
		}
		if out, err := skillfsCmd(t, m, "revoke", "local/alpha"); err != nil {
			t.Fatalf("revoke: %v\n%s", err, out)
		}
		if _, err := os.Stat(a); !errors.Is(err, syscall.ENOENT) {
			t.Errorf("after revoke: %v, want ENOENT", err)
		}
	})
}

// Approvals survive a restart of the mount, are not inherited by a label
// pointed at another server, and `skillfs cache rm LABEL` removes them.
func TestApprovalSurvivesRestartAndCacheRm(t *testing.T) {
	t.Parallel()
	s := mountRequired(t, "stdio")
	m := s.m
	if out, err := skillfsCmd(t, m, "approve", "--yes", "local/alpha"); err != nil {
		t.Fatalf("skillfs approve: %v\n%s", err, out)
	}
	m.Stop(t)
	cfg := s.cfg
	m2 := (&mount{Dir: m.Dir, Cache: m.Cache, log: &syncBuffer{}}).start(t, cfg)
	if got, err := os.ReadFile(m2.Path("local", "alpha", "SKILL.md")); err != nil || !bytes.Contains(got, []byte("name: alpha")) {
		idx, _ := readGenerated(m2.Path(".skillfs", "index.json"))
		t.Fatalf("approved skill after a restart: %q, %v\n%s", got, err, idx)
	}
	m2.Stop(t)
	// The same label pointed elsewhere (here: only its env changes) is
	// another origin: it does not inherit the approval.
	moved := stdioServe(s.dir, s.accessLog, "--poll", "200ms")
	moved["env"] = map[string]string{"SKILLFS_TEST_ELSEWHERE": "1"}
	movedCfg := writeConfig(t, map[string]any{"local": moved}, map[string]any{"defaults": map[string]any{"approval": "required"}})
	mm := (&mount{Dir: m.Dir, Cache: m.Cache, log: &syncBuffer{}}).start(t, movedCfg)
	if _, err := os.Stat(mm.Path("local", "alpha")); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("a label re-pointed by its env inherited the approval: %v", err)
	}
	mm.Stop(t)
	if out, err := exec.Command(skillfsBin, "cache", "rm", "--cache-dir", m.Cache, "local").CombinedOutput(); err != nil {
		t.Fatalf("skillfs cache rm: %v\n%s", err, out)
	}
	m3 := (&mount{Dir: m.Dir, Cache: m.Cache, log: &syncBuffer{}}).start(t, cfg)
	if _, err := os.Stat(m3.Path("local", "alpha")); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("after cache rm the approval is still in force: %v", err)
	}
}

// TestApprovalChangeThroughTheKernel: an approval held from an earlier run
// (its approvals.json written as skillfs approve writes it, bound to the
// served entry) shows the skill; a server-side change then takes it out
// of the mount at once — the kernel's caches included — and an open file
// of it fails with EIO, never a byte of the new version; skillfs list
// shows it changed, and the generated files no longer name it.
func TestApprovalChangeThroughTheKernel(t *testing.T) {
	t.Parallel()
	bothTransports(t, func(t *testing.T, transport string) {
		s := mountRequired(t, transport)
		m := s.m
		b, err := readGenerated(m.Path(".skillfs", "status.json"))
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Origins []struct {
				ID string `json:"id"`
			} `json:"origins"`
		}
		if err := json.Unmarshal(b, &st); err != nil || len(st.Origins) != 1 {
			t.Fatalf("status.json: %v\n%s", err, b)
		}
		id := st.Origins[0].ID
		m.Stop(t)
		writeApproval(t, filepath.Join(m.Cache, id, "approvals.json"), id, "alpha", "Alpha skill", s.dir, "alpha/SKILL.md", "alpha/refs/a.md")
		m2 := (&mount{Dir: m.Dir, Cache: m.Cache, log: &syncBuffer{}}).start(t, s.cfg)

		a := m2.Path("local", "alpha", "refs", "a.md")
		if got, err := os.ReadFile(a); err != nil || string(got) != "aaa\n" {
			t.Fatalf("the approved skill: %q, %v", got, err)
		}
		if _, err := os.Stat(m2.Path("local", "team", "beta")); !errors.Is(err, syscall.ENOENT) {
			t.Errorf("an unapproved skill beside the approved one: %v, want ENOENT", err)
		}
		fh, err := os.Open(a)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		one := make([]byte, 1)
		if _, err := fh.Read(one); err != nil {
			t.Fatal(err)
		}
		m2.warnings = true // the failed read of the open file is logged
		writeTree(t, s.dir, map[string]string{"alpha/refs/a.md": "changed by the server\n"})
		waitFor(t, 2*time.Minute, "alpha to leave the mount", func() bool {
			_, err := os.Stat(m2.Path("local", "alpha"))
			return errors.Is(err, syscall.ENOENT)
		})
		if _, err := os.ReadFile(a); !errors.Is(err, syscall.ENOENT) {
			t.Errorf("a fresh read after the change: %v, want ENOENT", err)
		}
		rest := make([]byte, 64)
		if n, err := fh.ReadAt(rest, 1); !errors.Is(err, syscall.EIO) {
			t.Errorf("read of the open file after the change: %d bytes %q, %v; want EIO", n, rest[:n], err)
		}
		if r := approvalRows(t, m2)["local/alpha"]; r.State != "pending" || r.Approval != "changed" {
			t.Errorf("skillfs list row after the change: %+v", r)
		}
		for _, name := range []string{"index.json", "index.md", "servers/local.md"} {
			if b, err := os.ReadFile(m2.Path(".skillfs", name)); err != nil || bytes.Contains(b, []byte("local/alpha")) || bytes.Contains(b, []byte("Alpha skill")) {
				t.Errorf(".skillfs/%s after the change names the changed skill (%v):\n%s", name, err, b)
			}
		}
	})
}

// writeApproval writes approvals.json as the daemon keeps it: one
// approval bound to the entry `skillfs serve` publishes for the skill.
func writeApproval(t *testing.T, path, id, name, description, dir string, files ...string) {
	t.Helper()
	label, fp, _ := strings.Cut(id, "-")
	type resource struct {
		URI     string `json:"uri"`
		Digest  string `json:"digest"`
		Size    int64  `json:"size"`
		HasSize bool   `json:"has_size"`
	}
	var rs []resource
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, resource{URI: "skill://" + f, Digest: fmt.Sprintf("sha256:%x", sha256.Sum256(b)), Size: int64(len(b)), HasSize: true})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].URI < rs[j].URI })
	doc := map[string]any{"version": 1, "approvals": []any{map[string]any{
		"origin": label, "fingerprint": fp, "uri": "skill://" + files[0],
		"frontmatter": map[string]any{"name": name, "description": description},
		"resources":   rs, "approved_at": time.Now().UTC(),
	}}}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
