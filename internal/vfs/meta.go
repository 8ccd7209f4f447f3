package vfs

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillfs/skillfs/internal/control/wire"
	"github.com/skillfs/skillfs/internal/render"
	"github.com/skillfs/skillfs/verify"
)

// generated are the files under .skillfs: index.json, index.md,
// status.json and servers/LABEL.md, rendered from every origin's state.
// Each is taken as a snapshot on stat and kept, with its own time, for the
// reads that follow. index.json (and the Index the others are made from)
// is rendered only when what it is made of changed (snapshotIndex); the
// others are small (status.json) or bounded (the Markdown).
type generated struct {
	f     *Core
	mu    sync.Mutex
	cache map[string]rendering // by path
	// control is the control socket's path (controlfile.go).
	control atomic.Pointer[string]

	// index is the last Index and its index.json, rendered once per change
	// of what they are made of (indexKey) rather than on every stat.
	indexMu sync.Mutex
	index   *indexSnapshot
}

// indexSnapshot is an Index, its index.json, and what they were made of.
// idx is the person's view (the control API: every row); model is what
// the generated files are rendered from: under approval: required, nothing
// a server chose for a skill that is not approved (modelIndex).
type indexSnapshot struct {
	key   []originKey
	idx   Index
	model Index
	json  []byte
}

// originKey is what one origin's rows of index.json are made of: its tree
// (catalog, approvals, held-back skills) and the counts of changes of its
// failed reads, content flags and verified files. Comparing keys is
// O(origins), where rendering is O(skills).
type originKey struct {
	label                   string
	t                       *tree
	failures, flags, verify uint64
}

func (m *generated) indexKey() []originKey {
	var key []originKey
	for label, o := range m.f.all() {
		key = append(key, originKey{label: label, t: o.cat.current(),
			failures: o.rd.failures.gen.Load(), flags: o.rd.flags.gen.Load(), verify: o.rd.learned.gen.Load()})
	}
	return key
}

// snapshotIndex returns the Index and index.json of the current state,
// rendering them only when it changed since the last call.
func (m *generated) snapshotIndex() *indexSnapshot {
	m.indexMu.Lock()
	defer m.indexMu.Unlock()
	key := m.indexKey()
	if m.index != nil && slices.Equal(m.index.key, key) {
		return m.index
	}
	idx, model := m.buildIndex()
	m.index = &indexSnapshot{key: key, idx: idx, model: model, json: render.IndexJSON(model, MaxIndexJSONBytes)}
	return m.index
}

// The generated files under .skillfs/.
const (
	metaIndexJSON = render.IndexJSONFile
	metaIndexMD   = render.IndexMDFile
	metaStatus    = render.StatusFile
	metaCatalog   = render.CatalogFile
)

var metaFiles = []string{metaIndexJSON, metaIndexMD, metaStatus, ControlFileName, metaCatalog}

func metaIno(p string) uint64 { return inoFor("\x00meta", p, p == MetaDir || p == metaServers) }

// metaServers is .skillfs/servers, the directory of per-server index
// files (internal/render/indexmd.go).
const metaServers = MetaDir + "/" + render.ServersDir

// readMetaDir lists .skillfs or .skillfs/servers.
func (m *generated) readMetaDir(p string) ([]DirEntry, error) {
	switch p {
	case MetaDir:
		out := make([]DirEntry, 0, len(metaFiles)+1)
		for _, name := range metaFiles {
			out = append(out, DirEntry{Name: name, Kind: KindFile, Ino: metaIno(MetaDir + "/" + name)})
		}
		return append(out, DirEntry{Name: render.ServersDir, Kind: KindDir, Ino: metaIno(metaServers)}), nil
	case metaServers:
		labels := m.f.labels()
		out := make([]DirEntry, 0, len(labels))
		for _, label := range labels {
			out = append(out, DirEntry{Name: label + ".md", Kind: KindFile, Ino: metaIno(render.ServerFile(label))})
		}
		return out, nil
	}
	if _, err := m.statMeta(p); err != nil {
		return nil, err
	}
	return nil, ErrNotDir
}

func (m *generated) statMeta(p string) (Attr, error) {
	f := m.f
	if p == MetaDir || p == metaServers {
		return Attr{Kind: KindDir, Ino: metaIno(p), Mtime: f.started}, nil
	}
	b, err := m.snapshotMeta(p)
	if err != nil {
		return Attr{}, err
	}
	return Attr{Kind: KindFile, Ino: metaIno(p), Size: int64(len(b)), Mtime: m.metaTime(p), Volatile: true}, nil
}

