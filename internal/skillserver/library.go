package skillserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillfs/skillfs/internal/skill"
)

// A library is the catalog being served and what keeps it in step with
// DIR: the scanner, the scans it serialises, and the swap of each new
// catalog into the MCP server's resources. Reads of a served file go
// through it too, since a file that no longer matches the catalog calls
// for a rescan.
type library struct {
	log *slog.Logger
	mcp *mcp.Server

	// mu serialises scans; it guards sc's cache and gen.
	mu  sync.Mutex
	sc  *scanner
	gen uint64

	cat atomic.Pointer[catalog]
}

// rescan is Server.Rescan.
func (l *library) rescan() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rescanLocked()
}

func (l *library) rescanLocked() error {
	cat, err := l.sc.scan()
	if err != nil {
		return err
	}
	old := l.cat.Load()
	if cat == old {
		return nil
	}
	known := map[Problem]bool{}
	for _, p := range old.problems {
		known[p] = true
	}
	for _, p := range cat.problems {
		if !known[p] {
			l.log.Warn("skipped", "path", p.Path, "err", p.Reason)
		}
	}
	for _, p := range old.warnings {
		known[p] = true
	}
	for _, p := range cat.warnings {
		if !known[p] {
			l.log.Warn("ambiguous", "path", p.Path, "err", p.Reason)
		}
	}
	l.install(old, cat)
	return nil
}

// rescanIfCurrent rescans unless a scan has run since the catalog of
// generation gen was loaded: a read that found the file at rel changed
// asks for one, and many such reads at once need only one. What is cached
// about rel is dropped first, in case it changed without its key moving.
func (l *library) rescanIfCurrent(gen uint64, rel string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gen != gen {
		return
	}
	l.sc.forget(rel)
	if err := l.rescanLocked(); err != nil {
		l.log.Warn("rescan failed", "op", "rescan", "path", l.sc.dir, "err", err)
	}
}

// install publishes cat in place of old (nil at start). The catalog is
// swapped in before resources are registered, so that a client reacting to
// the list_changed notification already sees the new skills.
//
// go-sdk notifies on every AddResource and RemoveResources (debounced), so
// a file whose bytes changed under the same URI is re-added to produce the
// notification; a change of the skills listing alone re-adds one resource.
func (l *library) install(old, cat *catalog) {
	l.gen++
	cat.gen = l.gen
	l.cat.Store(cat)
	if old == nil {
		old = &catalog{}
	}
	var removed []string
	for uri := range old.files {
		if cat.files[uri] == nil {
			removed = append(removed, uri)
		}
	}
	changed := len(removed) > 0
	if changed {
		l.mcp.RemoveResources(removed...)
	}
	var added []*served
	for uri, f := range cat.files {
		if o := old.files[uri]; o != nil && o.digest == f.digest && o.size == f.size && sameResource(o.res, f.res) {
			continue
		}
		added = append(added, f)
	}
	slices.SortFunc(added, func(a, b *served) int { return strings.Compare(a.res.URI, b.res.URI) })
	for _, f := range added {
		l.mcp.AddResource(f.res, l.readResource)
		changed = true
	}
	if !changed && !sameSkills(old.skills, cat.skills) {
		for _, e := range cat.skills {
			l.mcp.AddResource(cat.files[e.URI].res, l.readResource)
			break
		}
	}
}

func sameResource(a, b *mcp.Resource) bool {
	return a.URI == b.URI && a.Name == b.Name && a.Description == b.Description && a.MIMEType == b.MIMEType && a.Size == b.Size
}

func sameSkills(a, b []skill.Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].URI != b[i].URI || !slices.Equal(a[i].Resources, b[i].Resources) || !reflect.DeepEqual(a[i].Frontmatter, b[i].Frontmatter) {
			return false
		}
	}
	return true
}

// readResource serves resources/read from disk. Bytes that no longer match
// the catalog are still served as they are now (the file is the truth),
// after a rescan, so that the skills/get a host makes on the mismatch
// already returns the new digest.
func (l *library) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	cat := l.cat.Load()
	f := cat.files[uri]
	if f == nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	b, err := l.sc.readServed(f.path)
	if err != nil {
		l.log.Warn("read failed", "op", "resources/read", "uri", uri, "path", f.path, "err", err)
		l.rescanIfCurrent(cat.gen, f.rel)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		return nil, fmt.Errorf("read %s: %w", uri, unwrapPathError(err))
	}
	if int64(len(b)) != f.size || skill.DigestOf(b) != f.digest {
		l.log.Info("file changed since scan", "op", "resources/read", "uri", uri, "path", f.path)
		l.rescanIfCurrent(cat.gen, f.rel)
	}
	c := &mcp.ResourceContents{URI: uri, MIMEType: f.res.MIMEType}
	if len(b) > 0 && utf8.Valid(b) {
		c.Text = string(b)
	} else {
		// An empty file goes out as an empty blob: an empty text would be
		// dropped from the JSON (omitempty) and leave neither field.
		c.Blob = b
		if c.Blob == nil {
			c.Blob = []byte{}
		}
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
}
