// Package integrate edits the files agent hosts read (Claude Code's
// settings.json and CLAUDE.md, Gemini CLI's GEMINI.md and settings.json,
// Codex's AGENTS.md, a Cursor rule) so that they point at a skillfs mount,
// and takes skillfs's part out of them again.
//
// Those files are the user's. The rules this package keeps:
//
//   - It changes only skillfs's part: a marked block of a Markdown file, a
//     SessionStart hook object whose command is skillfs's, an entry of a
//     JSON list of strings that skillfs added (its record names them), or
//     a JSON object member skillfs wrote (an MCP server entry such as
//     mcpServers.skillfs), or a whole file skillfs created and marked (a
//     Cursor rule). Everything
//     else keeps its value and order.
//   - Apply with no parts takes skillfs's part out. It puts back the
//     file's bytes from before skillfs first wrote it only when the file
//     is exactly as skillfs last left it and nothing but skillfs wrote it
//     since that first write (the record says so); otherwise it takes out
//     only skillfs's part.
//   - A write is durable (the new file and its directory are synced) and
//     refused when the file changed since it was read: Apply reads it
//     again, up to three times, then fails saying so. A file it cannot
//     parse is left alone with an error.
//   - The records of what it wrote live in a directory of the user's
//     alone (see Records), read and written without following links.
package integrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A Kind says how skillfs's part sits in a file.
type Kind int

const (
	// Markdown: a block between marker lines.
	Markdown Kind = iota
	// JSON: hook objects and list entries in a JSON object.
	JSON
	// Whole: the whole file is skillfs's, marked by its marker line.
	Whole
	// TOML: a block between marker comments (Codex's config.toml). The
	// block's tables must not be in the file outside it.
	TOML
)

// A Part is one thing skillfs keeps in a file.
type Part struct {
	// Block is the body of the marked block (Markdown), or the whole
	// file's text (Whole; it must hold Mark(host)).
	Block string
	// Hook is the command of a SessionStart hook (JSON).
	Hook string
	// List is the key path of a JSON list of strings, Value the entry
	// skillfs puts in it (JSON).
	List  []string
	Value string
	// Member is the key path of a JSON object member, JSON the value
	// skillfs gives it (JSON): an MCP server's entry, mcpServers.skillfs.
	// A member of that name that skillfs did not write is the user's and
	// is never overwritten; one skillfs wrote and someone changed since is
	// left alone by a removal.
	Member []string
	JSON   json.RawMessage
}

// A File is one host file and what skillfs wants in it.
type File struct {
	Host string // names the host in the marker line
	Path string // absolute
	Kind Kind
	// Parts is all of skillfs's part of the file: whatever skillfs wrote
	// there before that is not among them is taken out. No parts: take
	// skillfs's part out.
	Parts []Part
}

// A Result says what Apply did.
type Result struct {
	Changed bool
	Message string // a sentence, without "skillfs: "
}

// ErrChanged is returned when the file kept changing while Apply read it
// and wrote it.
var ErrChanged = errors.New("changed while skillfs was writing it")

// attempts is how many times Apply reads the file again when it changed
// between the read and the replace.
const attempts = 3

// Apply brings skillfs's part of f to f.Parts, with the records in recs.
func Apply(recs *Records, f File) (Result, error) {
	for i := 0; ; i++ {
		r, err := apply(recs, f)
		if !errors.Is(err, errChangedOnce) {
			return r, err
		}
		if i == attempts-1 {
			return Result{}, fmt.Errorf("integrate: %s %w %d times in a row: nothing was written; run the command again when the host is not writing it", f.Path, ErrChanged, attempts)
		}
	}
}