// Generated files are snapshots. Stat (the kernel's lookup and getattr)
// takes a fresh one (index.json: the cached rendering unless something it
// says changed); reads serve the last snapshot. The kernel asks for
// the attributes before it reads (they are never cached), so a reader sees
// the state of that moment, and the size it was told matches the bytes it
// gets. A snapshot whose bytes did not change keeps its time, so that the
// kernel keeps its pages.
type rendering struct {
	b     []byte
	sum   [32]byte
	mtime time.Time // content last changed
}

func (m *generated) metaTime(p string) time.Time {
	f := m.f
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.cache[p]; ok {
		return r.mtime
	}
	return f.started
}

// snapshotMeta renders a generated file afresh and keeps it for reads.
func (m *generated) snapshotMeta(p string) ([]byte, error) {
	f := m.f
	b, err := m.render(p)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cache == nil {
		m.cache = map[string]rendering{}
	}
	old, had := m.cache[p]
	if had && len(b) > 0 && len(old.b) == len(b) && &old.b[0] == &b[0] {
		// The same snapshot (index.json between changes): nothing to hash.
		return b, nil
	}
	r := rendering{b: b, sum: sha256.Sum256(b), mtime: f.now()}
	if had && old.sum == r.sum {
		r.mtime = old.mtime
	}
	m.cache[p] = r
	return b, nil
}

// renderMeta returns the last snapshot of a generated file, taking one if
// there is none.
func (m *generated) renderMeta(p string) ([]byte, error) {
	m.mu.Lock()
	r, ok := m.cache[p]
	m.mu.Unlock()
	if ok {
		return r.b, nil
	}
	return m.snapshotMeta(p)
}

func (m *generated) render(p string) ([]byte, error) {
	f := m.f
	switch strings.TrimPrefix(p, MetaDir+"/") {
	case metaIndexJSON:
		return m.snapshotIndex().json, nil
	case metaIndexMD:
		return render.IndexMD(m.snapshot()), nil
	case metaStatus:
		return render.JSON(m.modelStatus())
	case metaCatalog:
		return render.CatalogMD(m.snapshot()), nil
	case ControlFileName:
		return render.JSON(m.controlEndpoint())
	}
	if name, ok := strings.CutPrefix(p, metaServers+"/"); ok {
		if label, ok := strings.CutSuffix(name, ".md"); ok && f.has(label) {
			if b, ok := render.ServerMD(m.snapshot(), label); ok {
				return b, nil
			}
		}
	}
	return nil, ErrNotExist
}

// Index describes every skill of every origin, held, waiting for approval
// or rejected: the person's view, for the control API. It is a snapshot:
// callers must not change it. The generated files are rendered from
// modelIndex instead.
func (m *generated) Index() Index { return m.snapshotIndex().idx }

// modelIndex is what index.json, index.md and servers/LABEL.md are
// rendered from: the Index without the rows of skills an origin under
// approval: required has not got approved (pending, changed, refused) nor
// its rejected ones, only counted (PendingApproval, RejectedNotShown). A
// model reads these files before the person approved anything, and every
// string of such a row (path, URI, name, description) is the server's.
func (m *generated) modelIndex() Index { return m.snapshotIndex().model }

