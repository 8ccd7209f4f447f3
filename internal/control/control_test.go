package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/control/wire"
)

// fakeAPI answers with fixed data and records approvals.
type fakeAPI struct {
	labels   []string
	skills   []wire.SkillInfo
	approved []SkillRef
}

func (f *fakeAPI) Status() wire.Status {
	st := wire.Status{Version: "test"}
	for _, l := range f.labels {
		st.Origins = append(st.Origins, wire.OriginStatus{Label: l, State: "connected", Protocol: "2025-11-25", Budget: 1 << 20})
	}
	return st
}
func (f *fakeAPI) Skills() []wire.SkillInfo { return f.skills }
func (f *fakeAPI) find(ref SkillRef) (wire.SkillInfo, error) {
	for _, s := range f.skills {
		if s.Path == ref.Path || (s.Origin == ref.Origin && s.URI == ref.URI) {
			return s, nil
		}
	}
	return wire.SkillInfo{}, fmt.Errorf("no skill %s: %w", ref, ErrNotFound)
}
func (f *fakeAPI) Inspect(_ context.Context, ref SkillRef) (Inspection, error) {
	s, err := f.find(ref)
	if err != nil {
		return Inspection{}, err
	}
	return Inspection{Skill: s, Entry: json.RawMessage(`{"uri":"` + s.URI + `"}`),
		Files:    []FileState{{Path: "SKILL.md", URI: s.URI, Digest: "sha256:00", Size: 10, Verified: true}},
		Approval: &ApprovalState{Required: true, State: "pending"}}, nil
}
func (f *fakeAPI) ShowSkillMD(_ context.Context, ref SkillRef) ([]byte, error) {
	if _, err := f.find(ref); err != nil {
		return nil, err
	}
	return []byte("---\nname: x\n---\nhi\u200b\n"), nil
}
func (f *fakeAPI) Pending() []Pending {
	return []Pending{{Skill: f.skills[0], Changed: &ApprovalChange{Added: []string{"a.md"}}}}
}
func (f *fakeAPI) Approve(refs []SkillRef, _ string) ([]wire.SkillInfo, error) {
	var out []wire.SkillInfo
	for _, r := range refs {
		s, err := f.find(r)
		if err != nil {
			return nil, err
		}
		f.approved = append(f.approved, r)
		out = append(out, s)
	}
	return out, nil
}
func (f *fakeAPI) Revoke(refs []SkillRef) ([]wire.SkillInfo, error) { return f.Approve(refs, "") }
func (f *fakeAPI) Get(_ context.Context, label, uri string) (wire.SkillInfo, error) {
	return wire.SkillInfo{Origin: label, URI: uri, State: "available", Source: "get"}, nil
}

func newFake(labels ...string) *fakeAPI {
	f := &fakeAPI{labels: labels}
	for _, l := range labels {
		f.skills = append(f.skills, wire.SkillInfo{Origin: l, URI: "skill://a/SKILL.md", Path: l + "/a", Name: "a", State: "available"})
	}
	return f
}

func start(t *testing.T, dir, mnt string, api API) *Server {
	t.Helper()
	s, err := Serve(context.Background(), Options{Dir: dir, Mount: MountInfo{Path: mnt}, API: api})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestServeModesAndCleanup(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	s := start(t, dir, "/m/one", newFake("acme"))
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("directory mode %04o, want 0700", m)
	}
	if m := mode(t, s.Socket()); m != 0o600 {
		t.Errorf("socket mode %04o, want 0600", m)
	}
	reg := strings.TrimSuffix(s.Socket(), ".sock") + ".json"
	var r registration
	b, err := os.ReadFile(reg)
	if err != nil || json.Unmarshal(b, &r) != nil {
		t.Fatalf("registration: %v %s", err, b)
	}
	if r.Mountpoint != "/m/one" || r.PID != os.Getpid() || r.Socket != s.Socket() || r.Started.IsZero() {
		t.Errorf("registration %+v", r)
	}
	s.Close()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		left, _ := os.ReadDir(dir)
		t.Errorf("left after Close: %v %v", err, left)
	}
}

func TestServeRefusesAnUnsafeDirectory(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	_, err := Serve(context.Background(), Options{Dir: dir, Mount: MountInfo{Path: "/m"}, API: newFake("a")})
	if err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Fatalf("Serve in a 0777 directory: %v", err)
	}
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(t.TempDir(), link)
	if _, err := Serve(context.Background(), Options{Dir: link, Mount: MountInfo{Path: "/m"}, API: newFake("a")}); err == nil {
		t.Fatal("Serve in a symlinked directory succeeded")
	}
}

