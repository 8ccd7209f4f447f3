package resolver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/resolver/transport"
	"github.com/skillfs/skillfs/verify"
)

// A Catalog is the result of one enumeration of an origin.
type Catalog struct {
	// Skills are the entries that passed verify.CheckEntry, in listing
	// order, including pinned skills confirmed with skills/get.
	Skills []*verify.Skill
	// Rejected are the entries left out, with the reason.
	Rejected []Rejection
	// Truncated is empty when the listing was followed to its end, and
	// otherwise says which cap stopped it.
	Truncated string
	// Pinned are the canonical URIs of the skills confirmed because the
	// config pins them.
	Pinned map[string]bool
	// Named are the canonical URIs of the skills confirmed because the
	// server's instructions name them (instructions.go).
	Named map[string]bool
	// TTL is the listing's ttlMs freshness hint, or zero.
	TTL time.Duration
	// CacheScope is ScopePrivate when any page of the listing said so
	// (or named a scope skillfs does not know), else ScopePublic.
	CacheScope string
	// Withheld, when set, says why the catalog must not be shown: a
	// private listing on a mount shared with other users. Skills are still
	// filled in, so that the catalog can be saved for the mounting user.
	Withheld string
	// Resources and Bytes are what the listing cost against the caps:
	// resources of the kept skills, and bytes of the entries received.
	Resources int
	Bytes     int64
	At        time.Time
}

// A Rejection is an entry the origin served that skillfs left out.
type Rejection struct {
	URI    string
	Reason verify.Reason
	Detail string
}

// Reasons the resolver adds to verify's.
const (
	// ReasonDynamic: a "dynamic" skill on an origin that does not allow them.
	ReasonDynamic verify.Reason = "dynamic"
	// ReasonConflict: the listing carried two different entries for one URI.
	ReasonConflict verify.Reason = "conflict"
	// ReasonPinFailed: a pinned URI that skills/get did not confirm.
	ReasonPinFailed verify.Reason = "pin-failed"
)