// buildIndex works out the Index afresh, and the model's view of it.
func (m *generated) buildIndex() (idx, model Index) {
	f := m.f
	idx = Index{Note: render.IndexNote, Skills: []SkillInfo{}}
	model = Index{Note: render.IndexNote, Skills: []SkillInfo{}}
	for label, o := range f.all() {
		rows := o.rows()
		t := rows.t
		if t.truncated != "" {
			if idx.Truncated == nil {
				idx.Truncated = map[string]string{}
			}
			idx.Truncated[label] = t.truncated
		}
		if t.withheld != "" {
			if idx.Withheld == nil {
				idx.Withheld = map[string]string{}
			}
			idx.Withheld[label] = t.withheld
		}
		// hide: the rows of skills not approved, and of rejected ones,
		// are only counted in the model's view.
		hide := o.approvals.required()
		failures := o.rd.failures.snapshot()
		for _, sn := range t.skills {
			si := rows.skill(sn, failures)
			idx.Skills = append(idx.Skills, si)
			model.Skills = append(model.Skills, si)
		}
		for _, h := range t.waiting {
			si := rows.waiting(h)
			idx.Skills = append(idx.Skills, si)
			switch {
			case !hide:
				model.Skills = append(model.Skills, si)
			case si.State == wire.SkillRejected:
				countRejected(&model, label, si.Reason)
			default:
				if model.PendingApproval == nil {
					model.PendingApproval = map[string]int{}
				}
				model.PendingApproval[label]++
			}
		}
		for _, r := range t.rejected {
			si := SkillInfo{Origin: label, URI: r.URI, State: wire.SkillRejected, Reason: string(r.Reason), Detail: r.Detail}
			if u, err := verify.ParseURI(r.URI); err == nil {
				if d, ok := u.Parent(); ok {
					si.Path = joinPath(label, d.Path())
				}
			}
			idx.Skills = append(idx.Skills, si)
			if hide {
				countRejected(&model, label, si.Reason)
			} else {
				model.Skills = append(model.Skills, si)
			}
		}
	}
	model.Withheld = idx.Withheld
	for label, why := range idx.Truncated {
		if model.Truncated == nil {
			model.Truncated = map[string]string{}
		}
		model.Truncated[label] = why
		if o, ok := f.branch(label); ok {
			model.Truncated[label] = modelTruncated(why, o.approvals.required())
		}
	}
	// Each view names collisions among its own rows only: the model's
	// must not name a path it does not show.
	setCollisions(idx.Skills)
	setCollisions(model.Skills)
	return idx, model
}

// capNamed is the text of a cap that names the skill it stopped at:
// "the next skill, URI, lists N" (the listing), "URI not held" (a skill
// confirmed with skills/get, ErrListCap).
var capNamed = []string{"the next skill, ", ErrListCap.Error()}

// modelTruncatedText replaces, for the generated files, a truncated note
// that names a skill (a string the server chose) under approval: required.
const modelTruncatedText = "the listing reached a cap (max_list_entries, max_list_resources or max_list_bytes); the user sees which with `skillfs status`"

// modelTruncated is why an origin's listing was cut, as the generated
// files say it: under approval: required, without a skill's URI.
func modelTruncated(why string, required bool) string {
	if !required {
		return why
	}
	for _, c := range capNamed {
		if strings.Contains(why, c) {
			return modelTruncatedText
		}
	}
	return why
}

// modelStatus is status.json: Status, with each truncated note as
// modelTruncated says it and the instructions as modelInstructions does.
func (m *generated) modelStatus() Status {
	st := m.Status()
	for i := range st.Origins {
		o, ok := m.f.branch(st.Origins[i].Label)
		if !ok {
			continue
		}
		required := o.approvals.required()
		if st.Origins[i].Truncated != "" {
			st.Origins[i].Truncated = modelTruncated(st.Origins[i].Truncated, required)
		}
		modelInstructions(&st.Origins[i], required)
	}
	return st
}

// countRejected counts a rejected skill in x.RejectedNotShown.
func countRejected(x *Index, label, reason string) {
	if x.RejectedNotShown == nil {
		x.RejectedNotShown = map[string]map[string]int{}
	}
	if x.RejectedNotShown[label] == nil {
		x.RejectedNotShown[label] = map[string]int{}
	}
	x.RejectedNotShown[label][cmp.Or(reason, "unknown")]++
}

// setCollisions fills name_collisions in rows.
func setCollisions(rows []SkillInfo) {
	byName := map[string][]string{}
	// Each row names a few of the others of its name and counts them all:
	// naming all of them would make the index grow as the square of the
	// skills sharing a name.
	for _, s := range rows {
		if s.State != wire.SkillRejected && s.Name != "" {
			byName[s.Name] = append(byName[s.Name], s.Path)
		}
	}
	for i := range rows {
		s := &rows[i]
		if s.State == wire.SkillRejected || s.Name == "" {
			continue
		}
		// same holds this row too: the others are one fewer. Only the
		// first few are walked.
		same := byName[s.Name]
		s.CollisionCount = len(same) - 1
		for _, p := range same {
			if len(s.Collisions) == MaxCollisionExamples || len(s.Collisions) == s.CollisionCount {
				break
			}
			if p != s.Path {
				s.Collisions = append(s.Collisions, p)
			}
		}
	}
}

