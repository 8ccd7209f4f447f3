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

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/store"
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
// ReasonNotApproved) and waits in Pending with what changed, and why
// (review.go). Approving answers without fetching: the binding comes from
// the entry as held; the files' bytes are kept afterwards, for the diff of
// a later change (keepApproved).
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

// bindingDigest is the Digest of sn's binding, computed once per tree.
func bindingDigest(oc config.Origin, sn *skillNode) string {
	if d := sn.digest.Load(); d != nil {
		return *d
	}
	d := bindingOf(oc, sn.s).Digest()
	sn.digest.Store(&d)
	return d
}

type approvalRecord struct {
	Binding
	At time.Time `json:"approved_at"`
	// Kept names the digests of the files whose approved bytes the store
	// keeps for the diff of a later change (keptDigests, review.go).
	Kept []skill.Digest `json:"kept,omitempty"`
	// skill is the held entry the binding was taken from in this run:
	// while the catalog holds that very entry the approval holds without
	// a comparison. enc is the record as approvals.json holds it.
	skill *verify.Skill
	enc   []byte
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
	saver *store.Saver // writes approvals.json, before a change is taken
	log   *slog.Logger
	now   func() time.Time

	mu sync.Mutex
	m  map[string]approvalRecord // by skill URI
	// elsewhere are the URIs approved under the label's other identities
	// (store.Bucket.EarlierApprovals): never approved here on their
	// say-so, only named as why a skill is pending.
	elsewhere map[string]bool
}

func newApprovalBook(oc config.Origin, st *store.Bucket, log *slog.Logger, now func() time.Time) *approvalBook {
	b := &approvalBook{cfg: oc, store: st, log: log, now: now, m: map[string]approvalRecord{}}
	b.saver = st.NewSaver(store.ApprovalsSidecar, store.SaverOptions{Logger: log})
	if oc.Approval.Required() {
		b.fp = fingerprintOf(oc)
	}
	return b
}

