package resolver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/skillserver"
)

// BenchmarkFetchHTTP times one cold resources/read over loopback HTTP as
// the mount's resolver does it (Session.Fetch: bounded frame, JSON scan,
// budget, then sha256 as the store does) against a plain go-sdk client
// reading the same file with StreamableClientTransport and hashing it, in
// the same process against the same server. The ratio of the two is the
// price of the resolver's transport and checks on a cold read, without the
// FUSE round trips the bench's cold rows also include:
//
//	go test -run xxx -bench FetchHTTP -benchtime 200x ./resolver/
func BenchmarkFetchHTTP(b *testing.B) {
	for _, size := range []int{10 << 10, 4 << 20} {
		dir := b.TempDir()
		body := make([]byte, size)
		rand.Read(body)
		writeTree(b, dir, map[string][]byte{
			"s/SKILL.md": []byte("---\nname: s\ndescription: bench\n---\nbody\n"),
			"s/data.bin": body,
		})
		srv, err := skillserver.New(dir, skillserver.Options{PollInterval: -1})
		if err != nil {
			b.Fatal(err)
		}
		hs := httptest.NewServer(srv.Handler())
		b.Cleanup(hs.Close)
		uri := "skill://s/data.bin"
		want := sha256.Sum256(body)

		b.Run(fmt.Sprintf("%dKiB/skillfs", size>>10), func(b *testing.B) {
			o, stop := httpSession(b, hs.URL)
			defer stop()
			r := skill.Resource{URI: uri, Size: int64(size), HasSize: true}
			b.SetBytes(int64(size))
			for b.Loop() {
				got, err := o.Fetch(context.Background(), r)
				if err != nil {
					b.Fatal(err)
				}
				if sha256.Sum256(got) != want {
					b.Fatal("other bytes than the file's")
				}
			}
		})
		b.Run(fmt.Sprintf("%dKiB/go-sdk", size>>10), func(b *testing.B) {
			ctx := context.Background()
			c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			b.SetBytes(int64(size))
			for b.Loop() {
				res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				if err != nil {
					b.Fatal(err)
				}
				if sha256.Sum256(res.Contents[0].Blob) != want {
					b.Fatal("other bytes than the file's")
				}
			}
		})
	}
}

// httpSession runs a Session for an HTTP origin at url and waits until it
// has listed once.
func httpSession(b *testing.B, url string) (*Session, func()) {
	b.Helper()
	oc := config.Origin{Label: "b", Kind: config.HTTP, URL: url, Limits: config.DefaultLimits()}
	oc.Limits.Budget = 0
	listed := make(chan struct{}, 1)
	o := New(Options{Origin: oc, OnCatalog: func(*Catalog) {
		select {
		case listed <- struct{}{}:
		default:
		}
	}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { o.Run(ctx); close(done) }()
	select {
	case <-listed:
	case <-time.After(time.Minute):
		b.Fatal("no catalog within a minute")
	}
	return o, func() { cancel(); <-done }
}

func writeTree(b *testing.B, dir string, files map[string][]byte) {
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, c, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}