// Status reports every origin.
func (m *generated) Status() Status {
	f := m.f
	ss := f.opts.Store.Stats()
	st := Status{Version: f.opts.Version, StartedAt: f.started, Origins: []OriginStatus{},
		Cache:  CacheStatus{MemoryBytes: ss.MemoryBytes, MemoryHits: ss.MemoryHits, DiskLoads: ss.DiskLoads, Discards: ss.Discards, PendingWrites: ss.PendingWrites},
		Reload: f.reload.Load()}
	if sz := f.opts.Store.Size(); sz.MaxSize > 0 {
		st.Cache.MaxSize = sz.MaxSize
		if sz.OverHeld {
			st.Cache.HeldOverMaxSize = sz.HeldBytes
		}
	}
	for label, o := range f.all() {
		rs := o.res.Status()
		t := o.cat.current()
		kind := string(o.cfg.Kind)
		if f.opts.Dial[label] != nil {
			kind = "in-process"
		}
		ost := OriginStatus{
			Label: label, ID: o.id, Transport: kind, State: wire.OriginState(rs.State),
			Protocol: rs.Protocol, ServerName: rs.ServerName, DirectoryRead: rs.DirectoryRead,
			Catalog: t.source, Skills: len(t.skills), Rejected: len(t.rejected), Truncated: t.truncated,
			ListResources: t.resources, ListBytes: t.bytes, CacheScope: t.scope, Withheld: t.withheld,
			CatalogUnsaved: o.store.CatalogUnsaved(),
			ListedAt:       rs.ListedAt, BytesFetched: rs.BytesFetched, Budget: rs.Budget, BudgetWindow: rs.BudgetWindow.String(), Reads: rs.Reads,
			KeepFetched: rs.KeepFetched, KeepBudget: rs.KeepBudget,
			LastError: rs.LastError, LastErrorAt: rs.LastErrorAt, FailedStarts: rs.FailedStarts,
			Instructions: rs.Instructions, InstructionsBytes: rs.InstructionsBytes,
		}
		failures := o.rd.failures.snapshot()
		ost.FailedReads = len(failures)
		var last failure
		var lastPath string
		for p, fl := range failures {
			if fl.at.After(last.at) {
				last, lastPath = fl, p
			}
		}
		if last.at.After(ost.LastErrorAt) {
			ost.LastError = fmt.Sprintf("read %s: %s: %s", joinPath(label, lastPath), last.reason, last.detail)
			ost.LastErrorAt = last.at
		}
		st.Origins = append(st.Origins, ost)
	}
	return st
}

// has reports whether an origin has label.
func (b *branches) has(label string) bool {
	_, ok := b.branch(label)
	return ok
}

// Xattr is one extended attribute.
type Xattr struct {
	Name  string
	Value string
}

// Xattrs returns the extended attributes of a mount-relative path.
// XattrPrefix begins the name of every extended attribute skillfs shows.
const XattrPrefix = "user.skillfs."

func (c *Core) Xattrs(ctx context.Context, p string) ([]Xattr, error) {
	at := c.route(p)
	switch at.kind {
	case atRoot, atMeta:
		if _, err := c.Stat(ctx, p); err != nil {
			return nil, err
		}
		return nil, nil
	case atNowhere:
		return nil, ErrNotExist
	}
	o, rest := at.o, at.rest
	n, err := o.lookup(ctx, rest)
	if err != nil {
		return nil, err
	}
	t := o.cat.current()
	xs := []Xattr{{"user.skillfs.origin", o.cfg.Label}}
	if n.isDir() {
		if n.skill != nil {
			xs = append(xs, Xattr{"user.skillfs.uri", n.skill.s.Dir.String()}, Xattr{"user.skillfs.skill", n.skill.uri()})
		} else if u, err := verify.URIFromPath(rest); err == nil && rest != "" {
			xs = append(xs, Xattr{"user.skillfs.uri", u.String()})
		}
		return xs, nil
	}
	file := n.file
	xs = append(xs, Xattr{"user.skillfs.uri", file.f.URI.String()})
	if sn := t.skillAt(parentOf(rest)); sn != nil {
		xs = append(xs, Xattr{"user.skillfs.skill", sn.uri()})
	}
	if file.dynamic {
		xs = append(xs, Xattr{"user.skillfs.verified", "unverifiable"})
		return xs, nil
	}
	xs = append(xs, Xattr{"user.skillfs.digest", string(file.f.Resource.Digest)})
	verified := "no"
	if o.rd.learned.isVerified(file) || (len(file.entryOf) == 0 && file.conflict == "" && o.store.Has(file.f.Resource.Digest)) {
		// A SKILL.md is verified only once it passed the comparison with
		// the frontmatter of the entry it is served under, in this run.
		verified = "yes"
	}
	xs = append(xs, Xattr{"user.skillfs.verified", verified})
	return xs, nil
}
