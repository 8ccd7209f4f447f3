package vfs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/control/wire"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/textdiff"
	"github.com/skillfs/skillfs/resolver"
	"github.com/skillfs/skillfs/verify"
)

// Review: what `skillfs approve` shows before it asks (README, "Approval").
//
// For a skill approved once, approve shows each changed file as a diff
// against the version approved. So an approval keeps the bytes it was given
// for: its record names, in "kept", the digests of the skill's files within
// the caps below, and after the approval the mount fetches those the store
// lacks through the verified read path (store objects are named by digest,
// so what the record names is exactly what was approved). A file past the
// caps, or one whose bytes were not kept (a fetch that failed, a store
// cleared by hand), is shown by size and digest only. Objects an approval
// names are held: the store's eviction must leave them (heldDigests).
const (
	// MaxKeptFile is the largest file whose approved bytes are kept, and
	// the largest file a review diffs.
	MaxKeptFile = 256 << 10
	// MaxKeptSkill bounds the kept bytes of one skill's approval, and the
	// bytes one review fetches to diff: files past it, in URI order, are
	// shown by size and digest only.
	MaxKeptSkill = 1 << 20
)

// keptDigests are the digests an approval of s keeps: its files of a
// declared size within MaxKeptFile, in URI order, while their sum is
// within MaxKeptSkill.
func keptDigests(s *verify.Skill) []skill.Digest {
	rs := slices.Clone(s.Entry.Resources)
	slices.SortFunc(rs, func(x, y skill.Resource) int { return strings.Compare(x.URI, y.URI) })
	var out []skill.Digest
	var total int64
	seen := map[skill.Digest]bool{}
	for _, r := range rs {
		if r.Digest == "" || !r.HasSize || r.Size > MaxKeptFile || seen[r.Digest] {
			continue
		}
		if total+r.Size > MaxKeptSkill {
			break
		}
		total += r.Size
		seen[r.Digest] = true
		out = append(out, r.Digest)
	}
	return out
}

// heldDigests are the store objects the book's approvals name: every
// approved resource and every kept digest. Eviction from the store must
// never remove them: they are what a diff of the next change is taken
// against.
func (b *approvalBook) heldDigests() []skill.Digest {
	b.mu.Lock()
	defer b.mu.Unlock()
	set := map[skill.Digest]bool{}
	for _, rec := range b.m {
		addHeld(set, rec)
	}
	return slices.Sorted(maps.Keys(set))
}

func addHeld(set map[skill.Digest]bool, rec approvalRecord) {
	for _, r := range rec.Resources {
		if r.Digest != "" {
			set[r.Digest] = true
		}
	}
	for _, d := range rec.Kept {
		set[d] = true
	}
}

// ApprovalsHeld is heldDigests of an approvals.json as a store bucket holds
// it (store.Bucket.LoadApprovals), for a caller that works on the store of
// an origin not mounted (cache eviction): the objects it names must be kept.
func ApprovalsHeld(data []byte) ([]skill.Digest, error) {
	var sa savedApprovals
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&sa); err != nil {
		return nil, fmt.Errorf("read approvals: %w", err)
	}
	set := map[skill.Digest]bool{}
	for _, rec := range sa.Approvals {
		addHeld(set, rec)
	}
	return slices.Sorted(maps.Keys(set)), nil
}

// keepApproved queues, for the origin's keeper to fetch through the
// verified read path in the background, the kept files of an approval that
// the store lacks. It ends with the origin.
func (o *branch) keepApproved(sn *skillNode, kept []skill.Digest) {
	want := map[skill.Digest]bool{}
	for _, d := range kept {
		if !o.store.Has(d) {
			want[d] = true
		}
	}
	if len(want) == 0 || o.life == nil {
		return
	}
	var files []keepItem
	for i := range sn.s.Files {
		f := &sn.s.Files[i]
		if f.Resource != nil && want[f.Resource.Digest] {
			files = append(files, keepItem{sn: sn, f: f})
			delete(want, f.Resource.Digest)
		}
	}
	o.keep.add(o, files)
}

