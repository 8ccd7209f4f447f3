package vfs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/skillfs/skillfs/internal/control/wire"
	"github.com/skillfs/skillfs/internal/store"
	"github.com/skillfs/skillfs/verify"
)

// Consent is the mount as its user's commands see it through the control
// endpoint: it implements control.API (skillfs status, list, inspect,
// pending, approve, revoke, get). It shows every skill as the person sees
// it, pending ones included, and acts on the approval books of the origins
// under approval: required; an approval or a revocation rebuilds the
// origin's tree at once and the kernel is told like after any swap.
//
// It lives in vfs, not a package of its own, because everything it reads
// and changes is the mount's own state: each origin's current tree, its
// approval book (approval.go) and its reader (a SkillMD shown to decide is
// fetched and verified like a read through the mount). Outside vfs, that
// state would have to be exported to everyone. It shares the set of
// origins with the mount (branches), so a reload is seen by both.
//
// Its errors are the endpoint's (package internal/control/wire): a ref that names
// no skill (a file, a server's directory, a dynamic skill under approval)
// Is wire.ErrInvalid, one that names nothing Is wire.ErrNotFound (and
// ErrNotExist), an approval of a changed skill Is wire.ErrChanged.
type Consent struct {
	*branches
	gen  *generated // the person's Index and status.json's Status
	feed *feed      // settled before an answer (regate)
}

// Status is status.json's content.
func (c *Consent) Status() Status { return c.gen.Status() }

// sortErr sorts an error of the methods below into the endpoint's: a ref
// that names no skill is bad input (the command exits 2), an unknown one
// not found, with a message that says what to do.
func sortErr(err *error) {
	var re *RefError
	switch {
	case *err == nil:
	case errors.As(*err, &re):
		*err = fmt.Errorf("%w: %w", *err, wire.ErrInvalid)
	case errors.Is(*err, ErrNotExist):
		*err = &notFound{msg: fmt.Sprintf("no skill %s on this mount (see `skillfs list`)", strings.TrimSuffix((*err).Error(), ": "+ErrNotExist.Error())), err: *err}
	}
}

// notFound is a ref that names nothing, told as the endpoint tells it.
type notFound struct {
	msg string
	err error
}

func (e *notFound) Error() string        { return e.msg }
func (e *notFound) Is(target error) bool { return target == wire.ErrNotFound }
func (e *notFound) Unwrap() error        { return e.err }

// A RefError is a ref that names no skill (a file, an origin, a dynamic
// skill that cannot be approved), with why.
type RefError struct {
	Ref    SkillRef
	Reason string
}

func (e *RefError) Error() string { return fmt.Sprintf("%s: %s", e.Ref, e.Reason) }

// A ChangedError names the skills of an approval whose entries changed
// since the user was shown them; nothing was approved.
type ChangedError struct{ Paths []string }

func (e *ChangedError) Error() string {
	return fmt.Sprintf("%s changed since you looked, so nothing was approved: run `skillfs pending` again to see what the server holds now", strings.Join(e.Paths, ", "))
}

func (e *ChangedError) Is(target error) bool { return target == ErrChanged }

// offReason is the answer to approve or revoke on a server whose approval
// is off.
func offReason(label string) string {
	return fmt.Sprintf(`approval is off for server %q, so its skills are in the mount without approval and there is nothing to approve or revoke; to require approval, set "approval": "required" under skillfs.servers.%s (or skillfs.defaults) in the config and reload the mount (SIGHUP, or remount)`, label, label)
}

// found is a ref resolved against an origin's current tree: what a review
// of the skill reads (review.go).
type found struct {
	o      *branch
	t      *tree
	sn     *skillNode
	placed bool
}

// find resolves ref against the current tree of the origin it names.
func (b *branches) find(ref SkillRef) (found, error) { return b.findIn(ref, nil) }

// byURI indexes a tree's skills, placed and held back, by SKILL.md URI.
type byURI map[*tree]map[string]*skillNode

func (ix byURI) get(t *tree, uri string) *skillNode {
	m := ix[t]
	if m == nil {
		m = make(map[string]*skillNode, len(t.order))
		for _, sn := range t.order {
			if _, ok := m[sn.uri()]; !ok {
				m[sn.uri()] = sn
			}
		}
		ix[t] = m
	}
	return m[uri]
}

