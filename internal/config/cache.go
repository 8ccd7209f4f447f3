package config

import (
	"strings"
	"time"
)

// Cache is the skillfs.cache section: how the store of verified bytes
// cleans itself (see package store, gc.go). The zero value is the
// defaults.
type Cache struct {
	// MaxSize bounds the bytes of the stored files (objects) across every
	// server: past it, files nothing holds (no running mount's tree, no
	// approval) are removed, least recently used first. 0 means
	// DefaultCacheMaxSize; negative means no bound (max_size: off or 0).
	MaxSize int64
	// KeepDays: a server identity no mount has used for this many days
	// loses its catalog, approvals and files. 0 means DefaultCacheKeepDays;
	// negative means never (keep_days: off or 0).
	KeepDays int
}

// The defaults of the cache section.
const (
	DefaultCacheMaxSize  = 1 << 30
	DefaultCacheKeepDays = 30
)

// Bound is the size bound in force in bytes; 0 when there is none.
func (c Cache) Bound() int64 {
	switch {
	case c.MaxSize == 0:
		return DefaultCacheMaxSize
	case c.MaxSize < 0:
		return 0
	}
	return c.MaxSize
}

// Keep is how long an unused server identity is kept; 0 for ever.
func (c Cache) Keep() time.Duration {
	switch {
	case c.KeepDays == 0:
		return DefaultCacheKeepDays * 24 * time.Hour
	case c.KeepDays < 0:
		return 0
	}
	return time.Duration(c.KeepDays) * 24 * time.Hour
}

var cacheKeys = []string{"max_size", "keep_days"}

// isOff reports whether v switches a cache setting off: "off", false or 0.
func isOff(v *value) bool {
	switch v.kind {
	case stringValue:
		return strings.EqualFold(strings.TrimSpace(v.text), "off")
	case boolValue:
		return v.text == "false"
	case numberValue:
		return v.text == "0"
	}
	return false
}

// cache reads skillfs.cache.
func (p *parser) cache(section *value, sp keyPath, cfg *Config) {
	v := section.field("cache")
	if v.isNull() {
		return
	}
	cp := sp.key("cache")
	if v.kind != mapValue {
		p.errs.add(cp, "write an object such as {max_size: 2GiB, keep_days: 30}", "is %s, not an object", v.kind)
		return
	}
	for _, k := range v.keys {
		if !contains(cacheKeys, k) {
			p.errs.add(cp.key(k), unknownKeyFix(k, cacheKeys), "unknown key %q", k)
		}
	}
	if f := v.field("max_size"); !f.isNull() {
		if isOff(f) {
			cfg.Cache.MaxSize = -1
		} else if n, problem := parseSize(f); problem != "" {
			p.errs.add(cp.key("max_size"), `write bytes with a unit, such as 500MiB or 2GiB (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB), or off for no bound`, "%s", problem)
		} else {
			cfg.Cache.MaxSize = n
		}
	}
	if f := v.field("keep_days"); !f.isNull() {
		if isOff(f) {
			cfg.Cache.KeepDays = -1
		} else if n, problem := parseCount(f); problem != "" {
			p.errs.add(cp.key("keep_days"), "write a whole number of days such as 30, or off to keep unused servers' caches for ever", "%s", problem)
		} else {
			cfg.Cache.KeepDays = int(n)
		}
	}
}