// A keeper fetches the kept files of an origin's approvals one at a time,
// in the order they were approved: `approve --all` of a hundred heavy
// skills is one queue against the server, not a hundred loops at once,
// and a file that two skills keep (or that a read stored meanwhile) is
// fetched once. Its fetches are charged to the origin's keep budget
// (resolver.KeepBudget, a quarter of limits.budget), never to the budget
// the mount's reads spend: approving many skills never leaves an agent
// over budget. Once the keep budget is spent the rest of the queue is
// dropped, in one log line; a later change to those files shows their
// new version in full (fileReviewer.review).
type keeper struct {
	mu      sync.Mutex
	queue   []keepItem
	running bool
	ended   chan struct{} // closed when the run under way ends
	// missed says, for an approved digest whose bytes could not be kept
	// in this run, why: a review of its next change says so. At most
	// maxMissed are remembered.
	missed map[skill.Digest]string
}

// maxMissed bounds keeper.missed.
const maxMissed = 1 << 14

type keepItem struct {
	sn *skillNode
	f  *verify.File
}

func (k *keeper) add(o *branch, items []keepItem) {
	if len(items) == 0 {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.queue = append(k.queue, items...)
	if !k.running {
		k.running, k.ended = true, make(chan struct{})
		go k.run(o)
	}
}

// wait waits for the run under way, if any, to end: once the origin has
// stopped, it ends at its next file (a fetch under way fails with the
// origin's life), and nothing it stores is written after the origin's
// supervisor is done.
func (k *keeper) wait() {
	k.mu.Lock()
	running, ended := k.running, k.ended
	k.mu.Unlock()
	if running {
		<-ended
	}
}

// next takes the queue's first file, or ends the run when the queue is
// empty or the origin has stopped.
func (k *keeper) next(o *branch) (keepItem, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.queue) == 0 || o.life.Err() != nil {
		k.queue, k.running = nil, false
		close(k.ended)
		return keepItem{}, false
	}
	it := k.queue[0]
	k.queue[0] = keepItem{}
	k.queue = k.queue[1:]
	return it, true
}

// miss records why d was not kept.
func (k *keeper) miss(d skill.Digest, why string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.missed == nil {
		k.missed = map[skill.Digest]string{}
	}
	if _, ok := k.missed[d]; ok || len(k.missed) < maxMissed {
		k.missed[d] = why
	}
}

// whyMissed says why the approved bytes of d were not kept in this run,
// or "" when the keeper knows of no failure.
func (k *keeper) whyMissed(d skill.Digest) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.missed[d]
}

// drop empties the queue, recording why for each file, and returns how
// many files it held.
func (k *keeper) drop(why string) int {
	k.mu.Lock()
	q := k.queue
	k.queue = nil
	k.mu.Unlock()
	for _, it := range q {
		k.miss(it.f.Resource.Digest, why)
	}
	return len(q)
}

// run fetches the queue. A file that fails is logged, at Info for the
// first failure of each skill and at Debug for the others: a server that
// fails every read of a hundred approved skills of 512 files each is a
// hundred lines, not 51,200. Over the keep budget, the run drops what
// is left and says so once.
func (k *keeper) run(o *branch) {
	var failed *skillNode
	for {
		it, ok := k.next(o)
		if !ok {
			return
		}
		if o.store.Has(it.f.Resource.Digest) {
			continue
		}
		_, err := o.rd.obtainFor(o.life, detachedNode(o.cfg.Label, it.sn, it.f), nil, forKeep)
		if err == nil {
			continue
		}
		if errors.Is(err, resolver.ErrOverBudget) {
			const why = "the mount's fetch to keep them after the approval was over the keep budget, a quarter of limits.budget"
			k.miss(it.f.Resource.Digest, why)
			n := k.drop(why)
			o.log.Info("keeping approved files for later diffs stopped at the keep budget (a quarter of limits.budget, apart from what reads spend); a change to the files not kept will show their new version in full",
				"op", "approve", "uri", it.f.URI.String(), "not_kept", n+1, "err", err)
			continue
		}
		k.miss(it.f.Resource.Digest, "the mount's fetch to keep them after the approval failed: "+err.Error())
		lvl := slog.LevelInfo
		if it.sn == failed {
			lvl = slog.LevelDebug
		}
		failed = it.sn
		o.log.Log(context.Background(), lvl, "keeping an approved file for later diffs failed; a change to it will show its new version in full", "op", "approve", "uri", it.f.URI.String(), "err", err)
	}
}

// detachedNode is a node for one file of sn, of the origin with label,
// checked against sn's entry alone, for a skill that may not be in the tree.
func detachedNode(label string, sn *skillNode, f *verify.File) *node {
	fn := &fileNode{f: f, owners: []*skillNode{sn}}
	if f.URI.String() == sn.uri() {
		fn.entryOf = []*skillNode{sn}
	}
	fn.setVersion()
	v := fn.version()
	p := f.URI.Path()
	return &node{path: p, ino: inoVersion(label, p, false, &v), file: fn}
}