// findIn is find; ix (nil: none) indexes trees by URI for many refs.
func (b *branches) findIn(ref SkillRef, ix byURI) (found, error) {
	if p := strings.Trim(ref.Path, "/"); p != "" {
		at := b.route(p)
		if at.kind != atOrigin {
			return found{}, fmt.Errorf("%s: %w", ref, ErrNotExist)
		}
		o, rest := at.o, at.rest
		if rest == "" {
			return found{}, &RefError{Ref: ref, Reason: "names a server's directory, not a skill: name a skill directory under it"}
		}
		t := o.cat.current()
		if sn := t.byDir[rest]; sn != nil {
			n := t.nodes[rest]
			return found{o: o, t: t, sn: sn, placed: n != nil && n.skill == sn}, nil
		}
		if n := t.nodes[rest]; n != nil {
			what := "a directory"
			if !n.isDir() {
				what = "a file"
			}
			return found{}, &RefError{Ref: ref, Reason: "names " + what + ", not a skill directory"}
		}
		return found{}, fmt.Errorf("%s: %w", ref, ErrNotExist)
	}
	if ref.Origin == "" || ref.URI == "" {
		return found{}, &RefError{Ref: ref, Reason: "name a skill by its path, or by origin and SKILL.md URI"}
	}
	o, ok := b.branch(ref.Origin)
	if !ok {
		return found{}, fmt.Errorf("%s: %w", ref, ErrNotExist)
	}
	t := o.cat.current()
	if ix != nil {
		if sn := ix.get(t, ref.URI); sn != nil {
			n := t.nodes[sn.path]
			return found{o: o, t: t, sn: sn, placed: n != nil && n.skill == sn}, nil
		}
		return found{}, fmt.Errorf("%s: %w", ref, ErrNotExist)
	}
	for _, sn := range t.order {
		if sn.uri() == ref.URI {
			n := t.nodes[sn.path]
			return found{o: o, t: t, sn: sn, placed: n != nil && n.skill == sn}, nil
		}
	}
	return found{}, fmt.Errorf("%s: %w", ref, ErrNotExist)
}

// Skills returns every skill of every origin as index.json rows.
func (c *Consent) Skills() []SkillInfo { return c.gen.Index().Skills }

// Inspect describes one skill: its entry as held, its files and its
// approval.
func (c *Consent) Inspect(_ context.Context, ref SkillRef) (_ Inspection, err error) {
	defer sortErr(&err)
	fd, err := c.find(ref)
	if err != nil {
		return Inspection{}, err
	}
	o, t, s := fd.o, fd.t, fd.sn.s
	ins := Inspection{Files: []FileState{}}
	ins.Skill, _ = o.rows().row(fd.sn.uri())
	if ins.Entry, err = json.Marshal(s.Entry); err != nil {
		return Inspection{}, fmt.Errorf("inspect %s: %w", ref, err)
	}
	for _, file := range s.Files {
		p := file.URI.Path()
		fs := FileState{Path: joinPath(o.cfg.Label, p), URI: file.URI.String(), Digest: string(file.Resource.Digest), Size: file.Resource.Size}
		if n := t.nodes[p]; fd.placed && n != nil && !n.isDir() {
			fs.Verified = o.rd.learned.isVerified(n.file)
		}
		if file.Resource.Digest != "" {
			fs.Cached = o.store.Has(file.Resource.Digest)
		}
		ins.Files = append(ins.Files, fs)
	}
	if s.Dynamic {
		ins.Files = append(ins.Files, FileState{Path: joinPath(o.cfg.Label, s.URI.Path()), URI: s.URI.String()})
	}
	as := &ApprovalState{Required: o.approvals.required(), State: fd.sn.approval}
	if !as.Required {
		as.State = approvalNotRequired
	}
	if rec, ok := o.approvals.get(fd.sn.uri()); ok && as.Required {
		as.At = rec.At
		b := rec.Binding
		as.Bound = &b
	}
	ins.Approval = as
	if !s.Dynamic {
		ins.Binding = bindingDigest(o.cfg, fd.sn)
	}
	return ins, nil
}

