package vfs

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"time"

	"github.com/skillfs/skillfs/resolver"
	"github.com/skillfs/skillfs/skill"
	"github.com/skillfs/skillfs/store"
	"github.com/skillfs/skillfs/verify"
)

// savedCatalog is the on-disk form of an origin's last held catalog. The
// entries are stored as the server sent them and checked again on load, so
// a stored catalog an agent tampered with cannot pass as verified: it can
// only name digests, and bytes are served only when they hash to them.
type savedCatalog struct {
	Version   int                  `json:"version"`
	At        time.Time            `json:"at"`
	Truncated string               `json:"truncated,omitempty"`
	Entries   []skill.Entry        `json:"entries"`
	Rejected  []resolver.Rejection `json:"rejected,omitempty"`
}

const savedCatalogVersion = 1

func (o *origin) saveCatalog() {
	c := o.tree.Load().catalog()
	sc := savedCatalog{Version: savedCatalogVersion, At: c.At, Truncated: c.Truncated, Rejected: c.Rejected}
	for _, s := range c.Skills {
		sc.Entries = append(sc.Entries, s.Entry)
	}
	b, err := json.Marshal(sc)
	if err != nil {
		o.log.Error("saving catalog", "op", "save", "err", err)
		return
	}
	sum := sha256.Sum256(b)
	if p := o.catSaved.Load(); p != nil && *p == sum {
		return
	}
	if err := o.store.SaveCatalog(b); err != nil {
		o.log.Warn("saving catalog", "op", "save", "err", err)
		return
	}
	o.catSaved.Store(&sum)
}

// loadSaved shows the last held catalog until the server answers, so that a
// restart with the server down still shows the tree.
func (o *origin) loadSaved() {
	b, err := o.store.LoadCatalog()
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			o.log.Warn("loading saved catalog", "op", "load", "err", err)
		}
		return
	}
	var sc savedCatalog
	if err := json.Unmarshal(b, &sc); err != nil || sc.Version != savedCatalogVersion {
		o.log.Warn("ignoring unreadable saved catalog", "op", "load", "err", err)
		return
	}
	cat := &resolver.Catalog{At: sc.At, Truncated: sc.Truncated, Rejected: sc.Rejected}
	opts := verify.EntryOptions{Strict: o.cfg.Strict, MaxFileSize: o.cfg.Limits.MaxFileSize}
	for _, e := range sc.Entries {
		s, err := verify.CheckEntry(e, opts)
		if err != nil {
			o.log.Warn("saved entry no longer passes", "op", "load", "uri", e.URI, "err", err)
			continue
		}
		if s.Dynamic && !o.cfg.AllowDynamic {
			continue
		}
		cat.Skills = append(cat.Skills, s)
	}
	sum := sha256.Sum256(b)
	o.catSaved.Store(&sum)
	o.swap(func(old *tree) (*resolver.Catalog, string) {
		if old.source == "live" {
			// The server answered first; keep its catalog.
			return old.catalog(), "live"
		}
		return cat, "saved"
	})
	o.markReady()
	o.log.Info("showing saved catalog until the server answers", "op", "load", "skills", len(cat.Skills))
}

// saveFlags keeps the content flags found so far (see store.SaveFlags).
func (o *origin) saveFlags() {
	t := o.tree.Load()
	o.mu.Lock()
	held := map[string]bool{}
	for _, sn := range t.skills {
		if n := t.nodes[sn.s.URI.Path()]; n != nil && !n.isDir() {
			held[n.file.version.key()] = true
		}
	}
	for k := range o.flags {
		if !held[k] {
			delete(o.flags, k)
		}
	}
	b, err := json.Marshal(o.flags)
	o.mu.Unlock()
	if err != nil {
		return
	}
	if err := o.store.SaveFlags(b); err != nil {
		o.log.Warn("saving content flags", "op", "save", "err", err)
	}
}

// loadFlags brings back the content flags of earlier runs.
func (o *origin) loadFlags() {
	b, err := o.store.LoadFlags()
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			o.log.Warn("loading content flags", "op", "load", "err", err)
		}
		return
	}
	var m map[string][]string
	if err := json.Unmarshal(b, &m); err != nil {
		o.log.Warn("ignoring unreadable content flags", "op", "load", "err", err)
		return
	}
	o.mu.Lock()
	for k, v := range m {
		if _, ok := o.flags[k]; !ok {
			o.flags[k] = v
		}
	}
	o.mu.Unlock()
}