// serverDesc says which server o is, its secrets masked as `skillfs config
// check` masks them.
func serverDesc(oc config.Origin) wire.ServerDesc {
	d := wire.ServerDesc{Label: oc.Label, Transport: string(oc.Kind)}
	if oc.Kind == config.Stdio {
		d.Command = append([]string{oc.Command}, oc.Args...)
		d.Env = slices.Sorted(maps.Keys(oc.Env))
		return d
	}
	d.URL = config.MaskURL(oc.URL)
	d.Headers = slices.Sorted(maps.Keys(oc.Headers))
	return d
}

// why says why a held-back skill waits, and what changed.
func (b *approvalBook) why(sn *skillNode) (string, *ApprovalChange) {
	rec, ok := b.get(sn.uri())
	if !ok {
		if b.approvedElsewhere(sn.uri()) {
			return wire.WhyServerEntry, nil
		}
		return wire.WhyNew, nil
	}
	ch := diffBindings(b.cfg.Label, rec.Binding, bindingOf(b.cfg, sn.s))
	if ch != nil && len(ch.Frontmatter) > 0 {
		return wire.WhyFrontmatter, ch
	}
	return wire.WhyContent, ch
}

// Review shows one skill as `skillfs approve` asks about it: its server,
// name, description and flags (with those SKILL.md's verified bytes show),
// and for a skill approved once each changed file as a unified diff of the
// verified bytes against those the approval kept. Binding is the digest of
// the entry reviewed.
func (c *Consent) Review(ctx context.Context, ref SkillRef) (_ wire.Review, err error) {
	defer sortErr(&err)
	fd, err := c.find(ref)
	if err != nil {
		return wire.Review{}, err
	}
	o, sn := fd.o, fd.sn
	if sn.s.Dynamic {
		return wire.Review{}, &RefError{Ref: ref, Reason: refusedDetail}
	}
	rv := wire.Review{Server: serverDesc(o.cfg), Binding: bindingDigest(o.cfg, sn)}
	rv.Skill, _ = o.rows().row(sn.uri())
	if fd.sn.approval == approvalPending || fd.sn.approval == approvalChanged {
		rv.Why, rv.Changed = o.approvals.why(sn)
	}
	files := map[string]*verify.File{}
	for i := range sn.s.Files {
		files[sn.s.Files[i].URI.String()] = &sn.s.Files[i]
	}
	rec, ok := o.approvals.get(sn.uri())
	// SKILL.md's flags: from its verified bytes, whatever else is shown;
	// a skill never approved shows the bytes too.
	used, mdNote := fd.reviewSkillMD(ctx, files[sn.uri()], &rv)
	if !ok {
		if rv.SkillMD == nil && mdNote == "" {
			mdNote = "the entry lists no SKILL.md"
		}
		rv.SkillMDNote = mdNote
		rv.Listing = fd.listing()
		return rv, nil
	}
	rv.SkillMD, rv.SkillMDSize = nil, 0
	if fd.sn.approval == approvalApproved {
		return rv, nil
	}
	rv.Files = fd.reviewChanges(ctx, rec, files, int64(MaxKeptSkill)-used)
	return rv, nil
}

// reviewSkillMD puts in rv SKILL.md's verified bytes (f, within MaxKeptFile)
// and their flags; it returns the bytes fetched, which count against
// MaxKeptSkill, and a note on how much of SKILL.md rv shows, or why none.
func (fd found) reviewSkillMD(ctx context.Context, f *verify.File, rv *wire.Review) (int64, string) {
	switch {
	case f == nil || f.Resource == nil:
		return 0, ""
	case !f.Resource.HasSize:
		return 0, "not fetched here: the entry declares no size for it"
	case f.Resource.Size > MaxKeptFile:
		return 0, fmt.Sprintf("not fetched here: over %d bytes", MaxKeptFile)
	}
	b, err := fd.verified(ctx, f)
	if err != nil {
		return 0, "not fetched: " + err.Error()
	}
	for _, fl := range verify.ContentFlags(b, true) {
		if !slices.Contains(rv.Skill.Flags, string(fl)) {
			rv.Skill.Flags = append(rv.Skill.Flags, string(fl))
		}
	}
	slices.Sort(rv.Skill.Flags)
	rv.SkillMD, rv.SkillMDSize = b, int64(len(b))
	note := ""
	if len(b) > wire.MaxShownSkillMD {
		cut := wire.MaxShownSkillMD
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		rv.SkillMD = b[:cut]
		note = fmt.Sprintf("the first %d of its %d bytes", cut, len(b))
	}
	return int64(len(b)), note
}

