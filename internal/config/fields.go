package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// fields reads the typed values of a config's objects: a value of the
// wrong kind adds a problem to errs and reads as absent, and ${VAR} is
// expanded with getenv, a relative path anchored at baseDir, as the
// config's author wrote them.
type fields struct {
	baseDir string
	getenv  func(string) (string, bool)
	errs    *errorList
}

// expandFailed adds expand's problem with the value at path.
func (rd *fields) expandFailed(path keyPath, err error) {
	var ee *expandError
	if !errors.As(err, &ee) {
		rd.errs.add(path, "fix the value", "%v", err)
		return
	}
	rd.errs.add(path, ee.fix, "%s", ee.problem)
}

// unknownKeys reports each key of a server entry that is neither read nor
// knowingly ignored.
func (rd *fields) unknownKeys(v *value, path keyPath) {
	for _, k := range v.keys {
		if !slices.Contains(entryKeys, k) && !slices.Contains(IgnoredServerKeys, k) {
			fix := unknownKeyFix(k, entryKeys)
			if s := suggest(k, IgnoredServerKeys); s != "" && suggest(k, entryKeys) == "" {
				fix = fmt.Sprintf("did you mean %q?", s)
			}
			rd.errs.add(path.key(k), fix, "unknown key %q", k)
		}
	}
}

// stringMap reads an object of scalars (env, headers), expanding values.
// Errors name the key but never print a value: these hold secrets.
func (rd *fields) stringMap(v *value, path keyPath, key string, badKey func(string) string, badValueChars string) map[string]string {
	m := v.field(key)
	if m.isNull() {
		return nil
	}
	mp := path.key(key)
	if m.kind != mapValue {
		rd.errs.add(mp, `write an object of names to strings, like {"NAME": "value"}`, "is %s, not an object", m.kind)
		return nil
	}
	out := make(map[string]string, len(m.keys))
	for _, k := range m.keys {
		kp := mp.key(k)
		if problem := badKey(k); problem != "" {
			rd.errs.add(kp, "rename it", "%q %s", k, problem)
			continue
		}
		s, ok := rd.expandScalar(m.fields[k], kp)
		if !ok {
			continue
		}
		if strings.ContainsAny(s, badValueChars) {
			rd.errs.add(kp, "remove line breaks and NUL characters from the value", "the value holds a line break or NUL character")
			continue
		}
		out[k] = s
	}
	return out
}

// str reads an optional string key; set is false when absent or null.
func (rd *fields) str(v *value, path keyPath, key string) (s string, set bool) {
	f := v.field(key)
	if f.isNull() {
		return "", false
	}
	if f.kind != stringValue {
		rd.errs.add(path.key(key), "write a string in quotes", "is %s, not a string", f.kind)
		return "", false
	}
	return f.text, true
}

// expanded reads an optional string key and expands ${VAR} in it.
func (rd *fields) expanded(v *value, path keyPath, key string) (string, bool) {
	s, set := rd.str(v, path, key)
	if !set {
		return "", false
	}
	out, err := expand(s, rd.getenv, rd.baseDir)
	if err != nil {
		rd.expandFailed(path.key(key), err)
		return "", false
	}
	return out, true
}

// expandScalar reads a list item or map value. Numbers and booleans are
// taken as written: `args: [--port, 8080]` and `DEBUG: true` in YAML mean
// the strings, and no host would pass anything else to a process.
func (rd *fields) expandScalar(v *value, path keyPath) (string, bool) {
	switch v.kind {
	case stringValue:
		out, err := expand(v.text, rd.getenv, rd.baseDir)
		if err != nil {
			rd.expandFailed(path, err)
			return "", false
		}
		return out, true
	case numberValue, boolValue:
		return v.text, true
	}
	rd.errs.add(path, "write a string in quotes", "is %s, not a string", v.kind)
	return "", false
}

// boolean reads an optional boolean key; set is false when absent or null.
func (rd *fields) boolean(v *value, path keyPath, key string) (b, set bool) {
	f := v.field(key)
	if f.isNull() {
		return false, false
	}
	if f.kind != boolValue {
		rd.errs.add(path.key(key), "write true or false, without quotes", "is %s, not true or false", f.kind)
		return false, false
	}
	return f.text == "true", true
}

// resolveCwd expands a leading ~ and anchors a relative directory at the
// config file's directory, which is what the file's author can see.
func (rd *fields) resolveCwd(cwd string) (string, string) {
	if strings.ContainsRune(cwd, 0) {
		return "", "contains a NUL character"
	}
	if cwd == "~" || strings.HasPrefix(cwd, "~/") {
		home, ok := rd.getenv("HOME")
		if !ok || home == "" {
			return "", fmt.Sprintf("%q starts with ~ but HOME is not set", cwd)
		}
		cwd = filepath.Join(home, cwd[1:])
	}
	if !filepath.IsAbs(cwd) && rd.baseDir != "" {
		cwd = filepath.Join(rd.baseDir, cwd)
	}
	return filepath.Clean(cwd), ""
}