// apply is one attempt of Apply; errChangedOnce when the file changed
// between its read and its replace.
func apply(recs *Records, f File) (Result, error) {
	cur, mode, existed, err := read(f.Path)
	if err != nil {
		return Result{}, err
	}
	rec, err := recs.load(f.Path)
	if err != nil {
		return Result{}, err
	}
	if len(f.Parts) == 0 && rec != nil && rec.Restorable && existed && digest(cur) == rec.After {
		// As skillfs left it, and only skillfs wrote it since the first
		// write: the bytes from before are the file without skillfs.
		return restore(recs, f.Path, cur, rec)
	}
	if !existed && len(f.Parts) == 0 {
		if rec != nil {
			if err := recs.drop(f.Path); err != nil {
				return Result{}, err
			}
		}
		return Result{false, fmt.Sprintf("%s does not exist; nothing to remove", f.Path)}, nil
	}
	if f.Kind == Whole && len(f.Parts) == 0 && (rec == nil || digest(cur) != rec.After) {
		if !bytes.Contains(cur, []byte(Mark(f.Host))) {
			return Result{false, fmt.Sprintf("%s is not skillfs's; nothing changed", f.Path)}, nil
		}
		return Result{}, fmt.Errorf("integrate: %s changed since skillfs wrote it: left alone (remove it yourself if you no longer want it)", f.Path)
	}
	added := map[string][]string{}
	if rec != nil {
		added = rec.Added
	}
	next, nextAdded, err := edit(f, cur, existed, added)
	if err != nil {
		return Result{}, err
	}
	hasOurs := len(f.Parts) > 0
	if existed && bytes.Equal(next, cur) {
		if !hasOurs {
			if rec != nil {
				if err := recs.drop(f.Path); err != nil {
					return Result{}, err
				}
			}
			return Result{false, fmt.Sprintf("%s has nothing of skillfs's; nothing changed", f.Path)}, nil
		}
		return Result{false, fmt.Sprintf("%s is already set up; nothing changed", f.Path)}, nil
	}
	if !hasOurs {
		return takeOut(recs, f, cur, mode, existed, rec, next)
	}
	return writeParts(recs, f.Path, cur, mode, existed, rec, next, nextAdded)
}

// restore puts back the bytes of path from before skillfs first wrote it
// (removing it when skillfs created it) and drops its record.
func restore(recs *Records, path string, cur []byte, rec *record) (Result, error) {
	if !rec.Existed {
		if err := replace(path, cur, true, nil, true, 0); err != nil {
			return Result{}, err
		}
		return Result{true, fmt.Sprintf("removed %s, which skillfs had created", path)}, recs.drop(path)
	}
	if err := replace(path, cur, true, rec.Before, false, fs.FileMode(rec.Mode)); err != nil {
		return Result{}, err
	}
	return Result{true, fmt.Sprintf("restored %s as it was before skillfs first wrote it", path)}, recs.drop(path)
}

// takeOut puts next, f without skillfs's part, in place of cur (removing
// the file when skillfs created it and nothing else is left) and drops
// its record.
func takeOut(recs *Records, f File, cur []byte, mode fs.FileMode, existed bool, rec *record, next []byte) (Result, error) {
	// Nothing of skillfs's is left and skillfs created the file: it goes.
	remove := f.Kind == Whole || rec != nil && !rec.Existed && empty(f.Kind, next)
	if err := replace(f.Path, cur, existed, next, remove, mode); err != nil {
		return Result{}, err
	}
	if rec != nil {
		if err := recs.drop(f.Path); err != nil {
			return Result{}, err
		}
	}
	if remove {
		return Result{true, fmt.Sprintf("removed %s, which skillfs had created", f.Path)}, nil
	}
	return Result{true, fmt.Sprintf("took skillfs's part out of %s and kept the rest as it is", f.Path)}, nil
}

// writeParts puts next, which holds skillfs's parts, in place of cur at
// path, saving the record of the write first (old is the one before).
func writeParts(recs *Records, path string, cur []byte, mode fs.FileMode, existed bool, old *record, next []byte, nextAdded map[string][]string) (Result, error) {
	var rec *record
	if old == nil {
		rec = &record{Version: recordVersion, Target: path, Existed: existed, Before: cur, Mode: uint32(mode), Restorable: true}
		if rec.Before == nil {
			rec.Before = []byte{}
		}
	} else {
		copied := *old
		rec = &copied
		// Changed by someone else since skillfs last wrote it: the bytes
		// from before no longer are the file without skillfs.
		if !existed || digest(cur) != rec.After {
			rec.Restorable = false
		}
	}
	rec.After, rec.Added = digest(next), nextAdded
	// The record first: a crash between the two leaves a record of a
	// write that did not happen, and the file is then not as recorded,
	// so a removal takes out only skillfs's part.
	if err := recs.save(rec); err != nil {
		return Result{}, err
	}
	if err := replace(path, cur, existed, next, false, mode); err != nil {
		// Put the record back as it was, so that a retry sees the file
		// as skillfs last left it.
		if old != nil {
			recs.save(old)
		} else {
			recs.drop(path)
		}
		return Result{}, err
	}
	return Result{true, fmt.Sprintf("added to %s", path)}, nil
}

