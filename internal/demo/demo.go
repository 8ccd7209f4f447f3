// Package demo holds the example skills that `skillfs mount --demo` serves
// from an in-process SEP-2640 server, so that a fresh machine can see a
// mount without configuring anything.
//
// The tree has a skill with a prefix path (acme/billing/refunds), a skill
// nested inside it that asks for allowed-tools, a binary asset, and scripts
// that are executable in the source folder — the mount shows them 0444.
package demo

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

//go:embed skills
var skills embed.FS

// Materialize writes the demo skills under dir, marking the files under a
// scripts/ directory executable as an author's checkout would have them.
func Materialize(dir string) error {
	root, err := fs.Sub(skills, "skills")
	if err != nil {
		return err
	}
	return fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.Contains("/"+p, "/scripts/") {
			mode = 0o755
		}
		if err := os.WriteFile(dst, b, mode); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		return os.Chmod(dst, mode)
	})
}

// Files lists the demo's files, slash-separated and relative to its root.
func Files() []string {
	var out []string
	fs.WalkDir(skills, "skills", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, strings.TrimPrefix(p, "skills/"))
		}
		return nil
	})
	return out
}