func rejection(uri string, err error) Rejection {
	r := Rejection{URI: uri, Reason: verify.ReasonOf(err), Detail: err.Error()}
	var ve *verify.Error
	if errors.As(err, &ve) {
		r.Detail = ve.Detail
		if r.URI == "" {
			r.URI = ve.Subject
		}
	}
	if r.Reason == "" {
		r.Reason = verify.Malformed
	}
	// A rejection is kept for the index: its size must not be the server's
	// choice.
	r.URI, r.Detail = clip(r.URI, verify.MaxURILength), clip(r.Detail, 1024)
	return r
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// enumerate follows skills/list to its end within the origin's caps, checks
// every entry, and confirms the pinned URIs.
func (o *Session) enumerate(ctx context.Context, live *link) (*Catalog, error) {
	lctx, cancel := context.WithTimeout(ctx, o.limits.ListTimeout)
	defer cancel()
	cat := &Catalog{CacheScope: ScopePublic}
	l := &lister{o: o, live: live, cat: cat, byURI: map[string]int{}, conflicted: map[string]bool{}}
	if err := l.listPages(ctx, lctx); err != nil {
		return nil, err
	}
	if cat.Truncated != "" {
		o.log.Warn("skills/list truncated", "op", "list", "err", cat.Truncated)
	}
	l.confirmPins(lctx)
	l.confirmNamed(lctx)
	l.compact()
	cat.Resources, cat.Bytes = l.resources, l.bytes
	if cat.CacheScope == ScopePrivate && o.cfg.Shared {
		cat.Withheld = WithheldReason(len(cat.Skills))
		o.log.Warn("listing withheld from the shared mount", "op", "list", "err", cat.Withheld)
	}
	cat.At = time.Now()
	return cat, nil
}

// listPages follows skills/list page by page within lctx (the listing's
// timeout; ctx is the session's), admitting each page's skills to l, until
// the last page, a cap, a repeated cursor or a failed page; a listing that
// stops early says why in l.cat.Truncated. Only a first page that fails is
// an error.
func (l *lister) listPages(ctx, lctx context.Context) error {
	o, cat, cs := l.o, l.cat, l.live.cs
	seenCursors := map[string]bool{}
	cursor := ""
	call := func(ctx context.Context, cursor string) (*listResult, error) {
		cctx, ccancel := context.WithTimeout(ctx, o.limits.CallTimeout)
		defer ccancel()
		return mcp.CallCustomMethod[*listParams, *listResult](transport.WithResponseLimit(cctx, maxFrame(o.limits.MaxFileSize)), cs, skill.MethodList, &listParams{ListParams: skill.ListParams{Cursor: cursor}})
	}
	// The next page is asked for while this one is admitted, when
	// admitting it cannot end the listing: the server's time and the
	// checking overlap, and the requests are the ones a page-by-page
	// listing sends.
	var ahead *prefetch
	defer func() { ahead.cancel() }()
	for page := 0; ; page++ {
		if page >= o.limits.MaxListPages {
			cat.Truncated = fmt.Sprintf("stopped after %d pages (max_list_pages)", page)
			return nil
		}
		var res *listResult
		var err error
		if ahead != nil {
			res, err = ahead.wait()
			ahead = nil
		} else {
			res, err = call(lctx, cursor)
		}
		if err != nil {
			return l.pageFailed(ctx, lctx, page, err)
		}
		cat.noteAnswer(page, res)
		if next := res.NextCursor; next != "" && page+1 < o.limits.MaxListPages && !seenCursors[next] && l.cannotReachCap(res.Skills) {
			ahead = startPrefetch(lctx, func(ctx context.Context) (*listResult, error) { return call(ctx, next) })
		}
		if stop := l.admitPage(res.Skills); stop != "" {
			cat.Truncated = stop
			return nil
		}
		if res.NextCursor == "" {
			return nil
		}
		// A cap reached exactly: no page more is asked for.
		if stop := l.reached(); stop != "" {
			cat.Truncated = stop
			return nil
		}
		if seenCursors[res.NextCursor] {
			cat.Truncated = fmt.Sprintf("stopped at page %d: the server repeated a cursor", page+1)
			return nil
		}
		seenCursors[res.NextCursor] = true
		cursor = res.NextCursor
	}
}

// pageFailed is what a page that failed with err means: the listing fails
// when it was the first page (page 0), and otherwise ends, truncated.
func (l *lister) pageFailed(ctx, lctx context.Context, page int, err error) error {
	o, cat := l.o, l.cat
	if lctx.Err() != nil && ctx.Err() == nil {
		if page == 0 {
			return fmt.Errorf("skills/list: %w: no answer within %v", ErrTimeout, o.limits.ListTimeout)
		}
		cat.Truncated = fmt.Sprintf("stopped after %v (list_timeout)", o.limits.ListTimeout)
		return nil
	}
	err = classify(err)
	if page == 0 {
		return fmt.Errorf("skills/list: %w", err)
	}
	cat.Truncated = fmt.Sprintf("page %d failed: %v", page+1, err)
	return nil
}

// noteAnswer takes a page's cache fields: the first page's ttlMs, and
// private when any page is.
func (cat *Catalog) noteAnswer(page int, res *listResult) {
	if page == 0 && res.TTLMs != nil && *res.TTLMs > 0 {
		cat.TTL = time.Duration(*res.TTLMs) * time.Millisecond
	}
	if scopeOf(res.CacheScope) == ScopePrivate {
		cat.CacheScope = ScopePrivate
	}
}

// A lister builds one catalog and counts what it costs against the caps.
type lister struct {
	o          *Session
	live       *link // the session listed
	cat        *Catalog
	byURI      map[string]int // canonical uri → index in cat.Skills
	conflicted map[string]bool
	removed    bool // cat.Skills has nil holes (conflicts) to compact

	entries   int   // entries received, kept or rejected
	bytes     int64 // their bytes, as received
	resources int   // resources of the kept skills
}

// A decoded entry is what verify.DecodeEntry made of one raw entry.
type decoded struct {
	size int64           // of the raw entry
	raw  json.RawMessage // kept only when the entry is rejected
	s    *verify.Skill
	err  error
}

// admitPage admits a page's entries in order, as admit one by one would.
// Decoding and checking an entry is pure and most of a listing's CPU, so
// the entries the entry and byte caps let through are decoded on every
// core first; each raw entry is let go once it is decoded.
func (l *lister) admitPage(raws []json.RawMessage) string {
	lim := l.o.limits
	n, entries, bytes := 0, l.entries, l.bytes
	for _, raw := range raws {
		if entries >= lim.MaxListEntries || bytes+int64(len(raw)) > lim.MaxListBytes {
			break
		}
		entries, bytes, n = entries+1, bytes+int64(len(raw)), n+1
	}
	out := make([]decoded, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				d := &out[i]
				d.size = int64(len(raws[i]))
				d.s, d.err = verify.DecodeEntry(raws[i], l.o.entries)
				if d.err != nil {
					d.raw = raws[i]
				}
				raws[i] = nil
			}
		})
	}
	wg.Wait()
	for i, raw := range raws {
		var d *decoded
		if i < n {
			d = new(out[i])
			out[i] = decoded{} // nothing of the page outlives its admission
		}
		if stop := l.admit(raw, d); stop != "" {
			return stop
		}
	}
	return ""
}

