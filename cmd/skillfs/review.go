package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/report"
	"github.com/skillfs/skillfs/internal/term"
)

// maxReviews is the most skills approve shows in full (server, flags,
// diffs) before it asks; past it, the others are shown as rows of the
// pending table (approve them by path to see each in full).
const maxReviews = 50

// reviews fetches and writes the full view of the chosen skills (at most
// maxReviews; the rest as table rows), and sets each ref's binding to the
// entry reviewed: what is approved is what this shows.
func reviews(ctx context.Context, c *control.Client, w io.Writer, chosen []control.Pending, refs []control.SkillRef) error {
	byKey := map[string]int{}
	for i, r := range refs {
		byKey[r.Origin+" "+r.URI] = i
	}
	var rest []control.Pending
	for n, p := range chosen {
		if n >= maxReviews {
			rest = append(rest, p)
			continue
		}
		rv, err := c.Review(ctx, control.SkillRef{Origin: p.Skill.Origin, URI: p.Skill.URI})
		if err != nil {
			return remote(err)
		}
		if i, ok := byKey[p.Skill.Origin+" "+p.Skill.URI]; ok {
			refs[i].Binding = rv.Binding
		}
		report.Review(w, rv)
	}
	if len(rest) > 0 {
		fmt.Fprintf(w, "and %d more, not shown in full (approve them by path to see each):\n", len(rest))
		if err := report.Pending(w, rest); err != nil {
			return err
		}
		for _, p := range rest {
			fmt.Fprintf(w, "  %s binding %s\n", report.Cell(p.Skill.Path, 0), p.Binding)
		}
	}
	return nil
}

// page shows text through a pager when out is a terminal, as git does:
// $PAGER (none when it is empty or "cat"), else less (with LESS=FRX
// unless LESS is set: it quits when the text fits the screen) when it is
// on PATH, else the text as it is.
func page(out io.Writer, text string) error {
	f, ok := out.(*os.File)
	if !ok || !term.IsTerminal(f) {
		_, err := io.WriteString(out, text)
		return err
	}
	pager, set := os.LookupEnv("PAGER")
	env := os.Environ()
	if !set {
		if _, err := exec.LookPath("less"); err == nil {
			pager = "less"
			if _, ok := os.LookupEnv("LESS"); !ok {
				env = append(env, "LESS=FRX")
			}
		}
	}
	if pager == "" || pager == "cat" {
		_, err := io.WriteString(out, text)
		return err
	}
	cmd := exec.Command("/bin/sh", "-c", pager)
	cmd.Stdin = strings.NewReader(text)
	cmd.Stdout, cmd.Stderr, cmd.Env = f, os.Stderr, env
	if err := cmd.Run(); err != nil {
		// The pager failed (not found, say): show the text plainly.
		fmt.Fprintf(os.Stderr, "skillfs: pager %q: %v\n", pager, err)
		_, err := io.WriteString(out, text)
		return err
	}
	return nil
}