// ShowSkillMD returns the verified bytes of a skill's SKILL.md, fetching
// them if needed — for a pending skill too: a person reading it to decide
// is not an agent loading it. The bytes are checked against the held entry
// (size, digest, frontmatter) exactly as a read through the mount is.
func (c *Consent) ShowSkillMD(ctx context.Context, ref SkillRef) (_ []byte, err error) {
	defer sortErr(&err)
	fd, err := c.find(ref)
	if err != nil {
		return nil, err
	}
	o, t, sn := fd.o, fd.t, fd.sn
	if sn.s.Dynamic {
		return nil, &RefError{Ref: ref, Reason: "a dynamic skill's SKILL.md has no digest to verify it against; read it through the mount where allow_dynamic shows it"}
	}
	p := sn.s.URI.Path()
	n := t.nodes[p]
	if !fd.placed || n == nil || n.isDir() {
		// Not in the tree: check it against this entry alone.
		var file *verify.File
		for i := range sn.s.Files {
			if sn.s.Files[i].URI.String() == sn.uri() {
				file = &sn.s.Files[i]
			}
		}
		if file == nil {
			return nil, &RefError{Ref: ref, Reason: "the entry does not list its SKILL.md"}
		}
		fn := &fileNode{f: file, owners: []*skillNode{sn}, entryOf: []*skillNode{sn}}
		fn.setVersion()
		v := fn.version()
		n = &node{path: p, ino: inoVersion(o.cfg.Label, p, false, &v), file: fn}
	}
	b, _, err := o.rd.load(ctx, n)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Pending lists the skills waiting for approval, new or changed, with
// what changed.
func (c *Consent) Pending() []Pending {
	out := []Pending{}
	for _, o := range c.all() {
		rows := o.rows()
		for _, h := range rows.t.waiting {
			if h.state != approvalPending && h.state != approvalChanged {
				continue
			}
			p := Pending{Skill: rows.waiting(h), Binding: bindingDigest(o.cfg, h.sn)}
			p.Why, p.Changed = o.approvals.why(h.sn)
			out = append(out, p)
		}
	}
	return out
}

// Approve approves skills, each only as the user was shown it: ref.Binding
// must be the digest of the entry the mount holds now (Pending and
// Inspection show it), and the approval is bound to that entry — its
// origin identity, URI, frontmatter and full resource set — and places it
// in the tree at once. A ref without a binding is refused: nothing is
// approved "as currently held".
//
// With all == "" every ref is resolved and compared before anything is
// approved: if any skill's entry changed, nothing is, and the error is a
// *ChangedError. With all set to a label (skillfs approve --all), the refs
// are that server's pending skills as the user saw them listed: those
// whose entries changed are left pending and their rows say so (Detail),
// the others are approved. A skill already approved is left as it is and
// its row says so. approvals.json is written once per origin, and each
// origin's tree rebuilt once; when its cap stops the approvals part-way,
// the rows of the skills not approved say why. A server whose approval is
// off is an error (there is nothing to approve).
func (c *Consent) Approve(refs []SkillRef, all string) (_ []SkillInfo, err error) {
	defer sortErr(&err)
	if all != "" {
		o, ok := c.branch(all)
		if !ok {
			return nil, fmt.Errorf("%s: %w", all, ErrNotExist)
		}
		if !o.approvals.required() {
			return nil, &RefError{Ref: SkillRef{Path: all}, Reason: offReason(all)}
		}
		if len(refs) == 0 {
			return []SkillInfo{}, nil
		}
		// A listed skill the server no longer lists is not approved, and
		// the others still are.
		gone := map[int]SkillInfo{}
		var kept []SkillRef
		ix := byURI{}
		for i, r := range refs {
			if _, err := c.findIn(r, ix); errors.Is(err, ErrNotExist) {
				gone[i] = SkillInfo{Origin: r.Origin, URI: r.URI, Path: r.Path, State: wire.SkillRemoved,
					Detail: "not approved: the server's listing no longer has this skill"}
				continue
			}
			kept = append(kept, r)
		}
		if len(gone) > 0 {
			var rows []SkillInfo
			if len(kept) > 0 {
				var err error
				if rows, err = c.approve(kept, all); err != nil {
					return nil, err
				}
			}
			out := make([]SkillInfo, 0, len(refs))
			for i := range refs {
				if si, ok := gone[i]; ok {
					out = append(out, si)
					continue
				}
				out = append(out, rows[0])
				rows = rows[1:]
			}
			return out, nil
		}
	}
	return c.approve(refs, all)
}

// approve is Approve once every ref names a skill held.
func (c *Consent) approve(refs []SkillRef, all string) ([]SkillInfo, error) {
	fds, err := c.findAll(refs)
	if err != nil {
		return nil, err
	}
	if err := approvable(refs, fds, all); err != nil {
		return nil, err
	}
	notes := make([]string, len(fds))
	var changed []string
	batch := map[*branch][]int{}
	var order []*branch
	for i, fd := range fds {
		if bindingDigest(fd.o.cfg, fd.sn) != refs[i].Binding {
			changed = append(changed, joinPath(fd.o.cfg.Label, fd.sn.path))
			notes[i] = "changed since you looked: not approved; run `skillfs pending` again"
			continue
		}
		if fd.sn.approval == approvalApproved {
			notes[i] = "already approved; nothing changed"
			continue
		}
		if _, ok := batch[fd.o]; !ok {
			order = append(order, fd.o)
		}
		batch[fd.o] = append(batch[fd.o], i)
	}
	if all == "" && len(changed) > 0 {
		return nil, &ChangedError{Paths: changed}
	}
	touched := map[*branch]bool{}
	for _, o := range order {
		n, err := o.approveBatch(fds, batch[o], notes)
		if err != nil {
			c.regate(touched)
			return nil, err
		}
		if n > 0 {
			touched[o] = true
		}
	}
	c.regate(touched)
	return currentRows(fds, notes), nil
}

// approvable refuses the first ref that cannot be approved at all, before
// any binding is compared.
func approvable(refs []SkillRef, fds []found, all string) error {
	for i, fd := range fds {
		label := fd.o.cfg.Label
		switch {
		case all != "" && label != all:
			return &RefError{Ref: refs[i], Reason: fmt.Sprintf("is a skill of %s, not of %s", label, all)}
		case !fd.o.approvals.required():
			return &RefError{Ref: refs[i], Reason: offReason(label)}
		case fd.sn.approval == approvalRefused:
			return &RefError{Ref: refs[i], Reason: refusedDetail}
		case refs[i].Binding == "":
			return &RefError{Ref: refs[i], Reason: "names no binding: an approval names the digest of the entry you were shown (`binding` in `skillfs pending --json` and `skillfs inspect --json`); `skillfs approve` sends it (a client older than the mount does not: use the mount's own skillfs)"}
		}
	}
	return nil
}

// approveBatch approves o's skills fds[idx...] with one write of
// approvals.json and returns how many; notes say why the cap stopped others.
func (o *branch) approveBatch(fds []found, idx []int, notes []string) (int, error) {
	ss := make([]*verify.Skill, len(idx))
	for k, i := range idx {
		ss[k] = fds[i].sn.s
		o.persistShown(ss[k])
	}
	n, err := o.approvals.approveMany(ss)
	if n == 0 && err != nil && !errors.Is(err, store.ErrTooLarge) {
		return 0, fmt.Errorf("approve skills of %s: %w", o.cfg.Label, err)
	}
	for k, i := range idx {
		if k >= n {
			notes[i] = "not approved: " + err.Error()
			continue
		}
		// One line per skill for a few; for many, one line in all
		// (approvals.json names them) and the skills at debug level.
		lvl := slog.LevelInfo
		if n > maxApprovalLogLines {
			lvl = slog.LevelDebug
		}
		o.log.Log(context.Background(), lvl, "skill approved", "op", "approve", "uri", fds[i].sn.uri(), "path", joinPath(o.cfg.Label, fds[i].sn.path))
		if rec, ok := o.approvals.get(fds[i].sn.uri()); ok {
			o.keepApproved(fds[i].sn, rec.Kept)
		}
	}
	if n > maxApprovalLogLines {
		o.log.Info("skills approved", "op", "approve", "count", n)
	}
	if n < len(idx) {
		o.log.Warn("approvals stopped at the cap of approvals.json", "op", "approve", "approved", n, "not_approved", len(idx)-n, "err", err)
	}
	return n, nil
}

// persistShown puts on disk, before the approval of s is recorded, the
// bytes of its kept files that the store holds in memory only: what a
// review fetched, verified and showed (Review) is then what the next
// diff is taken against, whatever happens to the daemon after.
func (o *branch) persistShown(s *verify.Skill) {
	for _, d := range keptDigests(s) {
		if err := o.store.Persist(d); err != nil && !errors.Is(err, store.ErrNotFound) {
			o.log.Warn("storing the bytes a review showed, before the approval", "op", "approve", "uri", s.URI.String(), "err", err)
		}
	}
}

// maxApprovalLogLines: an approval of more skills than this logs one line
// in all at info level, and each skill at debug level.
const maxApprovalLogLines = 20

// Revoke removes approvals; the skills leave the tree at once (an open
// file of theirs fails its next read with ReasonNotApproved).
// approvals.json is written once per origin. A server whose approval is
// off is an error.
func (c *Consent) Revoke(refs []SkillRef) (_ []SkillInfo, err error) {
	defer sortErr(&err)
	fds, err := c.findAll(refs)
	if err != nil {
		return nil, err
	}
	notes := make([]string, len(fds))
	batch := map[*branch][]string{}
	var order []*branch
	for i, fd := range fds {
		if !fd.o.approvals.required() {
			return nil, &RefError{Ref: refs[i], Reason: offReason(fd.o.cfg.Label)}
		}
		if _, ok := batch[fd.o]; !ok {
			order = append(order, fd.o)
		}
		batch[fd.o] = append(batch[fd.o], fd.sn.uri())
	}
	touched := map[*branch]bool{}
	revoked := map[string]bool{}
	for _, o := range order {
		had, err := o.approvals.revokeMany(batch[o])
		if err != nil {
			c.regate(touched)
			return nil, fmt.Errorf("revoke skills of %s: %w", o.cfg.Label, err)
		}
		for _, u := range had {
			revoked[o.cfg.Label+" "+u] = true
		}
		if len(had) > 0 {
			touched[o] = true
		}
	}
	for i, fd := range fds {
		if !revoked[fd.o.cfg.Label+" "+fd.sn.uri()] {
			notes[i] = "not approved; nothing to revoke"
			continue
		}
		fd.o.log.Info("approval revoked", "op", "revoke", "uri", fd.sn.uri(), "path", joinPath(fd.o.cfg.Label, fd.sn.path))
	}
	c.regate(touched)
	return currentRows(fds, notes), nil
}

// Get confirms an unlisted skill with skills/get and holds it like a
// listed one (rule 4); under approval: required it is then pending.
func (c *Consent) Get(ctx context.Context, label, uri string) (_ SkillInfo, err error) {
	defer sortErr(&err)
	o, ok := c.branch(label)
	if !ok {
		return SkillInfo{}, fmt.Errorf("%s: %w", label, ErrNotExist)
	}
	s, err := o.res.GetSkill(ctx, uri)
	if err != nil {
		return SkillInfo{}, fmt.Errorf("get %s from %s: %w", uri, label, err)
	}
	if err := o.cat.confirm(s); err != nil {
		return SkillInfo{}, fmt.Errorf("get %s from %s: %w", uri, label, err)
	}
	o.log.Info("skill confirmed with skills/get", "op", "get", "uri", s.URI.String())
	c.feed.settle()
	si, ok := o.rows().row(s.URI.String())
	if !ok {
		return SkillInfo{}, fmt.Errorf("get %s from %s: %w", uri, label, ErrNotExist)
	}
	return si, nil
}

// findAll is find of each of refs, or the first error.
func (b *branches) findAll(refs []SkillRef) ([]found, error) {
	if len(refs) == 0 {
		return nil, errors.New("no skill named")
	}
	fds := make([]found, len(refs))
	ix := byURI{}
	for i, ref := range refs {
		fd, err := b.findIn(ref, ix)
		if err != nil {
			return nil, err
		}
		fds[i] = fd
	}
	return fds, nil
}

// regate rebuilds the trees of the origins whose approvals changed, and
// waits until the kernel has been told (settle), so that the answer the
// user gets holds for the next file operation.
func (c *Consent) regate(touched map[*branch]bool) {
	for o := range touched {
		o.cat.regate()
	}
	if len(touched) == 0 || c.feed.settle() {
		return
	}
	for o := range touched {
		o.log.Warn("the kernel was not told in time of a change of approvals: the mount may show the old tree until its cache times out", "op", "approve")
	}
}

// currentRows returns each found skill's row from the tree now in force,
// with notes in Detail.
func currentRows(fds []found, notes []string) []SkillInfo {
	want := map[*branch]map[string]bool{}
	for _, fd := range fds {
		if want[fd.o] == nil {
			want[fd.o] = map[string]bool{}
		}
		want[fd.o][fd.sn.uri()] = true
	}
	infos := map[*branch]map[string]SkillInfo{}
	for o, uris := range want {
		infos[o] = o.rows().rowsOf(uris)
	}
	out := make([]SkillInfo, 0, len(fds))
	for i, fd := range fds {
		si, ok := infos[fd.o][fd.sn.uri()]
		if !ok {
			si = SkillInfo{Origin: fd.o.cfg.Label, URI: fd.sn.uri(), Path: joinPath(fd.o.cfg.Label, fd.sn.path), State: wire.SkillRemoved,
				Detail: "the server's listing no longer has this skill"}
		}
		if notes[i] != "" {
			si.Detail = notes[i]
		}
		out = append(out, si)
	}
	return out
}