// admit checks one raw entry, or takes d, its decoding, and adds it to
// the catalog or its rejections. It returns why the listing stops, or "":
// the entry that would cross a cap is not kept, so a skill is never kept
// in part.
func (l *lister) admit(raw json.RawMessage, d *decoded) string {
	lim := l.o.limits
	if l.entries >= lim.MaxListEntries {
		return fmt.Sprintf("stopped at %d entries (max_list_entries)", l.entries)
	}
	size := int64(len(raw))
	if d != nil {
		raw, size = d.raw, d.size
	}
	if l.bytes+size > lim.MaxListBytes {
		return fmt.Sprintf("stopped at %d bytes of entries (max_list_bytes is %d); the next entry has %d", l.bytes, lim.MaxListBytes, size)
	}
	l.entries++
	l.bytes += size
	var s *verify.Skill
	var err error
	if d != nil {
		s, err = d.s, d.err
	} else {
		s, err = verify.DecodeEntry(raw, l.o.entries)
	}
	if err != nil {
		rej := rejection(rawURI(raw), err)
		l.o.log.Warn("skill rejected", "op", "list", "uri", rej.URI, "err", rej.Detail)
		l.cat.Rejected = append(l.cat.Rejected, rej)
		return ""
	}
	if n := len(s.Files); l.resources+n > lim.MaxListResources {
		return fmt.Sprintf("stopped at %d resources (max_list_resources is %d); the next skill, %s, lists %d", l.resources, lim.MaxListResources, s.URI, n)
	}
	l.add(s)
	return ""
}

// cannotReachCap reports whether admitting raws leaves every cap of the
// listing unreached, whatever the entries turn out to hold: each resource
// is a JSON object, so an entry lists at most as many as it has '{'.
func (l *lister) cannotReachCap(raws []json.RawMessage) bool {
	lim := l.o.limits
	size, objects := l.bytes, l.resources
	for _, raw := range raws {
		size += int64(len(raw))
		objects += bytes.Count(raw, []byte{'{'})
	}
	return l.entries+len(raws) < lim.MaxListEntries && size < lim.MaxListBytes && objects < lim.MaxListResources
}

// A prefetch is a page being asked for.
type prefetch struct {
	stop context.CancelFunc
	done chan struct{}
	res  *listResult
	err  error
}

func startPrefetch(ctx context.Context, call func(context.Context) (*listResult, error)) *prefetch {
	ctx, stop := context.WithCancel(ctx)
	p := &prefetch{stop: stop, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.res, p.err = call(ctx)
	}()
	return p
}

func (p *prefetch) wait() (*listResult, error) {
	<-p.done
	p.stop()
	return p.res, p.err
}

// cancel abandons a page no longer wanted and waits for its call to end.
func (p *prefetch) cancel() {
	if p != nil {
		p.stop()
		<-p.done
	}
}

// reached says which cap the listing has reached exactly, or "".
func (l *lister) reached() string {
	lim := l.o.limits
	switch {
	case l.entries >= lim.MaxListEntries:
		return fmt.Sprintf("stopped at %d entries (max_list_entries)", l.entries)
	case l.bytes >= lim.MaxListBytes:
		return fmt.Sprintf("stopped at %d bytes of entries (max_list_bytes)", l.bytes)
	case l.resources >= lim.MaxListResources:
		return fmt.Sprintf("stopped at %d resources (max_list_resources)", l.resources)
	}
	return ""
}

func (l *lister) add(s *verify.Skill) {
	o, cat := l.o, l.cat
	key := s.URI.String()
	if s.Dynamic && !o.cfg.AllowDynamic {
		cat.Rejected = append(cat.Rejected, Rejection{URI: key, Reason: ReasonDynamic,
			Detail: "the server publishes no digests for this skill; set allow_dynamic for this server to show it unverified"})
		return
	}
	if l.conflicted[key] {
		return
	}
	if i, ok := l.byURI[key]; ok {
		if cat.Skills[i].Entry.Equal(s.Entry) {
			return
		}
		// A hole, compacted at the end: removing in place would make a
		// listing of many conflicts quadratic.
		l.conflicted[key] = true
		l.resources -= len(cat.Skills[i].Files)
		cat.Skills[i] = nil
		l.removed = true
		delete(l.byURI, key)
		cat.Rejected = append(cat.Rejected, Rejection{URI: key, Reason: ReasonConflict,
			Detail: "the listing carries two different entries for this skill"})
		o.log.Warn("skill rejected", "op", "list", "uri", key, "err", "two different entries for one skill")
		return
	}
	l.byURI[key] = len(cat.Skills)
	cat.Skills = append(cat.Skills, s)
	l.resources += len(s.Files)
}

