package vfs

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/store"
)

// What an origin's store bucket holds on its sidecars' say-so, for the
// store's eviction (cache.max_size) and skillfs cache gc: the digests its
// catalog.json names (the tree a mount using the origin serves; the
// catalog is saved on every swap) and those its approvals.json names
// (every approved version's files and the kept ones: they are held,
// whoever uses the origin, so that a change can be shown against them).
// The files are read through the store, as the catalog and the approval
// book read them, and decoded with their types here, never a second way.

// SavedCatalogDigests returns the digests of every resource of every entry
// in o's catalog.json; none when there is no catalog. An error means the
// catalog could not be read or decoded: the caller holds all of o's
// objects rather than guess.
func SavedCatalogDigests(o *store.Bucket) ([]skill.Digest, error) {
	data, err := o.Load(store.CatalogSidecar)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var sc savedCatalog
	if err := json.Unmarshal(data, &sc); err != nil {
		return nil, fmt.Errorf("decode catalog of %s: %w", o.ID(), err)
	}
	var out []skill.Digest
	for _, e := range sc.Entries {
		for _, r := range e.Resources {
			out = append(out, r.Digest)
		}
	}
	return out, nil
}

// ApprovedDigests returns the digests o's approvals.json holds
// (ApprovalsHeld: every approved resource and every kept file); none when
// there are no approvals. An error is as for SavedCatalogDigests.
func ApprovedDigests(o *store.Bucket) ([]skill.Digest, error) {
	data, err := o.Load(store.ApprovalsSidecar)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ds, err := ApprovalsHeld(data)
	if err != nil {
		return nil, fmt.Errorf("approvals of %s: %w", o.ID(), err)
	}
	return ds, nil
}

// HeldDigests returns, by origin id, the digests the entries this mount
// holds name: each origin's tree in force. Its catalog.json says the same
// once saved, but a mount goes live, and reads, before its first catalog
// is on disk; the store's eviction asks this for the mount's own origins.
func (c *Core) HeldDigests() map[string][]skill.Digest {
	out := map[string][]skill.Digest{}
	for _, o := range c.all() {
		id := o.cat.cfg.ID()
		for _, s := range o.cat.current().catalog().Skills {
			for _, r := range s.Entry.Resources {
				out[id] = append(out[id], r.Digest)
			}
		}
	}
	return out
}
