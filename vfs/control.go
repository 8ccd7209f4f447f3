package vfs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/skillfs/skillfs/verify"
)

// The methods here are what the control socket (package control) serves
// to the mounting user's commands: skillfs list, inspect, pending, approve,
// revoke and get. They act on the running mount at once: an approval or a
// revocation rebuilds the origin's tree and tells the kernel.

// A SkillRef names one skill: by mount-relative skill directory
// ("acme/billing/refunds"), or by origin label and SKILL.md URI.
type SkillRef struct {
	Path   string `json:"path,omitempty"`
	Origin string `json:"origin,omitempty"`
	URI    string `json:"uri,omitempty"`
}

func (r SkillRef) String() string {
	if r.Path != "" {
		return r.Path
	}
	return r.Origin + " " + r.URI
}

// A RefError is a ref that names no skill (a file, an origin, a dynamic
// skill that cannot be approved), with why.
type RefError struct {
	Ref    SkillRef
	Reason string
}

func (e *RefError) Error() string { return fmt.Sprintf("%s: %s", e.Ref, e.Reason) }

// Inspection describes one skill for skillfs inspect.
type Inspection struct {
	Skill    SkillInfo       `json:"skill"`
	Entry    json.RawMessage `json:"entry"` // the held entry as the server sent it
	Files    []FileState     `json:"files"`
	Approval *ApprovalState  `json:"approval,omitempty"`
}

// FileState is one file of an inspected skill.
type FileState struct {
	Path     string `json:"path"` // mount-relative
	URI      string `json:"uri"`
	Digest   string `json:"digest"`
	Size     int64  `json:"size"`
	Verified bool   `json:"verified"` // passed every check in this run
	Cached   bool   `json:"cached"`   // the store holds bytes of its digest
}

// ApprovalState is an inspected skill's approval.
type ApprovalState struct {
	Required bool `json:"required"`
	// State: "approved", "pending", "changed", "refused" (dynamic under
	// required), "not-required".
	State string    `json:"state"`
	At    time.Time `json:"approved_at,omitzero"`
	// Bound is what the approval is bound to (for "changed", the entry as
	// approved, not as held now).
	Bound *Binding `json:"bound,omitempty"`
}

// Pending is a skill waiting for approval.
type Pending struct {
	Skill SkillInfo `json:"skill"`
	// Changed is what differs from the approved entry; nil for a skill
	// never approved.
	Changed *ApprovalChange `json:"changed,omitempty"`
}

// found is a ref resolved against an origin's current tree.
type found struct {
	o      *branch
	t      *tree
	sn     *skillNode
	placed bool
}