// stop ends the book's saves, when the origin's supervisor has ended: an
// approval under way is written first, and one asked for later fails
// rather than be written into a store a new session of the origin may own.
func (b *approvalBook) stop() { b.saver.Stop() }

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
	if rec.skill == s {
		return approvalApproved
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

// approveMany binds an approval to each skill as held (in order) and saves
// the book once. When approvals.json would pass its cap, it approves the
// longest prefix that fits and returns with that count an error that
// Is store.ErrTooLarge; the others are not approved. Nothing is approved
// when the save fails.
func (b *approvalBook) approveMany(ss []*verify.Skill) (int, error) {
	at := b.now().UTC()
	b.mu.Lock()
	defer b.mu.Unlock()
	parts := make(map[string][]byte, len(b.m)+len(ss))
	total := len(approvalsHead) + len(approvalsTail)
	for uri, rec := range b.m {
		p, err := rec.encoded()
		if err != nil {
			return 0, fmt.Errorf("save approvals of %s: %w", b.cfg.Label, err)
		}
		if rec.enc == nil {
			rec.enc = p
			b.m[uri] = rec
		}
		parts[uri] = p
		total += len(p) + len(approvalsSep)
	}
	var recs []approvalRecord
	var capErr error
	for _, s := range ss {
		rec := approvalRecord{Binding: bindingOf(b.cfg, s), At: at, skill: s, Kept: keptDigests(s)}
		p, err := rec.encoded()
		if err != nil {
			return 0, fmt.Errorf("save approvals of %s: %w", b.cfg.Label, err)
		}
		rec.enc = p
		add := len(p) + len(approvalsSep)
		if old, ok := parts[rec.URI]; ok {
			add -= len(old) + len(approvalsSep)
		}
		if total+add > store.MaxApprovalsSize {
			capErr = fmt.Errorf("approvals.json of %s would pass its cap of %d bytes: %w", b.cfg.Label, store.MaxApprovalsSize, store.ErrTooLarge)
			break
		}
		parts[rec.URI] = p
		total += add
		recs = append(recs, rec)
	}
	if len(recs) == 0 {
		return 0, capErr
	}
	if err := b.saver.Write(assembleApprovals(parts)); err != nil {
		return 0, err
	}
	for _, rec := range recs {
		b.m[rec.URI] = rec
	}
	return len(recs), capErr
}

// approve approves one skill (approveMany).
func (b *approvalBook) approve(s *verify.Skill) (approvalRecord, error) {
	n, err := b.approveMany([]*verify.Skill{s})
	if n == 0 {
		return approvalRecord{}, err
	}
	rec, _ := b.get(s.URI.String())
	return rec, nil
}

// revoke drops the approval of uri (revokeMany); it reports whether there
// was one.
func (b *approvalBook) revoke(uri string) (bool, error) {
	had, err := b.revokeMany([]string{uri})
	return len(had) > 0, err
}

// revokeMany drops the approvals of uris and saves the book once; it
// returns the URIs that had one.
func (b *approvalBook) revokeMany(uris []string) ([]string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	prev := map[string]approvalRecord{}
	var had []string
	for _, u := range uris {
		if rec, ok := b.m[u]; ok {
			prev[u] = rec
			had = append(had, u)
			delete(b.m, u)
		}
	}
	if len(had) == 0 {
		return nil, nil
	}
	if err := b.saveLocked(); err != nil {
		maps.Copy(b.m, prev)
		return nil, err
	}
	return had, nil
}

// approvals.json is written record by record, so that approveMany knows
// its size before it writes it: one save per command, whatever its size.
const (
	approvalsHead = "{\"version\": 1, \"approvals\": [\n"
	approvalsSep  = ",\n"
	approvalsTail = "\n]}\n"
)

// encoded is the record as approvals.json holds it: one line of JSON.
func (rec approvalRecord) encoded() ([]byte, error) {
	if rec.enc != nil {
		return rec.enc, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// assembleApprovals is approvals.json of the records (by URI), sorted.
func assembleApprovals(parts map[string][]byte) []byte {
	if len(parts) == 0 {
		return []byte("{\"version\": 1, \"approvals\": []}\n")
	}
	n := len(approvalsHead) + len(approvalsTail)
	for _, p := range parts {
		n += len(p) + len(approvalsSep)
	}
	out := make([]byte, 0, n)
	out = append(out, approvalsHead...)
	for i, k := range slices.Sorted(maps.Keys(parts)) {
		if i > 0 {
			out = append(out, approvalsSep...)
		}
		out = append(out, parts[k]...)
	}
	return append(out, approvalsTail...)
}

// saveLocked writes the book as it is; b.mu is held.
func (b *approvalBook) saveLocked() error {
	parts := make(map[string][]byte, len(b.m))
	for uri, rec := range b.m {
		p, err := rec.encoded()
		if err != nil {
			return fmt.Errorf("save approvals of %s: %w", b.cfg.Label, err)
		}
		parts[uri] = p
	}
	return b.saver.Write(assembleApprovals(parts))
}

// approvedElsewhere reports whether uri was approved under another
// identity of the label.
func (b *approvalBook) approvedElsewhere(uri string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.elsewhere[uri]
}

// loadElsewhere notes the URIs approved under the label's other
// identities in the store.
func (b *approvalBook) loadElsewhere() {
	docs, err := b.store.EarlierApprovals(b.cfg.Label)
	if err != nil {
		b.log.Info("looking for approvals of earlier entries of this server", "op", "load", "err", err)
		return
	}
	seen := map[string]bool{}
	for _, data := range docs {
		var sa savedApprovals
		if json.Unmarshal(data, &sa) != nil {
			continue
		}
		for _, rec := range sa.Approvals {
			if rec.Origin == b.cfg.Label && rec.Fingerprint != b.fp {
				seen[rec.URI] = true
			}
		}
	}
	b.mu.Lock()
	b.elsewhere = seen
	b.mu.Unlock()
}

// load brings back the approvals of earlier runs. An approval recorded for
// another label or fingerprint is dropped: it was not given to this origin.
func (b *approvalBook) load() {
	if !b.required() {
		return
	}
	b.loadElsewhere()
	data, err := b.store.Load(store.ApprovalsSidecar)
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
