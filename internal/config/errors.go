package config

import (
	"fmt"
	"sort"
	"strings"
)

// An Error is one thing wrong with a config file. Its message reads
// "<file>: <key>: <problem>; <fix>", so a user can go straight to the key
// and knows what to change.
type Error struct {
	File    string // the file as given; "(built-in config)" for the demo
	Key     string // key path such as mcpServers.acme.url; "" for the whole file
	Problem string
	Fix     string
	Err     error // the underlying error, if any (fs.ErrNotExist for a missing file)
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Problem)
	if e.Fix != "" {
		b.WriteString("; ")
		b.WriteString(e.Fix)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// displayName is how errors name the file.
func displayName(path string) string {
	if path == "" {
		return "(built-in config)"
	}
	return path
}

// keyPath builds key paths. Segments made only of letters, digits, '_'
// and '-' are joined with dots; any other segment (a label with a dot, an
// env name with a space) is quoted in brackets so the path stays readable
// and unambiguous.
type keyPath string

func (p keyPath) key(k string) keyPath {
	if k != "" && strings.IndexFunc(k, func(r rune) bool {
		return !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		if p == "" {
			return keyPath(k)
		}
		return p + "." + keyPath(k)
	}
	return p + keyPath(fmt.Sprintf("[%q]", k))
}

func (p keyPath) index(i int) keyPath { return p + keyPath(fmt.Sprintf("[%d]", i)) }

// errorList collects errors so a user sees every problem of a file at once,
// not one per run.
type errorList struct {
	file string
	errs []*Error
}

// maxErrors keeps the report readable when a file is wrong everywhere.
const maxErrors = 20

func (l *errorList) add(key keyPath, fix, format string, args ...any) {
	l.errs = append(l.errs, &Error{File: l.file, Key: string(key), Problem: fmt.Sprintf(format, args...), Fix: fix})
}

func (l *errorList) err() error {
	switch len(l.errs) {
	case 0:
		return nil
	case 1:
		return l.errs[0]
	}
	errs := l.errs
	more := 0
	if len(errs) > maxErrors {
		more = len(errs) - maxErrors
		errs = errs[:maxErrors]
	}
	return &Errors{List: errs, More: more}
}

// Errors is more than one Error in one file, in the order of the file.
type Errors struct {
	List []*Error
	More int // errors left out of List
}

func (e *Errors) Error() string {
	var b strings.Builder
	for i, x := range e.List {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(x.Error())
	}
	if e.More > 0 {
		fmt.Fprintf(&b, "\n(and %d more)", e.More)
	}
	return b.String()
}

// Unwrap lets errors.As find the first *Error.
func (e *Errors) Unwrap() []error {
	out := make([]error, len(e.List))
	for i, x := range e.List {
		out[i] = x
	}
	return out
}

// suggest returns the known key closest to an unknown one, or "". Case,
// '-' and '_' are ignored first (maxFileSize, max-file-size), then a small
// edit distance is allowed (max_file_szie).
func suggest(unknown string, known []string) string {
	norm := func(s string) string {
		return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s))
	}
	u := norm(unknown)
	if len(u) > 64 {
		return ""
	}
	best, bestD := "", 0
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	for _, k := range sorted {
		d := editDistance(u, norm(k))
		if d == 0 {
			return k
		}
		if best == "" || d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" && bestD <= max(2, len(u)/4) {
		return best
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
