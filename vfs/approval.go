package vfs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillfs/skillfs/config"
	"github.com/skillfs/skillfs/skill"
	"github.com/skillfs/skillfs/store"
	"github.com/skillfs/skillfs/verify"
)

// Approval (config approval: required; DESIGN.md rule 8). A skill of such
// an origin is placed in the tree only while the user's approval of it
// holds, and an approval holds only for exactly what the user approved: the
// origin identity (label and keyed fingerprint of its command, env, URL and
// headers), the skill's URI, its frontmatter and the full set of (uri,
// size, digest) of its resources — a Binding. Every catalog swap (a
// re-list, list_changed, a skills/get after a stale read) compares the held
// entry with its binding; when they differ the skill is held back at once
// (its files leave the tree, the kernel is told, an open File fails with
// ReasonNotApproved) and waits in Pending with what changed. Approving
// fetches nothing: the binding comes from the entry as held.
//
// Approvals are kept in the origin's store bucket (approvals.json, 0600,
// written atomically and durably), which is per origin identity: a label
// re-pointed at another server, or given another token, starts with none.
// Each approval also records the label and fingerprint and is dropped on
// load when they are not this origin's.

// Approval states (SkillInfo.Approval, ApprovalState.State).
const (
	approvalApproved    = "approved"
	approvalPending     = "pending" // never approved
	approvalChanged     = "changed" // approved once; the entry has changed since
	approvalRefused     = "refused" // dynamic: nothing to bind an approval to
	approvalNotRequired = "not-required"
)

// ReasonNotApproved: the file's skill is no longer approved (its entry
// changed, or the approval was revoked) after the file was opened.
const ReasonNotApproved = "not-approved"

// ReasonNotApprovable is index.json's reason for a dynamic skill refused
// under approval: required.
const ReasonNotApprovable = "not-approvable"

const refusedDetail = `a "dynamic" skill publishes no manifest, so an approval cannot be bound to its content; it is not shown while approval is required`

// A Binding is what an approval is bound to.
type Binding struct {
	Origin      string           `json:"origin"`
	Fingerprint string           `json:"fingerprint"`
	URI         string           `json:"uri"`
	Frontmatter map[string]any   `json:"frontmatter"`
	Resources   []skill.Resource `json:"resources"`
}

// An ApprovalChange is what differs between an approval's binding and the
// entry now held: files by path (mount-relative), frontmatter by field.
type ApprovalChange struct {
	Added       []string `json:"files_added,omitempty"`
	Removed     []string `json:"files_removed,omitempty"`
	Changed     []string `json:"files_changed,omitempty"`
	Frontmatter []string `json:"frontmatter_changed,omitempty"`
}

type approvalRecord struct {
	Binding
	At time.Time `json:"approved_at"`
}

type savedApprovals struct {
	Version   int              `json:"version"`
	Approvals []approvalRecord `json:"approvals"`
}

const savedApprovalsVersion = 1

// fingerprintOf is the keyed fingerprint part of an origin's ID.
func fingerprintOf(oc config.Origin) string {
	return strings.TrimPrefix(oc.ID(), oc.Label+"-")
}

// bindingOf binds a held entry, resources sorted by URI.
func bindingOf(oc config.Origin, s *verify.Skill) Binding {
	b := Binding{Origin: oc.Label, Fingerprint: fingerprintOf(oc), URI: s.URI.String(),
		Frontmatter: s.Entry.Frontmatter, Resources: slices.Clone(s.Entry.Resources)}
	if b.Frontmatter == nil {
		b.Frontmatter = map[string]any{}
	}
	slices.SortFunc(b.Resources, func(x, y skill.Resource) int { return strings.Compare(x.URI, y.URI) })
	return b
}

// canonical is a value's JSON, keys sorted, for comparing frontmatter
// loaded from disk (json.Number kept) with frontmatter off the wire.
func canonical(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("unencodable %T", v)
	}
	return buf.String()
}

// diffBindings says what changed from bound to cur; nil when nothing did.
func diffBindings(label string, bound, cur Binding) *ApprovalChange {
	var ch ApprovalChange
	path := func(uri string) string {
		if u, err := verify.ParseURI(uri); err == nil {
			return joinPath(label, u.Path())
		}
		return uri
	}
	old := map[string]skill.Resource{}
	for _, r := range bound.Resources {
		old[r.URI] = r
	}
	for _, r := range cur.Resources {
		o, ok := old[r.URI]
		switch {
		case !ok:
			ch.Added = append(ch.Added, path(r.URI))
		case o != r:
			ch.Changed = append(ch.Changed, path(r.URI))
		}
		delete(old, r.URI)
	}
	for _, u := range slices.Sorted(maps.Keys(old)) {
		ch.Removed = append(ch.Removed, path(u))
	}
	keys := map[string]bool{}
	for k := range bound.Frontmatter {
		keys[k] = true
	}
	for k := range cur.Frontmatter {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		a, inA := bound.Frontmatter[k]
		b, inB := cur.Frontmatter[k]
		if inA != inB || canonical(a) != canonical(b) {
			ch.Frontmatter = append(ch.Frontmatter, k)
		}
	}
	if bound.Origin != cur.Origin || bound.Fingerprint != cur.Fingerprint || bound.URI != cur.URI {
		// Not reachable through the store (it is per identity) but said
		// plainly if it ever is.
		ch.Frontmatter = append(ch.Frontmatter, "(origin identity)")
	}
	slices.Sort(ch.Added)
	slices.Sort(ch.Changed)
	if len(ch.Added)+len(ch.Removed)+len(ch.Changed)+len(ch.Frontmatter) == 0 {
		return nil
	}
	return &ch
}

