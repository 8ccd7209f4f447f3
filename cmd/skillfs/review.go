package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/term"
)

// maxReviews is the most skills approve shows in full (server, flags,
// diffs) before it asks; past it, the others are shown as rows of the
// pending table (approve them by path to see each in full).
const maxReviews = 50

// whyLine says why a pending skill waits, for a person.
func whyLine(p control.Pending) string {
	switch p.Why {
	case control.WhyNew:
		return "new skill: never approved"
	case control.WhyContent:
		return "content changed since approved: " + changeLine(p.Changed)
	case control.WhyFrontmatter:
		return "frontmatter changed since approved: " + changeLine(p.Changed)
	case control.WhyServerEntry:
		return serverEntryChanged
	}
	if p.Changed != nil {
		return "changed since approved: " + changeLine(p.Changed)
	}
	return "new skill: never approved"
}

const serverEntryChanged = "the server's entry changed (args/env/headers), so earlier approvals do not carry over"

// whyKind is the KIND cell of the pending table.
func whyKind(p control.Pending) string {
	switch p.Why {
	case control.WhyContent:
		return "content changed"
	case control.WhyFrontmatter:
		return "frontmatter changed"
	case control.WhyServerEntry:
		return "server entry changed"
	case control.WhyNew:
		return "new"
	}
	return pendingKind(p)
}

// serverLine is a server as config check shows it: the command line (or
// masked URL) and the names of the env variables (or headers) it sets,
// their values ***.
func serverLine(d control.ServerDesc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s", cell(d.Label, 0), cell(d.Transport, 0))
	if len(d.Command) > 0 {
		fmt.Fprintf(&b, ": %s", cell(shellJoin(d.Command), 0))
		for _, k := range d.Env {
			fmt.Fprintf(&b, "; env %s=***", cell(k, 0))
		}
	} else {
		fmt.Fprintf(&b, ": %s", cell(d.URL, 0))
		for _, k := range d.Headers {
			fmt.Fprintf(&b, "; header %s: ***", cell(k, 0))
		}
	}
	b.WriteString(")")
	return b.String()
}

// printReview writes what approve shows of one skill before it asks.
func printReview(w io.Writer, rv control.Review) {
	s := rv.Skill
	fmt.Fprintf(w, "=== %s\n", cell(s.Path, 0))
	fmt.Fprintf(w, "  server       %s\n", serverLine(rv.Server))
	fmt.Fprintf(w, "  uri          %s\n", cell(s.URI, 0))
	fmt.Fprintf(w, "  name         %s\n", cell(s.Name, 0))
	fmt.Fprintf(w, "  description  %s\n", cell(s.Description, 0))
	fmt.Fprintf(w, "  why          %s\n", whyLine(control.Pending{Why: rv.Why, Changed: rv.Changed}))
	if len(s.Flags) == 0 {
		fmt.Fprintln(w, "  flags        none")
	}
	for i, f := range s.Flags {
		label := "  flags        "
		if i > 0 {
			label = "               "
		}
		reason := flagReasons[f]
		if reason == "" {
			reason = "see index.json"
		}
		fmt.Fprintf(w, "%s%s: %s\n", label, cell(f, 0), reason)
	}
	// The line approve has always printed, "  PATH binding DIGEST": scripts
	// and tests read it.
	fmt.Fprintf(w, "  %s binding %s\n", cell(s.Path, 0), cell(rv.Binding, 0))
	if rv.Listing != nil {
		printNewSkill(w, rv)
	}
	for _, f := range rv.Files {
		if f.Diff != "" {
			if f.Note != "" {
				// Why this diff is not against the approved version.
				fmt.Fprintf(w, "\n%s %s: %s", f.Change, cell(f.Path, 0), cell(f.Note, 0))
			}
			fmt.Fprintf(w, "\n%s", control.Inert(f.Diff))
			if !strings.HasSuffix(f.Diff, "\n") {
				fmt.Fprintln(w)
			}
			continue
		}
		fmt.Fprintf(w, "\n%s %s: %s\n", f.Change, cell(f.Path, 0), cell(f.Note, 0))
	}
	fmt.Fprintln(w)
}