// empty reports whether a file holds nothing once skillfs's part is out.
func empty(k Kind, b []byte) bool {
	s := strings.TrimSpace(string(b))
	return s == "" || (k == JSON && s == "{}")
}

// edit is cur with skillfs's part made f.Parts, and the list entries
// skillfs has added after it.
func edit(f File, cur []byte, existed bool, added map[string][]string) ([]byte, map[string][]string, error) {
	switch f.Kind {
	case Markdown:
		var body string
		for _, p := range f.Parts {
			body = p.Block
		}
		return withBlock(cur, f.Host, body, len(f.Parts) > 0), nil, nil
	case TOML:
		var body string
		for _, p := range f.Parts {
			body = p.Block
		}
		next := tomlMarks.withBlock(cur, f.Host, "", false)
		for _, line := range strings.Split(body, "\n") {
			if h := strings.TrimSpace(line); strings.HasPrefix(h, "[") && tableIn(next, h) {
				return nil, nil, fmt.Errorf("integrate: %s already has %s, not skillfs's: left alone (remove it, then run this again)", f.Path, h)
			}
		}
		return tomlMarks.withBlock(cur, f.Host, body, len(f.Parts) > 0), nil, nil
	case Whole:
		if existed && !bytes.Contains(cur, []byte(Mark(f.Host))) {
			return nil, nil, fmt.Errorf("integrate: %s exists and is not skillfs's: left alone", f.Path)
		}
		if len(f.Parts) == 0 {
			return nil, nil, nil
		}
		return []byte(f.Parts[0].Block), nil, nil
	}
	return editJSON(f, cur, existed, added)
}

// tableIn reports whether the TOML text b has the table header h on a
// line of its own (spaces aside).
func tableIn(b []byte, h string) bool {
	want := strings.ReplaceAll(h, " ", "")
	for _, line := range strings.Split(string(b), "\n") {
		if strings.ReplaceAll(strings.TrimSpace(line), " ", "") == want {
			return true
		}
	}
	return false
}

// read returns the bytes and mode of path (through a symlink), and
// whether it exists.
func read(path string) ([]byte, fs.FileMode, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o644, false, nil
	}
	if err != nil {
		return nil, 0, false, fmt.Errorf("integrate: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0, false, fmt.Errorf("integrate: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, false, fmt.Errorf("integrate: %s is not a regular file: left alone", path)
	}
	return b, fi.Mode().Perm(), true, nil
}

// CheckTarget refuses a target inside a folder named skills or commands
// (a host loads those as skills or commands), and one that is a symlink
// resolving outside home unless force.
func CheckTarget(target, home string, force bool) error {
	for _, p := range strings.Split(filepath.ToSlash(filepath.Dir(target)), "/") {
		if p == "skills" || p == "commands" {
			return fmt.Errorf("integrate: %s is inside a %s folder, which the host loads as %s: skillfs does not write there", target, p, p)
		}
	}
	fi, err := os.Lstat(target)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	real, err := filepath.EvalSymlinks(target)
	if err != nil {
		return fmt.Errorf("integrate: %s is a symlink that does not resolve: %w", target, err)
	}
	realHome, err := filepath.EvalSymlinks(home)
	if err != nil {
		realHome = home
	}
	if rel, err := filepath.Rel(realHome, real); (err != nil || rel == ".." || strings.HasPrefix(rel, "../")) && !force {
		return fmt.Errorf("integrate: %s is a symlink to %s, outside your home directory: refused (--force writes there)", target, real)
	}
	return nil
}

// Preview is what f's parts are in a file that holds nothing else.
func Preview(f File) ([]byte, error) {
	b, _, err := edit(f, nil, false, nil)
	return b, err
}
