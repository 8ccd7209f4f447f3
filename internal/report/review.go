package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/skillfs/skillfs/internal/control"
)

// ServerLine is a server as config check shows it: the command line (or
// masked URL) and the names of the env variables (or headers) it sets,
// their values ***.
func ServerLine(d control.ServerDesc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s", Cell(d.Label, 0), Cell(d.Transport, 0))
	if len(d.Command) > 0 {
		fmt.Fprintf(&b, ": %s", Cell(ShellJoin(d.Command), 0))
		for _, k := range d.Env {
			fmt.Fprintf(&b, "; env %s=***", Cell(k, 0))
		}
	} else {
		fmt.Fprintf(&b, ": %s", Cell(d.URL, 0))
		for _, k := range d.Headers {
			fmt.Fprintf(&b, "; header %s: ***", Cell(k, 0))
		}
	}
	b.WriteString(")")
	return b.String()
}

// Review writes what approve shows of one skill before it asks.
func Review(w io.Writer, rv control.Review) {
	s := rv.Skill
	fmt.Fprintf(w, "=== %s\n", Cell(s.Path, 0))
	fmt.Fprintf(w, "  server       %s\n", ServerLine(rv.Server))
	fmt.Fprintf(w, "  uri          %s\n", Cell(s.URI, 0))
	fmt.Fprintf(w, "  name         %s\n", Cell(s.Name, 0))
	fmt.Fprintf(w, "  description  %s\n", Cell(s.Description, 0))
	fmt.Fprintf(w, "  why          %s\n", WhyLine(control.Pending{Why: rv.Why, Changed: rv.Changed}))
	if len(s.Flags) == 0 {
		fmt.Fprintln(w, "  flags        none")
	}
	for i, f := range s.Flags {
		label := "  flags        "
		if i > 0 {
			label = "               "
		}
		reason := FlagReasons[f]
		if reason == "" {
			reason = "see index.json"
		}
		fmt.Fprintf(w, "%s%s: %s\n", label, Cell(f, 0), reason)
	}
	// The line approve has always printed, "  PATH binding DIGEST": scripts
	// and tests read it.
	fmt.Fprintf(w, "  %s binding %s\n", Cell(s.Path, 0), Cell(rv.Binding, 0))
	if rv.Listing != nil {
		newSkill(w, rv)
	}
	for _, f := range rv.Files {
		if f.Diff != "" {
			if f.Note != "" {
				// Why this diff is not against the approved version.
				fmt.Fprintf(w, "\n%s %s: %s", f.Change, Cell(f.Path, 0), Cell(f.Note, 0))
			}
			fmt.Fprintf(w, "\n%s", control.Inert(f.Diff))
			if !strings.HasSuffix(f.Diff, "\n") {
				fmt.Fprintln(w)
			}
			continue
		}
		fmt.Fprintf(w, "\n%s %s: %s\n", f.Change, Cell(f.Path, 0), Cell(f.Note, 0))
	}
	fmt.Fprintln(w)
}

// fileFlagReasons say what each flag of a new skill's file list means.
var fileFlagReasons = map[string]string{
	control.FlagScript:      "a file an agent may be told to run",
	control.FlagNestedSkill: "another skill's SKILL.md: approving this skill does not approve it",
	control.FlagNotKept:     "past what an approval keeps: a later change to it shows by size and digest",
}

// newSkill writes what approve shows of a skill never approved: its
// file list (size, flags) and its SKILL.md, verified and made visible
// (every control or invisible character as <U+XXXX>), as far as the
// review carries it.
func newSkill(w io.Writer, rv control.Review) {
	s := rv.Skill
	fmt.Fprintf(w, "\n  files (%d):\n", len(rv.Listing))
	tw := NewTable(w)
	seen := map[string]bool{}
	for _, f := range rv.Listing {
		size := "size not declared"
		if f.HasSize {
			size = fmt.Sprintf("%d bytes", f.Size)
		}
		fmt.Fprintf(tw, "    %s\t%s\t%s\n", Cell(strings.TrimPrefix(f.Path, s.Path+"/"), 0), size, List(f.Flags))
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
		fmt.Fprintf(w, "\n  SKILL.md not shown: %s; read it with `skillfs inspect --show %s`\n", Cell(rv.SkillMDNote, 0), Cell(s.Path, 0))
		return
	}
	fmt.Fprintf(w, "\n----- %s/SKILL.md (verified; <U+XXXX> is an invisible or control character) -----\n", Cell(s.Path, 0))
	md := control.Visible(rv.SkillMD)
	fmt.Fprint(w, md)
	if !strings.HasSuffix(md, "\n") {
		fmt.Fprintln(w)
	}
	if rv.SkillMDNote != "" {
		fmt.Fprintf(w, "----- cut here: shown %s; the approval covers all of it: read it whole with `skillfs inspect --show %s` -----\n", Cell(rv.SkillMDNote, 0), Cell(s.Path, 0))
		return
	}
	fmt.Fprintln(w, "----- end of SKILL.md -----")
}
