package store

import (
	"fmt"
	"strings"
)

// MaxEarlierIdentities bounds how many other identities of one label
// EarlierApprovals reads.
const MaxEarlierIdentities = 16

// EarlierApprovals returns, by origin id, the approvals.json of the label's
// other identities in the store: buckets named label-<fingerprint> other
// than this one, left by earlier versions of the server's entry (another
// argument, env value, URL or header gives another fingerprint). It reads
// them and changes nothing: such approvals are never carried over (they
// were given to another entry), but a pending skill can say that it had
// one. At most MaxEarlierIdentities are read; a file that is not a regular
// file of at most MaxApprovalsSize bytes is skipped.
func (o *Bucket) EarlierApprovals(label string) (map[string][]byte, error) {
	ids, err := o.s.Origins()
	if err != nil {
		return nil, fmt.Errorf("earlier approvals of %s: %w", label, err)
	}
	out := map[string][]byte{}
	for _, id := range ids {
		fp, ok := strings.CutPrefix(id, label+"-")
		if !ok || id == o.id || fp == "" || strings.Contains(fp, "-") {
			continue
		}
		if len(out) == MaxEarlierIdentities {
			break
		}
		rel := id + "/" + approvalsName
		fi, err := o.s.root.Lstat(rel)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxApprovalsSize {
			continue
		}
		b, reason, err := readRegular(o.s.root, rel, fi, MaxApprovalsSize)
		if err != nil || reason != "" {
			continue
		}
		out[id] = b
	}
	return out, nil
}
