package vfs

import (
	"fmt"
	"slices"

	"github.com/skillfs/skillfs/internal/control/wire"
)

// indexRows builds one origin's index rows (SkillInfo: index.json, the
// control API's answers) from one tree, so that the rows of one answer
// agree with each other.
type indexRows struct {
	label    string
	t        *tree
	rd       *reader // content flags, verified files and failed reads
	required bool    // approval: required
}

// rows builds rows from the origin's current tree.
func (o *branch) rows() indexRows {
	return indexRows{label: o.cfg.Label, t: o.cat.current(), rd: o.rd, required: o.approvals.required()}
}

// row is the index row of the skill with uri.
func (r indexRows) row(uri string) (SkillInfo, bool) {
	t := r.t
	for _, sn := range t.skills {
		if sn.uri() == uri {
			return r.skill(sn, r.rd.failures.snapshot()), true
		}
	}
	for _, h := range t.waiting {
		if h.sn.uri() == uri {
			return r.waiting(h), true
		}
	}
	for _, rj := range t.rejected {
		if rj.URI == uri {
			return SkillInfo{Origin: r.label, URI: rj.URI, State: wire.SkillRejected, Reason: string(rj.Reason), Detail: rj.Detail}, true
		}
	}
	return SkillInfo{}, false
}

// rowsOf is row of each of uris, in one pass over the tree.
func (r indexRows) rowsOf(uris map[string]bool) map[string]SkillInfo {
	t := r.t
	out := make(map[string]SkillInfo, len(uris))
	failures := r.rd.failures.snapshot()
	for _, sn := range t.skills {
		if u := sn.uri(); uris[u] {
			if _, ok := out[u]; !ok {
				out[u] = r.skill(sn, failures)
			}
		}
	}
	for _, h := range t.waiting {
		if u := h.sn.uri(); uris[u] {
			if _, ok := out[u]; !ok {
				out[u] = r.waiting(h)
			}
		}
	}
	for _, rj := range t.rejected {
		if uris[rj.URI] {
			if _, ok := out[rj.URI]; !ok {
				out[rj.URI] = SkillInfo{Origin: r.label, URI: rj.URI, State: wire.SkillRejected, Reason: string(rj.Reason), Detail: rj.Detail}
			}
		}
	}
	return out
}

// skill builds the index row of a placed skill; failures are the
// origin's failed reads.
func (r indexRows) skill(sn *skillNode, failures map[string]failure) SkillInfo {
	t := r.t
	s := sn.s
	si := SkillInfo{
		Origin:      r.label,
		URI:         sn.uri(),
		Path:        joinPath(r.label, sn.path),
		Name:        s.Entry.Name(),
		Description: s.Entry.Description(),
		State:       wire.SkillAvailable,
		Source:      sn.source,
		Files:       len(s.Files),
	}
	for _, fl := range s.Flags {
		si.Flags = append(si.Flags, string(fl))
	}
	if n := t.nodes[s.URI.Path()]; n != nil && !n.isDir() {
		si.Flags = append(si.Flags, r.rd.flags.get(n.file.key)...)
	}
	if sn.path != "" {
		if outer := t.skillAt(parentOf(sn.path)); outer != nil {
			si.NestedIn = joinPath(r.label, outer.path)
			si.Flags = append(si.Flags, "nested-skill")
		}
	}
	slices.Sort(si.Flags)
	si.Flags = slices.Compact(si.Flags)
	if s.Dynamic {
		si.State = wire.SkillDynamic
	}
	var last failure
	for _, file := range s.Files {
		p := file.URI.Path()
		if n := t.nodes[p]; n != nil && !n.isDir() {
			if r.rd.learned.isVerified(n.file) {
				si.VerifiedFiles++
			}
		}
		if fl, ok := failures[p]; ok && fl.at.After(last.at) {
			last = fl
			si.Detail = fmt.Sprintf("%s: %s", joinPath(r.label, p), fl.detail)
		}
	}
	if s.Dynamic {
		if fl, ok := failures[s.URI.Path()]; ok {
			last = fl
			si.Detail = fmt.Sprintf("%s: %s", joinPath(r.label, s.URI.Path()), fl.detail)
		}
	}
	if last.reason != "" {
		si.State = wire.SkillFailed
		si.Reason = last.reason
	}
	if r.required {
		si.Approval = approvalApproved
	}
	return si
}

// waiting builds the index row of a skill held back for want of an
// approval: everything from the entry as listed, nothing fetched.
func (r indexRows) waiting(h heldBack) SkillInfo {
	s := h.sn.s
	si := SkillInfo{
		Origin:      r.label,
		URI:         h.sn.uri(),
		Path:        joinPath(r.label, h.sn.path),
		Name:        s.Entry.Name(),
		Description: s.Entry.Description(),
		State:       wire.SkillPending,
		Source:      h.sn.source,
		Files:       len(s.Files),
		Approval:    h.state,
	}
	switch h.state {
	case approvalRefused:
		si.State, si.Reason, si.Detail = wire.SkillRejected, ReasonNotApprovable, refusedDetail
	case approvalChanged:
		si.Reason = "changed since approved"
		si.Detail = "the server's entry differs from the approved one; see skillfs pending"
	default:
		si.Reason = "not yet approved"
		si.Detail = "approval is required for this server; see skillfs pending"
	}
	for _, fl := range s.Flags {
		si.Flags = append(si.Flags, string(fl))
	}
	if outer := r.t.enclosing(h.sn.path); outer != nil {
		si.NestedIn = joinPath(r.label, outer.path)
		si.Flags = append(si.Flags, "nested-skill")
	}
	slices.Sort(si.Flags)
	si.Flags = slices.Compact(si.Flags)
	return si
}