func TestFindNoneOneTwo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	other := filepath.Join(t.TempDir(), "run")
	dirs := []string{dir, other}
	if _, err := Find(dirs, ""); !errors.Is(err, ErrNoMount) || err.Error() != "no skillfs mount is running (start one with `skillfs mount DIR`)" {
		t.Fatalf("no mount: %v", err)
	}
	if _, err := Find(dirs, "/m/one"); !errors.Is(err, ErrNoMount) || !strings.Contains(err.Error(), "at /m/one") {
		t.Fatalf("no mount, --mount: %v", err)
	}
	start(t, dir, "/m/one", newFake("acme"))
	c, err := Find(dirs, "")
	if err != nil || c.Mountpoint != "/m/one" {
		t.Fatalf("one mount: %v %+v", err, c)
	}
	start(t, other, "/m/two", newFake("local"))
	_, err = Find(dirs, "")
	if err == nil || err.Error() != "2 skillfs mounts are running (/m/one, /m/two): choose one with --mount DIR" {
		t.Fatalf("two mounts: %v", err)
	}
	c, err = Find(dirs, "/m/two/")
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Status(context.Background())
	if err != nil || st.Mount.Path != "/m/two" || len(st.Servers) != 1 || st.Servers[0].Label != "local" {
		t.Fatalf("status of /m/two: %v %+v", err, st)
	}
	if _, err := Find(dirs, "/m/three"); err == nil || !strings.Contains(err.Error(), "running: /m/one, /m/two") {
		t.Fatalf("--mount of no mount: %v", err)
	}
}