// reviewChanges reviews, in path order, each file of fd's skill added,
// removed or changed since rec, fetching at most budget bytes to diff.
func (fd found) reviewChanges(ctx context.Context, rec approvalRecord, files map[string]*verify.File, budget int64) []wire.FileReview {
	old := map[string]skill.Resource{}
	for _, r := range rec.Resources {
		old[r.URI] = r
	}
	cur := map[string]skill.Resource{}
	for _, r := range fd.sn.s.Entry.Resources {
		cur[r.URI] = r
	}
	uris := slices.Sorted(maps.Keys(old))
	for u := range cur {
		if _, ok := old[u]; !ok {
			uris = append(uris, u)
		}
	}
	label := fd.o.cfg.Label
	slices.SortFunc(uris, func(a, b string) int { return strings.Compare(pathOf(label, a), pathOf(label, b)) })
	fr := fileReviewer{o: fd.o, fd: fd, files: files, kept: map[skill.Digest]bool{}, budget: budget}
	for _, d := range rec.Kept {
		fr.kept[d] = true
	}
	var out []wire.FileReview
	for _, u := range uris {
		was, hadOld := old[u]
		now, hasNew := cur[u]
		if hadOld && hasNew && was == now {
			continue
		}
		out = append(out, fr.review(ctx, u, was, now, hadOld, hasNew))
	}
	return out
}