// An approvalBook is one origin's approvals, kept in its store bucket.
type approvalBook struct {
	cfg   config.Origin
	fp    string
	store *store.Bucket
	log   *slog.Logger
	now   func() time.Time

	mu sync.Mutex
	m  map[string]approvalRecord // by skill URI
}

func newApprovalBook(oc config.Origin, st *store.Bucket, log *slog.Logger, now func() time.Time) *approvalBook {
	b := &approvalBook{cfg: oc, store: st, log: log, now: now, m: map[string]approvalRecord{}}
	if oc.Approval.Required() {
		b.fp = fingerprintOf(oc)
	}
	return b
}

func (b *approvalBook) required() bool { return b.cfg.Approval.Required() }

// state is a held skill's approval state: "" when approval is not
// required, else approved, pending, changed or refused.
func (b *approvalBook) state(s *verify.Skill) string {
	if !b.required() {
		return ""
	}
	if s.Dynamic {
		return approvalRefused
	}
	b.mu.Lock()
	rec, ok := b.m[s.URI.String()]
	b.mu.Unlock()
	if !ok {
		return approvalPending
	}
	if diffBindings(b.cfg.Label, rec.Binding, bindingOf(b.cfg, s)) != nil {
		return approvalChanged
	}
	return approvalApproved
}

func (b *approvalBook) get(uri string) (approvalRecord, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	rec, ok := b.m[uri]
	return rec, ok
}

// approve binds an approval to s as held and saves the book.
func (b *approvalBook) approve(s *verify.Skill) (approvalRecord, error) {
	rec := approvalRecord{Binding: bindingOf(b.cfg, s), At: b.now().UTC()}
	b.mu.Lock()
	prev, had := b.m[rec.URI]
	b.m[rec.URI] = rec
	b.mu.Unlock()
	if err := b.save(); err != nil {
		b.mu.Lock()
		if had {
			b.m[rec.URI] = prev
		} else {
			delete(b.m, rec.URI)
		}
		b.mu.Unlock()
		return approvalRecord{}, err
	}
	return rec, nil
}

// revoke drops the approval of uri and saves the book; it reports whether
// there was one.
func (b *approvalBook) revoke(uri string) (bool, error) {
	b.mu.Lock()
	prev, had := b.m[uri]
	delete(b.m, uri)
	b.mu.Unlock()
	if !had {
		return false, nil
	}
	if err := b.save(); err != nil {
		b.mu.Lock()
		b.m[uri] = prev
		b.mu.Unlock()
		return false, err
	}
	return true, nil
}

func (b *approvalBook) save() error {
	b.mu.Lock()
	sa := savedApprovals{Version: savedApprovalsVersion, Approvals: []approvalRecord{}}
	for _, k := range slices.Sorted(maps.Keys(b.m)) {
		sa.Approvals = append(sa.Approvals, b.m[k])
	}
	b.mu.Unlock()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sa); err != nil {
		return fmt.Errorf("save approvals of %s: %w", b.cfg.Label, err)
	}
	return b.store.SaveApprovals(buf.Bytes())
}

// load brings back the approvals of earlier runs. An approval recorded for
// another label or fingerprint is dropped: it was not given to this origin.
func (b *approvalBook) load() {
	if !b.required() {
		return
	}
	data, err := b.store.LoadApprovals()
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			b.log.Warn("loading approvals; every skill waits for approval", "op", "load", "err", err)
		}
		return
	}
	var sa savedApprovals
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // frontmatter numbers compare as written
	if err := dec.Decode(&sa); err != nil || sa.Version != savedApprovalsVersion {
		b.log.Warn("ignoring unreadable approvals; every skill waits for approval", "op", "load", "version", sa.Version, "err", err)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, rec := range sa.Approvals {
		if rec.Origin != b.cfg.Label || rec.Fingerprint != b.fp {
			b.log.Warn("ignoring an approval given to another origin identity", "op", "load", "uri", rec.URI, "err",
				fmt.Sprintf("recorded for %s-%s", rec.Origin, rec.Fingerprint))
			continue
		}
		if _, err := verify.ParseURI(rec.URI); err != nil {
			continue
		}
		b.m[rec.URI] = rec
	}
}
