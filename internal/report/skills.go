package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/verify"
)

type Inspected struct {
	control.Inspection
	SkillMD *string `json:"skill_md,omitempty"`
	// exact: SkillMD is the file's bytes as they are, not made visible
	// (stdout is not a terminal).
	Exact bool `json:"-"`
}

func Inspection(w io.Writer, in Inspected) error {
	s := in.Skill
	tw := NewTable(w)
	fmt.Fprintf(tw, "skill\t%s\n", Cell(s.Path, 0))
	fmt.Fprintf(tw, "origin\t%s\n", s.Origin)
	fmt.Fprintf(tw, "uri\t%s\n", Cell(s.URI, 0))
	fmt.Fprintf(tw, "name\t%s\n", Cell(s.Name, 0))
	fmt.Fprintf(tw, "description\t%s\n", Cell(s.Description, 200))
	state := string(s.State)
	if s.Reason != "" {
		state += " (" + s.Reason + ")"
	}
	fmt.Fprintf(tw, "state\t%s\n", Cell(state, 0))
	if s.Detail != "" {
		fmt.Fprintf(tw, "detail\t%s\n", Cell(s.Detail, 200))
	}
	fmt.Fprintf(tw, "approval\t%s\n", ApprovalLine(in.Approval))
	if in.Binding != "" {
		// What `skillfs approve --binding` names to approve exactly this.
		fmt.Fprintf(tw, "binding\t%s\n", Cell(in.Binding, 0))
	}
	tw.Flush()
	if a := in.Approval; a != nil && a.Bound != nil {
		fmt.Fprintf(w, "bound to  origin %s (fingerprint %s), %s, %d files:\n", Cell(a.Bound.Origin, 0), Cell(a.Bound.Fingerprint, 0), Cell(a.Bound.URI, 0), len(a.Bound.Resources))
		for _, r := range a.Bound.Resources {
			fmt.Fprintf(w, "  %s %s\n", Cell(string(r.Digest), 0), Cell(r.URI, 0))
		}
	}
	if len(s.Flags) > 0 {
		fmt.Fprintln(w, "\nflags:")
		for _, f := range s.Flags {
			reason := FlagReasons[f]
			if reason == "" {
				reason = "see index.json"
			}
			fmt.Fprintf(w, "  %s: %s\n", Cell(f, 0), reason)
		}
	}
	fmt.Fprintln(w)
	tw = NewTable(w)
	fmt.Fprintln(tw, "FILE\tSIZE\tDIGEST\tVERIFIED\tCACHED")
	for _, f := range in.Files {
		// Files are named within the skill; --json keeps mount-relative paths.
		name := strings.TrimPrefix(f.Path, in.Skill.Path+"/")
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", Cell(name, 0), f.Size, Cell(f.Digest, 0), YesNo(f.Verified), YesNo(f.Cached))
	}
	tw.Flush()
	if len(in.Entry) > 0 && string(in.Entry) != "null" {
		var pretty strings.Builder
		var v any
		if json.Unmarshal(in.Entry, &v) == nil {
			b, _ := json.MarshalIndent(v, "", "  ")
			pretty.Write(b)
		} else {
			pretty.Write(in.Entry)
		}
		fmt.Fprintf(w, "\nentry (as the server sent it):\n%s\n", control.Visible([]byte(pretty.String())))
	}
	if in.SkillMD != nil {
		note := "verified; <U+XXXX> is an invisible or control character"
		if in.Exact {
			note = "verified; its exact bytes"
		}
		fmt.Fprintf(w, "\n----- SKILL.md (%s) -----\n%s", note, *in.SkillMD)
		if !strings.HasSuffix(*in.SkillMD, "\n") {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, "----- end of SKILL.md -----")
		if in.Binding != "" && in.Approval != nil && in.Approval.Required {
			fmt.Fprintf(w, "To approve exactly what this shows: skillfs approve --binding %s %s\n", Cell(in.Binding, 0), Cell(in.Skill.Path, 0))
		}
	}
	return nil
}

func ApprovalLine(a *control.ApprovalState) string {
	switch {
	case a == nil:
		return "-"
	case !a.Required:
		return "not required"
	case !a.At.IsZero():
		return fmt.Sprintf("%s (approved %s)", a.State, a.At.Local().Format(time.RFC3339))
	}
	return a.State
}

// FlagReasons say what each content flag means to the person approving.
var FlagReasons = map[string]string{
	string(verify.FlagTagChars):         "invisible Unicode tag characters, known to hide instructions",
	string(verify.FlagBidi):             "bidi controls: the text displays in another order than a model reads it",
	string(verify.FlagZeroWidth):        "zero-width characters",
	string(verify.FlagHTMLComment):      "an HTML comment: hidden when rendered, read by the model",
	string(verify.FlagAllowedTools):     "asks for allowed-tools (ignored: the mount grants nothing)",
	string(verify.FlagHooks):            "asks for hooks (ignored: the mount runs nothing)",
	string(verify.FlagPermissions):      "a frontmatter field some hosts read as a grant of tools or permissions",
	string(verify.FlagCommandExpansion): "a !`cmd` expansion some hosts run before the model sees the text",
	"nested-skill":                      "inside another skill's directory: that skill's files include it",
}

func Pending(w io.Writer, ps []control.Pending) error {
	tw := NewTable(w)
	fmt.Fprintln(tw, "PATH\tKIND\tFLAGS\tCHANGE")
	entry := 0
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", Cell(p.Skill.Path, 0), WhyKind(p), List(p.Skill.Flags), ChangeLine(p.Changed))
		if p.Why == control.WhyServerEntry {
			entry++
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if entry > 0 {
		fmt.Fprintf(w, "server entry changed (%d): %s\n", entry, ServerEntryChanged)
	}
	return nil
}

func pendingKind(p control.Pending) string {
	if p.Changed == nil {
		return "new"
	}
	return "changed"
}

// ChangeLine: +added -removed ~changed, and the frontmatter fields.
func ChangeLine(c *control.ApprovalChange) string {
	if c == nil {
		return "-"
	}
	var parts []string
	for _, f := range c.Added {
		parts = append(parts, "+"+Cell(f, 0))
	}
	for _, f := range c.Removed {
		parts = append(parts, "-"+Cell(f, 0))
	}
	for _, f := range c.Changed {
		parts = append(parts, "~"+Cell(f, 0))
	}
	if len(c.Frontmatter) > 0 {
		parts = append(parts, "frontmatter: "+List(c.Frontmatter))
	}
	return strings.Join(parts, " ")
}

// WhyLine says why a pending skill waits, for a person.
func WhyLine(p control.Pending) string {
	switch p.Why {
	case control.WhyNew:
		return "new skill: never approved"
	case control.WhyContent:
		return "content changed since approved: " + ChangeLine(p.Changed)
	case control.WhyFrontmatter:
		return "frontmatter changed since approved: " + ChangeLine(p.Changed)
	case control.WhyServerEntry:
		return ServerEntryChanged
	}
	if p.Changed != nil {
		return "changed since approved: " + ChangeLine(p.Changed)
	}
	return "new skill: never approved"
}

const ServerEntryChanged = "the server's entry changed (args/env/headers), so earlier approvals do not carry over"

// WhyKind is the KIND cell of the pending table.
func WhyKind(p control.Pending) string {
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