func TestFindRemovesStaleRegistrations(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := prepareDir(dir); err != nil {
		t.Fatal(err)
	}
	// A daemon that is gone: its pid no longer exists.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	writeAtomic(filepath.Join(dir, "dead.json"), registration{Mountpoint: "/m/dead", PID: dead.Process.Pid, Socket: filepath.Join(dir, "dead.sock"), Started: time.Now()})
	deadLn, err := net.Listen("unix", filepath.Join(dir, "dead.sock"))
	if err != nil {
		t.Fatal(err)
	}
	deadLn.(*net.UnixListener).SetUnlinkOnClose(false)
	deadLn.Close()
	// A daemon whose socket refuses (killed; the pid is reused by us).
	sock := filepath.Join(dir, "refusing.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	writeAtomic(filepath.Join(dir, "refusing.json"), registration{Mountpoint: "/m/refusing", PID: os.Getpid(), Socket: sock, Started: time.Now()})
	live := start(t, dir, "/m/live", newFake("a"))

	c, err := Find([]string{dir}, "")
	if err != nil || c.Mountpoint != "/m/live" {
		t.Fatalf("Find: %v %+v", err, c)
	}
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	base := filepath.Base(strings.TrimSuffix(live.Socket(), ".sock"))
	if want := base + ".json " + base + ".sock"; strings.Join(names, " ") != want {
		t.Errorf("left in the directory: %v, want %s", names, want)
	}
}

func TestServeReplacesAStaleSocketButNotALiveOne(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	s := start(t, dir, "/m/one", newFake("a"))
	if _, err := Serve(context.Background(), Options{Dir: dir, Mount: MountInfo{Path: "/m/one"}, API: newFake("a")}); err == nil || !strings.Contains(err.Error(), "already answers") {
		t.Fatalf("second Serve for one mountpoint: %v", err)
	}
	// A killed daemon leaves its socket behind.
	s.ln.(*net.UnixListener).SetUnlinkOnClose(false)
	s.ln.Close()
	if _, err := os.Stat(s.Socket()); err != nil {
		t.Fatal(err)
	}
	start(t, dir, "/m/one", newFake("a"))
}

func TestPeerOfAnotherUserIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	s, err := serve(context.Background(), Options{Dir: dir, Mount: MountInfo{Path: "/m"}, API: newFake("a")}, os.Getuid()+1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := Find([]string{dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.Status(ctx); err == nil {
		t.Fatal("a peer of another uid was answered")
	}
}

func TestEndpoints(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	api := newFake("acme", "local")
	start(t, dir, "/m", api)
	c, err := Find([]string{dir}, "/m")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	skills, err := c.Skills(ctx, "local")
	if err != nil || len(skills) != 1 || skills[0].Path != "local/a" {
		t.Errorf("Skills(local): %v %+v", err, skills)
	}
	_, err = c.Skills(ctx, "nosuch")
	if !errors.Is(err, ErrNotFound) || err.Error() != `no server "nosuch" on this mount (servers: acme, local)` {
		t.Errorf("Skills(nosuch): %v", err)
	}
	ins, err := c.Inspect(ctx, SkillRef{Origin: "acme", URI: "skill://a/SKILL.md"})
	if err != nil || ins.Skill.Path != "acme/a" || ins.Files[0].Digest != "sha256:00" || ins.Approval.State != "pending" {
		t.Errorf("Inspect: %v %+v", err, ins)
	}
	if _, err := c.Inspect(ctx, SkillRef{Path: "acme/nope"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Inspect of nothing: %v", err)
	}
	if _, err := c.Inspect(ctx, SkillRef{Origin: "acme"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Inspect of a ref without URI: %v", err)
	}
	md, err := c.ShowSkillMD(ctx, SkillRef{Path: "acme/a"})
	if err != nil || Visible(md) != "---\nname: x\n---\nhi<U+200B>\n" {
		t.Errorf("ShowSkillMD: %v %q", err, md)
	}
	if _, err := c.Approve(ctx, nil, ""); !errors.Is(err, ErrInvalid) {
		t.Errorf("Approve of nothing: %v", err)
	}
	got, err := c.Approve(ctx, []SkillRef{{Path: "local/a"}}, "")
	if err != nil || len(got) != 1 || len(api.approved) != 1 {
		t.Errorf("Approve: %v %+v", err, got)
	}
	if _, err := c.Approve(ctx, nil, "nosuch"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Approve --all nosuch: %v", err)
	}
	p, err := c.Pending(ctx)
	if err != nil || len(p) != 1 || p[0].Changed.Added[0] != "a.md" {
		t.Errorf("Pending: %v %+v", err, p)
	}
	g, err := c.Get(ctx, "acme", "skill://b/SKILL.md")
	if err != nil || g.Source != "get" {
		t.Errorf("Get: %v %+v", err, g)
	}
	st, err := c.Status(ctx)
	if err != nil || len(st.Servers) != 2 || st.Servers[0].Available != 1 || st.Servers[0].Pending != 1 {
		t.Errorf("Status: %v %+v", err, st)
	}
}

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext\n":         "plain\ttext\n",
		"a\u202eb":              "a<U+202E>b",
		"\x1b[2Jclear\r":        "<U+001B>[2Jclear<U+000D>",
		"tag\U000E0041":         "tag<U+E0041>",
		"bad\xffbyte":           "bad<0xFF>byte",
		"zero\u200bwidth\ufeff": "zero<U+200B>width<U+FEFF>",
	} {
		if got := Visible([]byte(in)); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestListAnswerIsCapped: a list answer over MaxAnswerBytes is cut into a
// valid, shorter list; the client returns it with a *TruncatedError that
// says how many items were left out. '<' travels as one byte.
func TestListAnswerIsCapped(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	f := newFake("acme")
	desc := strings.Repeat("<&>", 1400) // 4,200 bytes, 25,200 if HTML-escaped
	const n = 10_000                    // about 43 MB in all
	for i := range n {
		f.skills = append(f.skills, wire.SkillInfo{Origin: "acme", URI: fmt.Sprintf("skill://s-%d/SKILL.md", i), Path: fmt.Sprintf("acme/s-%d", i), Name: "x", Description: desc, State: "available"})
	}
	start(t, dir, "/m/cap", f)
	c, err := Find([]string{dir}, "/m/cap")
	if err != nil {
		t.Fatal(err)
	}
	// 43 MB to encode and cut: on a saturated machine under -race that
	// takes longer than the client's 15 s default, which is not what this
	// tests. A deadline of the caller's own replaces it.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	skills, err := c.Skills(ctx, "")
	var te *TruncatedError
	if !errors.As(err, &te) {
		t.Fatalf("skills: %d, %v; want a *TruncatedError", len(skills), err)
	}
	total := n + 1
	if len(skills) == 0 || len(skills) >= total || te.Omitted != fmt.Sprintf("%d of %d", total-len(skills), total) {
		t.Errorf("got %d of %d skills, error says %q", len(skills), total, te.Omitted)
	}
	if size := len(skills) * len(desc); size > MaxAnswerBytes {
		t.Errorf("%d descriptions of %d bytes: over the cap", len(skills), len(desc))
	}
	if !strings.Contains(te.Error(), "capped") {
		t.Errorf("message %q", te.Error())
	}
	// A small answer is whole, and says nothing.
	st, err := c.Status(context.Background())
	if err != nil || len(st.Servers) != 1 {
		t.Errorf("status: %+v, %v", st, err)
	}
}

// TestWriteJSONBody: the answer writeJSON sends in chunks is the encoding
// of the whole value (without HTML escaping) and a newline, whatever its
// size, and its Content-Length says so.
func TestWriteJSONBody(t *testing.T) {
	long := make([]wire.SkillInfo, 1200) // about 1.2 MB: past maxChunk
	desc := strings.Repeat("<&>", 300)
	for i := range long {
		long[i] = wire.SkillInfo{Origin: "acme", Path: fmt.Sprintf("acme/s-%d", i), Description: desc}
	}
	for _, v := range []any{
		errorBody{Error: "a <b>"},
		[]wire.SkillInfo{},
		[]wire.SkillInfo{{Origin: "acme", Path: "acme/a"}},
		long,
	} {
		var want strings.Builder
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		writeJSON(rec, http.StatusOK, v)
		if got := rec.Body.String(); got != want.String() {
			t.Errorf("%T of %d bytes: body of %d bytes differs", v, want.Len(), len(got))
		}
		if cl := rec.Header().Get("Content-Length"); cl != fmt.Sprint(want.Len()) {
			t.Errorf("%T of %d bytes: Content-Length %s", v, want.Len(), cl)
		}
		if h := rec.Header().Get(TruncatedHeader); h != "" {
			t.Errorf("%T: %s %q", v, TruncatedHeader, h)
		}
	}
}
