package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Limits bound what skillfs asks of one server (DESIGN.md rule 5). Every
// field has a default (DefaultLimits); a config can change any of them but
// cannot switch one off, except RefreshInterval, whose zero disables the
// periodic re-list.
type Limits struct {
	MaxFileSize      int64         // per-file hard cap, whatever a server declares; default 16 MiB
	Budget           int64         // bytes fetched from this server per BudgetWindow; default 512 MiB
	BudgetWindow     time.Duration // the sliding window Budget applies to; default 1h
	MaxListPages     int           // skills/list pages followed; default 1000
	MaxListEntries   int           // skills/list entries kept; default 100000
	MaxListResources int           // resources of the kept skills, summed over a listing; default 100000
	MaxListBytes     int64         // bytes of skills/list entries received, kept or rejected; default 32 MiB
	MaxDirPages      int           // pages per resources/directory/read; default 100
	MaxDirEntries    int           // children per directory; default 10000
	CallTimeout      time.Duration // each request; default 30s
	ConnectTimeout   time.Duration // connect + handshake; default 15s
	ListTimeout      time.Duration // whole skills/list enumeration; default 2m
	RefreshInterval  time.Duration // periodic re-list; default 10m; 0 disables
	// StartAttempts is how many times in a row a session may fail to start
	// (the command does not run, the URL does not answer, the handshake
	// fails) before skillfs stops retrying until SIGHUP or a change of the
	// server's entry; default 10 (about 2 minutes of backoff).
	StartAttempts int
}

// DefaultLimits returns the limits an origin has when the config says
// nothing.
func DefaultLimits() Limits {
	return Limits{
		MaxFileSize:    16 << 20,
		Budget:         512 << 20,
		BudgetWindow:   time.Hour,
		MaxListPages:   1000,
		MaxListEntries: 100_000,
		// A 10,000-skill catalog of 3–5 files each (the benchmark's) lists
		// about 40,000 resources in about 9 MB of entries; these leave room
		// for 2.5× that many files and descriptions at their 1024-byte limit,
		// and keep a hostile listing to a few hundred MB of memory.
		MaxListResources: 100_000,
		MaxListBytes:     32 << 20,
		MaxDirPages:      100,
		MaxDirEntries:    10_000,
		CallTimeout:      30 * time.Second,
		ConnectTimeout:   15 * time.Second,
		ListTimeout:      2 * time.Minute,
		RefreshInterval:  10 * time.Minute,
		StartAttempts:    10,
	}
}

type limitKind int

const (
	sizeLimit limitKind = iota
	countLimit
	durationLimit
)

// limitKeys are the keys of a limits object, in the order doc.go lists them.
var limitKeys = []struct {
	key    string
	kind   limitKind
	zeroOK bool // 0 is meaningful (disables), not a mistake
	set    func(*Limits, int64)
}{
	{key: "max_file_size", kind: sizeLimit, set: func(l *Limits, v int64) { l.MaxFileSize = v }},
	{key: "budget", kind: sizeLimit, set: func(l *Limits, v int64) { l.Budget = v }},
	{key: "budget_window", kind: durationLimit, set: func(l *Limits, v int64) { l.BudgetWindow = time.Duration(v) }},
	{key: "max_list_pages", kind: countLimit, set: func(l *Limits, v int64) { l.MaxListPages = int(v) }},
	{key: "max_list_entries", kind: countLimit, set: func(l *Limits, v int64) { l.MaxListEntries = int(v) }},
	{key: "max_list_resources", kind: countLimit, set: func(l *Limits, v int64) { l.MaxListResources = int(v) }},
	{key: "max_list_bytes", kind: sizeLimit, set: func(l *Limits, v int64) { l.MaxListBytes = v }},
	{key: "max_dir_pages", kind: countLimit, set: func(l *Limits, v int64) { l.MaxDirPages = int(v) }},
	{key: "max_dir_entries", kind: countLimit, set: func(l *Limits, v int64) { l.MaxDirEntries = int(v) }},
	{key: "call_timeout", kind: durationLimit, set: func(l *Limits, v int64) { l.CallTimeout = time.Duration(v) }},
	{key: "connect_timeout", kind: durationLimit, set: func(l *Limits, v int64) { l.ConnectTimeout = time.Duration(v) }},
	{key: "list_timeout", kind: durationLimit, set: func(l *Limits, v int64) { l.ListTimeout = time.Duration(v) }},
	{key: "refresh_interval", kind: durationLimit, zeroOK: true, set: func(l *Limits, v int64) { l.RefreshInterval = time.Duration(v) }},
	{key: "start_attempts", kind: countLimit, set: func(l *Limits, v int64) { l.StartAttempts = int(v) }},
}

func limitKeyNames() []string {
	out := make([]string, len(limitKeys))
	for i, k := range limitKeys {
		out[i] = k.key
	}
	return out
}

