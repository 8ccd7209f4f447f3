package vfs

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"time"

	"github.com/skillfs/skillfs/config"
	"github.com/skillfs/skillfs/resolver"
	"github.com/skillfs/skillfs/skill"
	"github.com/skillfs/skillfs/store"
	"github.com/skillfs/skillfs/verify"
)

// savedCatalog is the on-disk form of an origin's last held catalog. The
// entries are stored as the server sent them and checked again on load, so
// a stored catalog an agent tampered with cannot pass as verified: it can
// only name digests, and bytes are served only when they hash to them.
//
// A listing the server marked cacheScope "private" belongs to the
// credentials it was asked with: it is saved with a fingerprint of them
// (Credentials) and shown again only under the same ones.
type savedCatalog struct {
	Version     int                  `json:"version"`
	At          time.Time            `json:"at"`
	Truncated   string               `json:"truncated,omitempty"`
	CacheScope  string               `json:"cache_scope"`
	Credentials string               `json:"credentials,omitempty"`
	Entries     []skill.Entry        `json:"entries"`
	Rejected    []resolver.Rejection `json:"rejected,omitempty"`
}

// Version 2 records the cache scope; a version 1 catalog, whose scope is
// unknown, is not shown.
const savedCatalogVersion = 2

// credentials names what an origin authenticates with without holding
// it: the origin's identity, which covers its env, headers and URL (keyed
// with the cache's identity key, so nothing on disk can be tested against
// a guessed secret). The store directory is already per identity; the
// saved catalog says it again so that a catalog copied elsewhere is not
// shown under other credentials.
func credentials(oc config.Origin) string { return oc.ID() }

func (o *origin) saveCatalog() {
	c := o.tree.Load().catalog()
	sc := savedCatalog{Version: savedCatalogVersion, At: c.At, Truncated: c.Truncated, CacheScope: c.CacheScope, Rejected: c.Rejected}
	if sc.CacheScope == "" {
		sc.CacheScope = resolver.ScopePublic
	}
	if sc.CacheScope == resolver.ScopePrivate {
		sc.Credentials = credentials(o.cfg)
	}
	sc.Entries = make([]skill.Entry, 0, len(c.Skills))
	for _, s := range c.Skills {
		sc.Entries = append(sc.Entries, s.Entry)
	}
	// Without HTML escaping the saved catalog is no larger than the
	// entries as received (max_list_bytes), so it fits the store's cap.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(sc); err != nil {
		o.log.Error("saving catalog", "op", "save", "err", err)
		return
	}
	b := buf.Bytes()
	sum := sha256.Sum256(b)
	if p := o.catSaved.Load(); p != nil && *p == sum {
		return
	}
	if err := o.store.SaveCatalog(b); err != nil {
		// store records it for status.json: a restart with the server
		// down will not show this catalog.
		o.log.Warn("catalog not saved; a restart with the server down will not show it", "op", "save", "err", err)
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
	if err := json.Unmarshal(b, &sc); err != nil {
		o.log.Warn("ignoring unreadable saved catalog", "op", "load", "err", err)
		return
	}
	if sc.Version != savedCatalogVersion {
		o.log.Info("ignoring a saved catalog of another skillfs version", "op", "load", "version", sc.Version)
		return
	}
	scope := resolver.ScopePublic
	if sc.CacheScope != resolver.ScopePublic {
		scope = resolver.ScopePrivate
	}
	if scope == resolver.ScopePrivate && sc.Credentials != credentials(o.cfg) {
		o.log.Info("not showing the saved catalog: it is private to other credentials", "op", "load")
		return
	}
	cat := &resolver.Catalog{At: sc.At, Truncated: sc.Truncated, Rejected: sc.Rejected, CacheScope: scope}
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
		cat.Resources += len(s.Files)
	}
	if scope == resolver.ScopePrivate && o.cfg.Shared {
		cat.Withheld = resolver.WithheldReason(len(cat.Skills))
		o.log.Warn("saved listing withheld from the shared mount", "op", "load", "err", cat.Withheld)
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
