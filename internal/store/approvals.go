package store

import (
	"errors"
	"fmt"
	"io/fs"
)

// approvalsName holds the user's approvals of the origin's skills (its
// format is package vfs's). Unlike flags.json it decides what the mount
// shows, so it is written durably; and like everything here it is
// host-only, not secret from an agent running as the same user (see the
// package doc: such an agent can also run `skillfs approve`).
const approvalsName = "approvals.json"

// MaxApprovalsSize bounds approvals.json.
const MaxApprovalsSize = 16 << 20

// LoadApprovals returns the saved approvals.json, or ErrNotFound. One that
// is not a regular file or is over its cap is removed and logged: the
// skills it approved are pending again, never shown on its say-so.
func (o *Bucket) LoadApprovals() ([]byte, error) {
	if o.removed.Load() {
		return nil, fmt.Errorf("load approvals of %s: %w", o.id, ErrNotFound)
	}
	fi, err := o.root.Lstat(approvalsName)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("load approvals of %s: %w", o.id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("load approvals of %s: %w", o.id, err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > MaxApprovalsSize {
		return nil, o.discard("approvals", "", approvalsName, fi, fmt.Sprintf("not a regular file of at most %d bytes (mode %v, size %d)", MaxApprovalsSize, fi.Mode(), fi.Size()))
	}
	b, reason, err := readRegular(o.root, approvalsName, fi, MaxApprovalsSize)
	if err != nil {
		return nil, fmt.Errorf("load approvals of %s: %w", o.id, err)
	}
	if reason != "" {
		return nil, o.discard("approvals", "", approvalsName, fi, reason)
	}
	return b, nil
}