// listing is every file of fd's entry, as a review of a new skill lists
// them: path, declared size and flags.
func (fd found) listing() []wire.ListedFile {
	sn := fd.sn
	kept := map[skill.Digest]bool{}
	for _, d := range keptDigests(sn.s) {
		kept[d] = true
	}
	out := make([]wire.ListedFile, 0, len(sn.s.Files))
	for i := range sn.s.Files {
		f := &sn.s.Files[i]
		if f.Resource == nil {
			continue
		}
		rel := strings.TrimPrefix(f.URI.Path(), sn.path+"/")
		lf := wire.ListedFile{Path: joinPath(fd.o.cfg.Label, f.URI.Path()), Size: f.Resource.Size, HasSize: f.Resource.HasSize}
		if path.Base(rel) == "SKILL.md" && f.URI.String() != sn.uri() {
			lf.Flags = append(lf.Flags, wire.FlagNestedSkill)
		}
		if isScript(rel) {
			lf.Flags = append(lf.Flags, wire.FlagScript)
		}
		if !kept[f.Resource.Digest] {
			lf.Flags = append(lf.Flags, wire.FlagNotKept)
		}
		out = append(out, lf)
	}
	slices.SortFunc(out, func(a, b wire.ListedFile) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// isScript reports whether a file (its path within the skill) looks like
// one an agent may be told to run.
func isScript(rel string) bool {
	if strings.HasPrefix(rel, "scripts/") || strings.Contains(rel, "/scripts/") {
		return true
	}
	switch strings.ToLower(path.Ext(rel)) {
	case ".sh", ".bash", ".zsh", ".fish", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php", ".ps1", ".bat", ".cmd":
		return true
	}
	return false
}

// A fileReviewer reviews the changed files of one skill against the bytes
// its approval kept, within what is left of the per-skill diff cap.
type fileReviewer struct {
	o      *branch
	fd     found
	files  map[string]*verify.File // the skill's files now, by URI
	kept   map[skill.Digest]bool   // what the approval kept
	budget int64                   // bytes left under MaxKeptSkill
}

// review shows one file that changed since the approval (was: as
// approved, now: as listed; hadOld/hasNew say which exist): a unified
// diff of text, size and digest otherwise, and why when a side is
// missing.
func (r *fileReviewer) review(ctx context.Context, u string, was, now skill.Resource, hadOld, hasNew bool) wire.FileReview {
	fr := wire.FileReview{Path: pathOf(r.o.cfg.Label, u), Change: "changed"}
	var a, b []byte
	var why []string
	missing := "" // why the approved version's bytes are not here
	if hadOld {
		switch {
		case !r.kept[was.Digest]:
			missing = "the approved version's bytes were not kept (over the caps at the approval)"
		default:
			if bs, err := r.o.store.Get(was.Digest); err == nil {
				a = bs
			} else if w := r.o.keep.whyMissed(was.Digest); w != "" {
				missing = "the approved version's bytes were never kept: " + w
			} else {
				missing = "the approved version's bytes are not in the store (not fetched after the approval, or removed since)"
			}
		}
		if missing != "" {
			why = append(why, missing)
		}
	} else {
		fr.Change = "added"
	}
	if hasNew {
		switch f := r.files[u]; {
		case f == nil || f.Resource == nil:
		case !now.HasSize || now.Size > MaxKeptFile:
			why = append(why, fmt.Sprintf("over the diff cap of %d bytes a file", MaxKeptFile))
		case now.Size > r.budget:
			why = append(why, fmt.Sprintf("past the diff cap of %d bytes a skill", MaxKeptSkill))
		default:
			bs, err := r.fd.verified(ctx, f)
			if err != nil {
				why = append(why, "not fetched: "+err.Error())
				break
			}
			r.budget -= int64(len(bs))
			b = bs
		}
	} else {
		fr.Change = "removed"
	}
	haveOld := !hadOld || a != nil
	haveNew := !hasNew || b != nil
	switch {
	case hadOld && a == nil && b != nil && isText(b):
		// Nothing to diff against: what the person approves now is the
		// new version, so it is shown whole, as if added.
		d, cut := whole("b/"+fr.Path, b)
		fr.Diff = d
		fr.Note = sizeDigest(was, now, hadOld, hasNew) + ": " + missing + "; so the new version is shown in full, as an added file"
		if cut > 0 {
			fr.Note += fmt.Sprintf(" (its first %d lines; %d more not shown)", maxWholeLines, cut)
		}
	case !haveOld || !haveNew:
		fr.Note = sizeDigest(was, now, hadOld, hasNew) + ": " + strings.Join(why, "; ")
	case !isText(a) || !isText(b):
		fr.Note = "binary file " + sizeDigest(was, now, hadOld, hasNew)
	default:
		d, err := textdiff.Unified("a/"+fr.Path, "b/"+fr.Path, a, b)
		if err != nil {
			fr.Note = fmt.Sprintf("file changed, %d lines, too large to diff (%v); %s", bytes.Count(b, []byte("\n")), err, sizeDigest(was, now, hadOld, hasNew))
		} else {
			fr.Diff = d
		}
	}
	return fr
}

// maxWholeLines is the most lines of a file a review shows whole.
const maxWholeLines = textdiff.MaxEdits

// whole renders b as a unified diff that adds it to an empty file, at most
// maxWholeLines lines, and says how many lines it left out.
func whole(name string, b []byte) (string, int) {
	lines := strings.SplitAfter(string(b), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	cut := 0
	if len(lines) > maxWholeLines {
		cut = len(lines) - maxWholeLines
		lines = lines[:maxWholeLines]
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- /dev/null\n+++ %s\n@@ -0,0 +1,%d @@\n", name, len(lines))
	for _, l := range lines {
		sb.WriteString("+")
		sb.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
	return sb.String(), cut
}

// verified is the verified bytes of one file of fd's skill: through the
// tree's node when the skill is placed, else checked against its entry
// alone (as ShowSkillMD does).
func (fd found) verified(ctx context.Context, f *verify.File) ([]byte, error) {
	p := f.URI.Path()
	n := fd.t.nodes[p]
	if !fd.placed || n == nil || n.isDir() || n.file.f.Resource == nil || *n.file.f.Resource != *f.Resource {
		n = detachedNode(fd.o.cfg.Label, fd.sn, f)
	}
	b, _, err := fd.o.rd.load(ctx, n)
	return b, err
}

// pathOf is the mount path of a file URI of the origin with label, or the
// URI itself when it does not parse.
func pathOf(label, uri string) string {
	if u, err := verify.ParseURI(uri); err == nil {
		return joinPath(label, u.Path())
	}
	return uri
}

// isText: UTF-8 without NUL bytes.
func isText(b []byte) bool { return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 }

func sizeDigest(was, now skill.Resource, hadOld, hasNew bool) string {
	side := func(r skill.Resource, ok bool) string {
		if !ok {
			return "none"
		}
		if !r.HasSize {
			return fmt.Sprintf("size not declared, %s", r.Digest)
		}
		return fmt.Sprintf("%d bytes, %s", r.Size, r.Digest)
	}
	return fmt.Sprintf("%s -> %s", side(was, hadOld), side(now, hasNew))
}