// fileFlagReasons say what each flag of a new skill's file list means.
var fileFlagReasons = map[string]string{
	control.FlagScript:      "a file an agent may be told to run",
	control.FlagNestedSkill: "another skill's SKILL.md: approving this skill does not approve it",
	control.FlagNotKept:     "past what an approval keeps: a later change to it shows by size and digest",
}

// printNewSkill writes what approve shows of a skill never approved: its
// file list (size, flags) and its SKILL.md, verified and made visible
// (every control or invisible character as <U+XXXX>), as far as the
// review carries it.
func printNewSkill(w io.Writer, rv control.Review) {
	s := rv.Skill
	fmt.Fprintf(w, "\n  files (%d):\n", len(rv.Listing))
	tw := newTable(w)
	seen := map[string]bool{}
	for _, f := range rv.Listing {
		size := "size not declared"
		if f.HasSize {
			size = fmt.Sprintf("%d bytes", f.Size)
		}
		fmt.Fprintf(tw, "    %s\t%s\t%s\n", cell(strings.TrimPrefix(f.Path, s.Path+"/"), 0), size, list(f.Flags))
		for _, fl := range f.Flags {
			seen[fl] = true
		}
	}
	tw.Flush()
	for _, fl := range []string{control.FlagScript, control.FlagNestedSkill, control.FlagNotKept} {
		if seen[fl] {
			fmt.Fprintf(w, "    %s: %s\n", fl, fileFlagReasons[fl])
		}
	}
	if rv.SkillMD == nil {
		fmt.Fprintf(w, "\n  SKILL.md not shown: %s; read it with `skillfs inspect --show %s`\n", cell(rv.SkillMDNote, 0), cell(s.Path, 0))
		return
	}
	fmt.Fprintf(w, "\n----- %s/SKILL.md (verified; <U+XXXX> is an invisible or control character) -----\n", cell(s.Path, 0))
	md := control.Visible(rv.SkillMD)
	fmt.Fprint(w, md)
	if !strings.HasSuffix(md, "\n") {
		fmt.Fprintln(w)
	}
	if rv.SkillMDNote != "" {
		fmt.Fprintf(w, "----- cut here: shown %s; the approval covers all of it: read it whole with `skillfs inspect --show %s` -----\n", cell(rv.SkillMDNote, 0), cell(s.Path, 0))
		return
	}
	fmt.Fprintln(w, "----- end of SKILL.md -----")
}

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
		printReview(w, rv)
	}
	if len(rest) > 0 {
		fmt.Fprintf(w, "and %d more, not shown in full (approve them by path to see each):\n", len(rest))
		if err := printPending(w, rest); err != nil {
			return err
		}
		for _, p := range rest {
			fmt.Fprintf(w, "  %s binding %s\n", cell(p.Skill.Path, 0), p.Binding)
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

// printPendingWhy writes, under status's table, why each server's pending
// skills wait.
func printPendingWhy(w io.Writer, servers []control.ServerStatus) error {
	order := []struct{ why, text string }{
		{control.WhyNew, "new"},
		{control.WhyContent, "content changed"},
		{control.WhyFrontmatter, "frontmatter changed"},
		{control.WhyServerEntry, "server entry changed"},
	}
	for _, s := range servers {
		if len(s.PendingWhy) == 0 {
			continue
		}
		var parts []string
		for _, o := range order {
			if n := s.PendingWhy[o.why]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, o.text))
			}
		}
		fmt.Fprintf(w, "\npending  %s: %s (see `skillfs pending`)", s.Label, strings.Join(parts, ", "))
		if s.PendingWhy[control.WhyServerEntry] > 0 {
			fmt.Fprintf(w, "; %s", serverEntryChanged)
		}
		fmt.Fprintln(w)
	}
	return nil
}
