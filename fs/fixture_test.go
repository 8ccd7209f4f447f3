package fs

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/skillserver"
	"github.com/skillfs/skillfs/internal/store"
	"github.com/skillfs/skillfs/internal/testkit"
	"github.com/skillfs/skillfs/internal/vfs"
)

// These tests drive fs without a kernel: a vfs over an in-process skillfs
// server on an in-memory pipe, and the node tree newFS builds for it, its
// nodes called directly (and, where go-fuse itself decides what the kernel
// hears, its raw operations).

var testFiles = map[string]string{
	"alpha/SKILL.md":      "---\nname: alpha\ndescription: Alpha skill\n---\nbody\n",
	"alpha/refs/a.md":     "aaa\n",
	"alpha/refs/b.md":     "bbbb\n",
	"team/beta/SKILL.md":  "---\nname: beta\ndescription: Beta skill\n---\nbeta body\n",
	"team/beta/data.txt":  "beta data\n",
	"team/beta/lost.txt":  "the server loses this one\n",
	"team/beta/other.txt": "other\n",
}

type fixture struct {
	dir  string // the served folder
	srv  *skillserver.Server
	v    *vfs.Core
	raw  *rawFS
	root *node
	logs *testkit.Log
	// expect lists substrings of log messages the test expects at Warn or
	// above; any other is a failure.
	expect []string
}

// newFixture serves files over an in-memory pipe and builds the node tree
// over the vfs of one origin, "local", once it has listed.
func newFixture(t *testing.T, files map[string]string) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir(), logs: testkit.NewLog(nil)}
	for p, c := range files {
		full := filepath.Join(f.dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := skillserver.New(f.dir, skillserver.Options{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	oc := config.Origin{Label: "local", Kind: config.Stdio, Command: "in-process", Limits: config.DefaultLimits()}
	oc.Limits.ConnectTimeout = 10 * time.Second
	oc.Limits.CallTimeout = 10 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	dial := func(context.Context) (io.ReadWriteCloser, error) {
		c, s := net.Pipe()
		go func() { srv.ServeConn(ctx, s); s.Close() }()
		return c, nil
	}
	lg := f.logs.Logger()
	v, err := vfs.New(vfs.Options{
		Config: &config.Config{Origins: []config.Origin{oc}},
		Store:  st,
		Dial:   map[string]func(context.Context) (io.ReadWriteCloser, error){"local": dial},
		Logger: lg,
		// A tree a test changes is listed again within this after
		// Refresh, not within the 2 s default.
		RelistGap: 100 * time.Millisecond,
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	wait := v.Start(ctx)
	t.Cleanup(func() {
		// The mount's order: its origins stop before the server goes;
		// the store closes last, waiting for the disk writes a read left
		// under way (Bucket.Keep), before the TempDir is removed.
		v.Stop()
		wait()
		cancel()
		st.Close()
		for _, r := range f.logs.TakeWarnings() {
			if !f.expected(r.Msg) {
				t.Errorf("unexpected log line: %s %s %v", r.Level, r.Msg, r.Attrs)
			}
		}
	})
	rctx, rcancel := context.WithTimeout(ctx, time.Minute)
	defer rcancel()
	if waiting := v.Ready(rctx); len(waiting) > 0 {
		t.Fatalf("origins not ready: %v", waiting)
	}
	f.v, f.srv = v, srv
	f.raw, _ = newFS(v, Options{Logger: lg})
	f.root = f.raw.root
	return f
}

func (f *fixture) expected(msg string) bool {
	for _, e := range f.expect {
		if strings.Contains(msg, e) {
			return true
		}
	}
	return false
}

// mount mounts the fixture's tree for real on a t.TempDir(), as Start
// mounts it for skillfs, and unmounts it in t.Cleanup; it skips the test
// where FUSE cannot be mounted, which it finds out by trying. The test
// process serves the mount, so it must not touch it: a child process does
// (see TestMountRefusesEveryMutation).
func (f *fixture) mount(t *testing.T) string {
	t.Helper()
	mnt := t.TempDir()
	m, err := Start(mnt, f.v, Options{Logger: f.logs.Logger()})
	if err != nil {
		t.Skipf("cannot mount FUSE here: %v", err)
	}
	t.Cleanup(func() {
		if err := m.Unmount(); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	return mnt
}

// walk looks p up from the root, one name at a time, the way the kernel
// does, and returns its node.
func (f *fixture) walk(t *testing.T, p string) *node {
	t.Helper()
	n := f.root
	if p == "" {
		return n
	}
	for _, name := range strings.Split(p, "/") {
		var out fuse.EntryOut
		in, errno := n.Lookup(context.Background(), name, &out)
		if errno != 0 {
			t.Fatalf("lookup %q in %q: %v", name, n.path, errno)
		}
		n = in.Operations().(*node)
	}
	return n
}

// read reads all of n through Read, in chunks of size.
func read(t *testing.T, n *node, size int) ([]byte, error) {
	t.Helper()
	var all []byte
	buf := make([]byte, size)
	for {
		rr, errno := n.Read(context.Background(), nil, buf, int64(len(all)))
		if errno != 0 {
			return all, errno
		}
		b, st := rr.Bytes(buf)
		if !st.Ok() {
			t.Fatalf("read result: %v", st)
		}
		if len(b) == 0 {
			return all, nil
		}
		all = append(all, b...)
	}
}