func (f *Core) find(ref SkillRef) (found, error) {
	if p := strings.Trim(ref.Path, "/"); p != "" {
		o, rest, ok := f.resolve(p)
		if !ok {
			return found{}, fmt.Errorf("%s: %w", ref, ErrNotExist)
		}
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
	o, ok := f.branch(ref.Origin)
	if !ok {
		return found{}, fmt.Errorf("%s: %w", ref, ErrNotExist)
	}
	t := o.cat.current()
	for _, sn := range t.order {
		if sn.uri() == ref.URI {
			n := t.nodes[sn.path]
			return found{o: o, t: t, sn: sn, placed: n != nil && n.skill == sn}, nil
		}
	}
	return found{}, fmt.Errorf("%s: %w", ref, ErrNotExist)
}

// info is the index row of the skill with uri in the origin's current tree.
func (o *branch) info(uri string) (SkillInfo, bool) {
	t := o.cat.current()
	for _, sn := range t.skills {
		if sn.uri() == uri {
			return o.skillInfo(t, sn, o.rd.failures.snapshot()), true
		}
	}
	for _, h := range t.waiting {
		if h.sn.uri() == uri {
			return o.waitingInfo(t, h), true
		}
	}
	for _, r := range t.rejected {
		if r.URI == uri {
			return SkillInfo{Origin: o.cfg.Label, URI: r.URI, State: "rejected", Reason: string(r.Reason), Detail: r.Detail}, true
		}
	}
	return SkillInfo{}, false
}

// Skills returns every skill of every origin as index.json rows.
func (f *Core) Skills() []SkillInfo { return f.Index().Skills }

// Inspect describes one skill: its entry as held, its files and its
// approval.
func (f *Core) Inspect(_ context.Context, ref SkillRef) (Inspection, error) {
	fd, err := f.find(ref)
	if err != nil {
		return Inspection{}, err
	}
	o, t, s := fd.o, fd.t, fd.sn.s
	ins := Inspection{Files: []FileState{}}
	ins.Skill, _ = o.info(fd.sn.uri())
	if ins.Entry, err = json.Marshal(s.Entry); err != nil {
		return Inspection{}, fmt.Errorf("inspect %s: %w", ref, err)
	}
	for _, file := range s.Files {
		p := file.URI.Path()
		fs := FileState{Path: joinPath(o.cfg.Label, p), URI: file.URI.String(), Digest: string(file.Resource.Digest), Size: file.Resource.Size}
		if n := t.nodes[p]; fd.placed && n != nil && !n.isDir() {
			fs.Verified = o.rd.isVerified(n.file)
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
	return ins, nil
}

// ShowSkillMD returns the verified bytes of a skill's SKILL.md, fetching
// them if needed — for a pending skill too: a person reading it to decide
// is not an agent loading it. The bytes are checked against the held entry
// (size, digest, frontmatter) exactly as a read through the mount is.
func (f *Core) ShowSkillMD(ctx context.Context, ref SkillRef) ([]byte, error) {
	fd, err := f.find(ref)
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
func (f *Core) Pending() []Pending {
	out := []Pending{}
	for label, o := range f.all() {
		t := o.cat.current()
		for _, h := range t.waiting {
			if h.state != approvalPending && h.state != approvalChanged {
				continue
			}
			p := Pending{Skill: o.waitingInfo(t, h)}
			if rec, ok := o.approvals.get(h.sn.uri()); ok {
				p.Changed = diffBindings(label, rec.Binding, bindingOf(o.cfg, h.sn.s))
			}
			out = append(out, p)
		}
	}
	return out
}

// Approve approves skills as currently held, binding each to its origin
// identity, URI, frontmatter and full resource set, and places them in the
// tree at once. Every ref is resolved before anything is approved; a skill
// already approved, or of an origin that does not require approval, is
// left as it is and its row says so (Detail).
func (f *Core) Approve(refs []SkillRef) ([]SkillInfo, error) {
	fds, err := f.findAll(refs)
	if err != nil {
		return nil, err
	}
	for i, fd := range fds {
		if fd.sn.approval == approvalRefused {
			return nil, &RefError{Ref: refs[i], Reason: refusedDetail}
		}
	}
	notes := make([]string, len(fds))
	touched := map[*branch]bool{}
	for i, fd := range fds {
		switch {
		case !fd.o.approvals.required():
			notes[i] = "approval is not required for this server; nothing to approve"
		case fd.sn.approval == approvalApproved:
			notes[i] = "already approved; nothing changed"
		default:
			if _, err := fd.o.approvals.approve(fd.sn.s); err != nil {
				f.regate(touched)
				return nil, fmt.Errorf("approve %s: %w", refs[i], err)
			}
			fd.o.log.Info("skill approved", "op", "approve", "uri", fd.sn.uri(), "path", joinPath(fd.o.cfg.Label, fd.sn.path))
			touched[fd.o] = true
		}
	}
	f.regate(touched)
	return f.rows(fds, notes), nil
}

// ApproveAll approves every pending skill (new or changed) of one origin.
func (f *Core) ApproveAll(label string) ([]SkillInfo, error) {
	o, ok := f.branch(label)
	if !ok {
		return nil, fmt.Errorf("%s: %w", label, ErrNotExist)
	}
	var refs []SkillRef
	for _, h := range o.cat.current().waiting {
		if h.state == approvalPending || h.state == approvalChanged {
			refs = append(refs, SkillRef{Origin: label, URI: h.sn.uri()})
		}
	}
	if len(refs) == 0 {
		return []SkillInfo{}, nil
	}
	return f.Approve(refs)
}

// Revoke removes approvals; the skills leave the tree at once (an open
// file of theirs fails its next read with ReasonNotApproved).
func (f *Core) Revoke(refs []SkillRef) ([]SkillInfo, error) {
	fds, err := f.findAll(refs)
	if err != nil {
		return nil, err
	}
	notes := make([]string, len(fds))
	touched := map[*branch]bool{}
	for i, fd := range fds {
		if !fd.o.approvals.required() {
			notes[i] = "approval is not required for this server; nothing to revoke"
			continue
		}
		had, err := fd.o.approvals.revoke(fd.sn.uri())
		if err != nil {
			f.regate(touched)
			return nil, fmt.Errorf("revoke %s: %w", refs[i], err)
		}
		if !had {
			notes[i] = "not approved; nothing to revoke"
			continue
		}
		fd.o.log.Info("approval revoked", "op", "revoke", "uri", fd.sn.uri(), "path", joinPath(fd.o.cfg.Label, fd.sn.path))
		touched[fd.o] = true
	}
	f.regate(touched)
	return f.rows(fds, notes), nil
}

// Get confirms an unlisted skill with skills/get and holds it like a
// listed one (rule 4); under approval: required it is then pending.
func (f *Core) Get(ctx context.Context, label, uri string) (SkillInfo, error) {
	o, ok := f.branch(label)
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
	si, ok := o.info(s.URI.String())
	if !ok {
		return SkillInfo{}, fmt.Errorf("get %s from %s: %w", uri, label, ErrNotExist)
	}
	return si, nil
}

func (f *Core) findAll(refs []SkillRef) ([]found, error) {
	if len(refs) == 0 {
		return nil, errors.New("no skill named")
	}
	fds := make([]found, len(refs))
	for i, ref := range refs {
		fd, err := f.find(ref)
		if err != nil {
			return nil, err
		}
		fds[i] = fd
	}
	return fds, nil
}

func (f *Core) regate(touched map[*branch]bool) {
	for o := range touched {
		o.cat.regate()
	}
}

// rows returns each found skill's row from the tree now in force, with
// notes in Detail.
func (f *Core) rows(fds []found, notes []string) []SkillInfo {
	out := make([]SkillInfo, 0, len(fds))
	for i, fd := range fds {
		si, ok := fd.o.info(fd.sn.uri())
		if !ok {
			si = SkillInfo{Origin: fd.o.cfg.Label, URI: fd.sn.uri(), Path: joinPath(fd.o.cfg.Label, fd.sn.path), State: "removed",
				Detail: "the server's listing no longer has this skill"}
		}
		if notes[i] != "" {
			si.Detail = notes[i]
		}
		out = append(out, si)
	}
	return out
}
