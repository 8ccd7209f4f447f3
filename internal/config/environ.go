package config

import (
	"sort"
	"strings"
)

// BaseEnv are the variables of skillfs's own environment that every stdio
// server gets, the set the MCP SDKs pass by default (HOME, LOGNAME, PATH,
// SHELL, TERM, USER), plus TMPDIR, LANG and every LC_* variable. Nothing
// else of skillfs's environment reaches a server unless its pass_env names
// it: the variables that hold other servers' tokens stay with skillfs.
var BaseEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "LANG"}

// Environ is the environment o's server is started with, given skillfs's
// own (os.Environ()): the variables of BaseEnv and LC_*, and those o.PassEnv
// names, that are set in environ; then o.Env (env and envFile), which wins.
// It is sorted by name.
func (o Origin) Environ(environ []string) []string {
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if contains(BaseEnv, k) || strings.HasPrefix(k, "LC_") || contains(o.PassEnv, k) {
			vars[k] = v
		}
	}
	for k, v := range o.Env {
		vars[k] = v
	}
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
