package config

import (
	"testing"
	"time"
)

func TestCacheSection(t *testing.T) {
	const day = 24 * time.Hour
	for _, tc := range []struct {
		name, path, src string
		bound           int64
		keep            time.Duration
	}{
		{"absent", "c.json", `{"mcpServers": {"a": {"command": "a"}}}`, 1 << 30, 30 * day},
		{"units", "c.yaml", "mcpServers: {a: {command: a}}\nskillfs: {cache: {max_size: 500MiB, keep_days: 7}}\n", 500 << 20, 7 * day},
		{"GiB with space", "c.json", `{"mcpServers": {"a": {"command": "a"}}, "skillfs": {"cache": {"max_size": "2 GiB"}}}`, 2 << 30, 30 * day},
		{"bytes", "c.json", `{"mcpServers": {"a": {"command": "a"}}, "skillfs": {"cache": {"max_size": 65536}}}`, 65536, 30 * day},
		{"off", "c.yaml", "mcpServers: {a: {command: a}}\nskillfs: {cache: {max_size: off, keep_days: off}}\n", 0, 0},
		{"zero", "c.json", `{"mcpServers": {"a": {"command": "a"}}, "skillfs": {"cache": {"max_size": 0, "keep_days": 0}}}`, 0, 0},
		{"false", "c.json", `{"mcpServers": {"a": {"command": "a"}}, "skillfs": {"cache": {"max_size": false}}}`, 0, 30 * day},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustParse(t, tc.src, tc.path)
			if got := cfg.Cache.Bound(); got != tc.bound {
				t.Errorf("Bound() = %d, want %d", got, tc.bound)
			}
			if got := cfg.Cache.Keep(); got != tc.keep {
				t.Errorf("Keep() = %v, want %v", got, tc.keep)
			}
		})
	}
}

func TestCacheSectionErrors(t *testing.T) {
	const f = "/cfg/c.json"
	sfs := func(section string) string {
		return `{"mcpServers": {"acme": {"command": "a"}}, "skillfs": ` + section + `}`
	}
	for _, tc := range []struct {
		name, src, key, problem, fix string
	}{
		{"not object", sfs(`{"cache": "1GiB"}`), "skillfs.cache", "is a string, not an object", "{max_size: 2GiB, keep_days: 30}"},
		{"size unit", sfs(`{"cache": {"max_size": "2G"}}`), "skillfs.cache.max_size", `unknown unit "G"`, "500MiB or 2GiB"},
		{"size word", sfs(`{"cache": {"max_size": "lots"}}`), "skillfs.cache.max_size", "does not start with a number", "or off for no bound"},
		{"size negative", sfs(`{"cache": {"max_size": -1}}`), "skillfs.cache.max_size", "-1 is negative", "2GiB"},
		{"days string", sfs(`{"cache": {"keep_days": "30d"}}`), "skillfs.cache.keep_days", "is a string, not an integer", "whole number of days"},
		{"days fraction", sfs(`{"cache": {"keep_days": 1.5}}`), "skillfs.cache.keep_days", "not an integer", "whole number of days"},
		{"typo", sfs(`{"cache": {"maxsize": "1GiB"}}`), "skillfs.cache.maxsize", `unknown key "maxsize"`, `did you mean "max_size"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), f, testEnv)
			checkError(t, err, displayName(f), tc.key, tc.problem, tc.fix)
		})
	}
}