// compact removes the holes conflicts left in cat.Skills.
func (l *lister) compact() {
	if l.removed {
		l.cat.Skills = slices.DeleteFunc(l.cat.Skills, func(s *verify.Skill) bool { return s == nil })
		l.removed = false
	}
}

// rawURI extracts the uri of an entry that failed to decode, for the log.
func rawURI(raw json.RawMessage) string {
	var e struct {
		URI any `json:"uri"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return ""
	}
	s, _ := e.URI.(string)
	if len(s) > 512 {
		s = s[:512] + "…"
	}
	return s
}

// confirmPins calls skills/get for each pinned URI the listing did not carry.
func (l *lister) confirmPins(ctx context.Context) {
	o, cat := l.o, l.cat
	for _, pin := range o.cfg.Pin {
		u, err := verify.ParseURI(pin)
		if err != nil {
			cat.Rejected = append(cat.Rejected, rejection(pin, err))
			continue
		}
		if _, ok := l.byURI[u.String()]; ok {
			continue
		}
		s, err := o.GetSkill(ctx, pin)
		if err != nil {
			reason := verify.ReasonOf(err)
			if reason == "" {
				reason = ReasonPinFailed
			}
			cat.Rejected = append(cat.Rejected, Rejection{URI: pin, Reason: reason, Detail: err.Error()})
			o.log.Warn("pinned skill not confirmed", "op", "get", "uri", pin, "err", err)
			continue
		}
		delete(l.conflicted, s.URI.String()) // skills/get settles a conflict
		l.add(s)
		if s.Private {
			cat.CacheScope = ScopePrivate
		}
		if cat.Pinned == nil {
			cat.Pinned = map[string]bool{}
		}
		cat.Pinned[s.URI.String()] = true
	}
}

// GetSkill asks the server for one skill's current entry with skills/get
// and checks it. The entry must describe the URI asked for.
func (o *Session) GetSkill(ctx context.Context, uri string) (*verify.Skill, error) {
	s, _, err := o.getSkill(ctx, uri)
	return s, err
}

// getSkill is GetSkill, also returning the size of the entry as received.
func (o *Session) getSkill(ctx context.Context, uri string) (_ *verify.Skill, size int64, err error) {
	defer func() { err = redact(err) }()
	want, err := verify.ParseURI(uri)
	if err != nil {
		return nil, 0, err
	}
	// The Final text: params.uri MUST be the URI of a skill's SKILL.md.
	if len(want.Segments) == 0 || want.Name() != "SKILL.md" {
		return nil, 0, &verify.Error{Reason: verify.NotSkillMD, Subject: uri, Detail: "skills/get takes the URI of a skill's SKILL.md (…/SKILL.md)"}
	}
	l, err := o.board.session(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("skills/get %s: %w", uri, err)
	}
	if !l.declared {
		return nil, 0, fmt.Errorf("skills/get %s: %w", uri, ErrNoSkills)
	}
	cctx, cancel := context.WithTimeout(ctx, o.limits.CallTimeout)
	defer cancel()
	res, err := mcp.CallCustomMethod[*getParams, *getResult](transport.WithResponseLimit(cctx, maxFrame(o.limits.MaxFileSize)), l.cs, skill.MethodGet, &getParams{GetParams: skill.GetParams{URI: uri}})
	if err != nil {
		return nil, 0, fmt.Errorf("skills/get %s: %w", uri, o.board.lost(l, classify(err)))
	}
	if len(res.Skill) == 0 {
		return nil, 0, fmt.Errorf("skills/get %s: %w: no skill in the result", uri, ErrMalformed)
	}
	s, err := verify.DecodeEntry(res.Skill, o.entries)
	if err != nil {
		return nil, 0, err
	}
	if s.URI.String() != want.String() {
		return nil, 0, &verify.Error{Reason: verify.OutsideSkill, Subject: uri,
			Detail: fmt.Sprintf("skills/get answered with the entry of %s", s.URI)}
	}
	if s.Dynamic && !o.cfg.AllowDynamic {
		return nil, 0, &verify.Error{Reason: ReasonDynamic, Subject: uri,
			Detail: "the server publishes no digests for this skill; set allow_dynamic for this server to show it unverified"}
	}
	// A private answer is treated like a private listing: not shown on a
	// mount other users can read, and otherwise held (and saved) only with
	// the credentials it was asked with.
	if scopeOf(res.CacheScope) == ScopePrivate {
		if o.cfg.Shared {
			o.log.Warn("skills/get answer withheld from the shared mount", "op", "get", "uri", uri, "err", ErrPrivateEntry)
			return nil, 0, fmt.Errorf("skills/get %s: %w", uri, ErrPrivateEntry)
		}
		s.Private = true
	}
	return s, int64(len(res.Skill)), nil
}

// A DirChild is one child of a directory read.
type DirChild struct {
	URI verify.URI
	Dir bool
}

// ReadDir lists a directory with resources/directory/read, within the
// origin's caps. Children that are not direct, clean children of dir are
// dropped and logged.
func (o *Session) ReadDir(ctx context.Context, dir verify.URI) (_ []DirChild, err error) {
	defer func() { err = redact(err) }()
	if !o.DirectoryRead() {
		return nil, ErrNoDirectoryRead
	}
	l, err := o.board.session(ctx)
	if err != nil {
		return nil, fmt.Errorf("directory read %s: %w", dir, err)
	}
	var out []DirChild
	seen := map[string]bool{}
	seenCursors := map[string]bool{}
	cursor := ""
	for page := 0; page < o.limits.MaxDirPages; page++ {
		cctx, cancel := context.WithTimeout(ctx, o.limits.CallTimeout)
		res, err := mcp.CallCustomMethod[*readDirParams, *readDirResult](transport.WithResponseLimit(cctx, maxFrame(o.limits.MaxFileSize)), l.cs, skill.MethodReadDir, &readDirParams{ReadDirParams: skill.ReadDirParams{URI: dir.String(), Cursor: cursor}})
		cancel()
		if err != nil {
			if page == 0 {
				return nil, fmt.Errorf("directory read %s: %w", dir, o.board.lost(l, classify(err)))
			}
			o.log.Warn("directory read truncated", "op", "readdir", "uri", dir.String(), "err", err)
			return out, nil
		}
		if o.cfg.Shared && scopeOf(res.CacheScope) == ScopePrivate {
			return nil, fmt.Errorf("directory read %s: %w", dir, ErrPrivate)
		}
		for _, raw := range res.Resources {
			if len(out) >= o.limits.MaxDirEntries {
				o.log.Warn("directory read truncated", "op", "readdir", "uri", dir.String(), "err", fmt.Sprintf("more than %d children (max_dir_entries)", o.limits.MaxDirEntries))
				return out, nil
			}
			// Only uri and mimeType matter here: a child whose other fields
			// have odd types is still a child.
			var c struct {
				URI      string `json:"uri"`
				MIMEType string `json:"mimeType"`
			}
			if err := json.Unmarshal(raw, &c); err != nil {
				o.log.Warn("directory child dropped", "op", "readdir", "uri", dir.String(), "err", fmt.Errorf("malformed child: %w", err))
				continue
			}
			u, err := verify.ParseURI(c.URI)
			if err == nil {
				if p, ok := u.Parent(); !ok || p.String() != dir.String() {
					err = &verify.Error{Reason: verify.OutsideSkill, Subject: c.URI, Detail: fmt.Sprintf("not a direct child of %s", dir)}
				}
			}
			if err != nil {
				o.log.Warn("directory child dropped", "op", "readdir", "uri", c.URI, "err", err)
				continue
			}
			if seen[u.Name()] {
				continue
			}
			seen[u.Name()] = true
			out = append(out, DirChild{URI: u, Dir: c.MIMEType == skill.MIMEDirectory})
		}
		if res.NextCursor == "" {
			return out, nil
		}
		if seenCursors[res.NextCursor] {
			o.log.Warn("directory read truncated", "op", "readdir", "uri", dir.String(), "err", "the server repeated a cursor")
			return out, nil
		}
		seenCursors[res.NextCursor] = true
		cursor = res.NextCursor
	}
	o.log.Warn("directory read truncated", "op", "readdir", "uri", dir.String(), "err", fmt.Sprintf("stopped after %d pages (max_dir_pages)", o.limits.MaxDirPages))
	return out, nil
}