// parseLimits reads a limits object into one setter per key given, so that
// levels (defaults, then one server) override each other key by key.
func parseLimits(v *value, path keyPath, errs *errorList) []func(*Limits) {
	if v.isNull() {
		return nil
	}
	if v.kind != mapValue {
		errs.add(path, "write an object such as {budget: 64MiB, call_timeout: 30s}", "is %s, not an object", v.kind)
		return nil
	}
	var sets []func(*Limits)
	for _, k := range v.keys {
		kp := path.key(k)
		i := -1
		for j := range limitKeys {
			if limitKeys[j].key == k {
				i = j
			}
		}
		if i < 0 {
			errs.add(kp, unknownKeyFix(k, limitKeyNames()), "unknown limit %q", k)
			continue
		}
		lk := limitKeys[i]
		var n int64
		var problem, fix string
		switch lk.kind {
		case sizeLimit:
			n, problem = parseSize(v.fields[k])
			fix = `write bytes as an integer or with a unit, such as 16MiB or "512 MiB"`
		case countLimit:
			n, problem = parseCount(v.fields[k])
			fix = "write a positive integer"
		case durationLimit:
			n, problem = parseDuration(v.fields[k])
			fix = `write a duration such as "30s" or "2m", or an integer number of milliseconds`
		}
		if problem == "" && n == 0 && !lk.zeroOK {
			problem = "is 0, which would leave the bound unusable"
			fix = "give a positive value, or remove the key for the default"
		}
		if problem != "" {
			errs.add(kp, fix, "%s", problem)
			continue
		}
		sets = append(sets, func(l *Limits) { lk.set(l, n) })
	}
	return sets
}

// sizeUnits are the accepted units, matched case-insensitively: nobody
// means bits in a file-size limit.
var sizeUnits = []struct {
	name string
	mult int64
}{
	{"b", 1},
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
}

// parseSize reads an integer number of bytes or a string such as "16MiB",
// "16 MiB" or "1.5GiB". It returns a problem description, "" when fine.
func parseSize(v *value) (int64, string) {
	switch v.kind {
	case numberValue:
		n, err := strconv.ParseInt(v.text, 10, 64)
		if err != nil {
			return 0, fmt.Sprintf("%s is not a whole number of bytes", v.text)
		}
		if n < 0 {
			return 0, fmt.Sprintf("%d is negative", n)
		}
		return n, ""
	case stringValue:
		return parseSizeString(v.text)
	}
	return 0, fmt.Sprintf("is %s, not a size", v.kind)
}

func parseSizeString(s string) (int64, string) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.TrimSpace(t[i:])
	}
	if num == "" {
		return 0, fmt.Sprintf("%q does not start with a number", s)
	}
	mult := int64(1)
	if unit != "" {
		mult = 0
		for _, u := range sizeUnits {
			if strings.EqualFold(unit, u.name) {
				mult = u.mult
			}
		}
		if mult == 0 {
			return 0, fmt.Sprintf("%q has unknown unit %q (known: B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s, unit)
		}
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n > math.MaxInt64/mult {
			return 0, fmt.Sprintf("%q is too large", s)
		}
		return n * mult, ""
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Sprintf("%q is not a number with a unit", s)
	}
	bytes := f * float64(mult)
	if bytes >= math.MaxInt64 {
		return 0, fmt.Sprintf("%q is too large", s)
	}
	if bytes != math.Trunc(bytes) {
		return 0, fmt.Sprintf("%q is not a whole number of bytes", s)
	}
	return int64(bytes), ""
}

func parseCount(v *value) (int64, string) {
	if v.kind != numberValue {
		return 0, fmt.Sprintf("is %s, not an integer", v.kind)
	}
	n, err := strconv.ParseInt(v.text, 10, 32)
	if err != nil {
		return 0, fmt.Sprintf("%s is not an integer below 2^31", v.text)
	}
	if n < 0 {
		return 0, fmt.Sprintf("%d is negative", n)
	}
	return n, ""
}

// parseDuration reads a Go duration string ("30s", "1m30s") or an integer
// number of milliseconds (as a number, or a string of digits).
func parseDuration(v *value) (int64, string) {
	var s string
	switch v.kind {
	case numberValue, stringValue:
		s = strings.TrimSpace(v.text)
	default:
		return 0, fmt.Sprintf("is %s, not a duration", v.kind)
	}
	if s != "" && strings.Trim(s, "0123456789") == "" || strings.HasPrefix(s, "-") && strings.Trim(s[1:], "0123456789") == "" && len(s) > 1 {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil || ms > math.MaxInt64/int64(time.Millisecond) {
			return 0, fmt.Sprintf("%s milliseconds is too long", s)
		}
		if ms < 0 {
			return 0, fmt.Sprintf("%s is negative", s)
		}
		return ms * int64(time.Millisecond), ""
	}
	if v.kind == numberValue {
		return 0, fmt.Sprintf("%s is not a whole number of milliseconds", s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Sprintf("%q is not a duration", v.text)
	}
	if d < 0 {
		return 0, fmt.Sprintf("%q is negative", v.text)
	}
	return int64(d), ""
}

// ParseSize reads a size as the config file writes one: a whole number of
// bytes or a number with a unit ("16MiB", "1.5 GiB", "64KB").
func ParseSize(s string) (int64, error) {
	n, problem := parseSizeString(s)
	if problem != "" {
		return 0, errors.New(problem)
	}
	return n, nil
}
