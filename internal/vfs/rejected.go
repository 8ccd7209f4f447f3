package vfs

import (
	"errors"
	"fmt"
	"sync"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/resolver"
	"github.com/skillfs/skillfs/verify"
)

// A skill whose SKILL.md fails verification is not loaded (SEP-2640,
// "Frontmatter Verification": the skill MUST NOT be loaded; "Verification
// on Read": unverified content MUST NOT be used). Its supporting files may
// each match their own digest, but they belong to a skill the host has
// rejected: serving them would let an agent act on a skill whose
// instructions it was refused. So once a SKILL.md fails its digest, size
// or frontmatter check under an entry (or its response runs past the
// entry's size), the files of that skill are refused
// without asking the server, until the SKILL.md reads under that entry or
// a fresh entry replaces it (which a new binding digest tells apart).
//
// A file that another, not rejected, skill also lists (an enclosing skill
// lists its nested skill's files) is still served under that skill, and a
// skill's SKILL.md is never refused here: it is checked itself.

// rejections maps a held entry (skill URI and binding digest) to the
// failed check of its SKILL.md.
type rejections struct {
	cfg config.Origin // whose bindings the entries are
	mu  sync.Mutex
	m   map[string]error
}

// ReasonSkillRejected: the file's skill was not loaded because its SKILL.md
// failed verification under the same entry.
const ReasonSkillRejected = "skill-rejected"

func (r *rejections) key(sn *skillNode) string {
	return sn.uri() + "\x00" + bindingDigest(r.cfg, sn)
}

// note records the outcome of loading n when it is an entry's SKILL.md: a
// failed verification rejects those skills, a success lifts it.
func (r *rejections) note(n *node, err error) {
	if n == nil || n.file == nil || len(n.file.entryOf) == 0 {
		return
	}
	if err != nil && !contentFailed(err) {
		return // not a verdict on the content: offline, over budget…
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, sn := range n.file.entryOf {
		k := r.key(sn)
		if err == nil {
			delete(r.m, k)
			continue
		}
		if r.m == nil {
			r.m = map[string]error{}
		}
		r.m[k] = err
	}
}

// contentFailed reports whether a failed load says the bytes the server
// sent are not what the entry describes: a digest, size or frontmatter
// mismatch, or a response longer than the entry's size (which the resolver
// refuses before decoding it, reason over-limit).
func contentFailed(err error) bool {
	switch verify.ReasonOf(err) {
	case verify.DigestMismatch, verify.SizeMismatch, verify.FrontmatterMismatch:
		return true
	}
	return errors.Is(err, resolver.ErrTooLarge)
}

// check returns a *ReadError when n is a supporting file of skills that
// were all rejected, nil otherwise.
func (r *rejections) check(n *node) error {
	f := n.file
	if len(f.entryOf) > 0 || len(f.owners) == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var first error
	var owner *skillNode
	for _, sn := range f.owners {
		err, ok := r.m[r.key(sn)]
		if !ok {
			return nil
		}
		if first == nil {
			first, owner = err, sn
		}
	}
	var re *ReadError
	if errors.As(first, &re) {
		first = re.Err
	}
	return &ReadError{Path: n.path, Reason: ReasonSkillRejected,
		Err: fmt.Errorf("its skill %s was not loaded: its SKILL.md failed verification (%v); the skill's files are not served under this entry", owner.uri(), first)}
}
