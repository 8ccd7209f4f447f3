// Package manpage writes `skillfs man`'s pages: one roff page (section 1)
// per command of a cobra command tree.
//
// The pages are written from the command tree by a small roff writer
// rather than by cobra's doc package: that one passes the help text through
// a Markdown renderer, which drops what looks like HTML — the
// "<label>-<fingerprint>" of `skillfs cache --help` came out as "-" — and
// makes emphasis of '*' and '_'. Here the help text is the page's text,
// escaped for roff and nothing else.
package manpage

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Write writes the page of root and of every command below it that a user
// can run (not hidden, not `help`) into dir, and returns how many; version
// is the pages' footer.
func Write(root *cobra.Command, dir, version string) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	n := 0
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		if c.HasParent() && !manPaged(c) {
			return nil
		}
		// --help and --version are added as a command runs: add them here,
		// so that each page lists them as --help does.
		c.InitDefaultHelpFlag()
		c.InitDefaultVersionFlag()
		path := filepath.Join(dir, manName(c)+".1")
		if err := writeFileAtomic(path, func(w io.Writer) error { return writePage(w, c, version) }); err != nil {
			return fmt.Errorf("write man page %s: %w", path, err)
		}
		n++
		for _, sub := range c.Commands() {
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	return n, walk(root)
}

// manPaged: the commands that get a page, and that pages list.
func manPaged(c *cobra.Command) bool {
	return c.IsAvailableCommand() && c.Name() != "help"
}

// manName is the page's name: "skillfs-cache-list" for `skillfs cache list`.
func manName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "-")
}

// writeFileAtomic writes path by a temporary file renamed over it, mode
// 0644.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// writePage writes c's page: NAME, SYNOPSIS, DESCRIPTION, COMMANDS,
// OPTIONS, OPTIONS INHERITED FROM PARENT COMMANDS, SEE ALSO.
func writePage(w io.Writer, c *cobra.Command, version string) error {
	var b strings.Builder
	name := manName(c)
	fmt.Fprintf(&b, ".\\\" Written by `skillfs man` from the command's help; do not edit.\n")
	fmt.Fprintf(&b, ".TH %s 1 \"\" %s \"skillfs manual\"\n", roffQuoted(strings.ToUpper(name)), roffQuoted("skillfs "+version))
	// Not hyphenated, not justified: a flag or a path breaks only where
	// it has a space, and reads as typed.
	b.WriteString(".nh\n.ad l\n")
	b.WriteString(".SH NAME\n")
	fmt.Fprintf(&b, "%s \\- %s\n", roff(name), roff(c.Short))
	b.WriteString(".SH SYNOPSIS\n")
	fmt.Fprintf(&b, "\\fB%s\\fR", roff(c.CommandPath()))
	if rest := strings.TrimPrefix(c.UseLine(), c.CommandPath()); strings.TrimSpace(rest) != "" {
		b.WriteString(roff(rest))
	}
	b.WriteString("\n")
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, ".br\n\\fB%s\\fR \\fICOMMAND\\fR\n", roff(c.CommandPath()))
	}
	b.WriteString(".SH DESCRIPTION\n")
	long := c.Long
	if long == "" {
		long = c.Short
	}
	writeRoffText(&b, long)
	var subs []*cobra.Command
	for _, s := range c.Commands() {
		if manPaged(s) {
			subs = append(subs, s)
		}
	}
	if len(subs) > 0 {
		b.WriteString(".SH COMMANDS\n")
		for _, s := range subs {
			fmt.Fprintf(&b, ".TP\n\\fB%s\\fR\n%s\n", roff(s.Name()), roffLine(s.Short))
		}
	}
	writeRoffFlags(&b, "OPTIONS", c.NonInheritedFlags())
	writeRoffFlags(&b, "OPTIONS INHERITED FROM PARENT COMMANDS", c.InheritedFlags())
	var see []string
	if c.HasParent() {
		see = append(see, manName(c.Parent()))
	}
	for _, s := range subs {
		see = append(see, manName(s))
	}
	if len(see) > 0 {
		b.WriteString(".SH SEE ALSO\n")
		for i, s := range see {
			sep := ","
			if i == len(see)-1 {
				sep = ""
			}
			fmt.Fprintf(&b, "\\fB%s\\fR(1)%s\n", roff(s), sep)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRoffFlags writes a section listing the flags that are not hidden,
// as --help shows them: name, value, usage and default.
func writeRoffFlags(b *strings.Builder, title string, flags *pflag.FlagSet) {
	first := true
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if first {
			fmt.Fprintf(b, ".SH %s\n", title)
			first = false
		}
		b.WriteString(".TP\n")
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			fmt.Fprintf(b, "\\fB%s\\fR, ", roff("-"+f.Shorthand))
		}
		fmt.Fprintf(b, "\\fB%s\\fR", roff("--"+f.Name))
		varname, usage := pflag.UnquoteUsage(f)
		if varname != "" {
			fmt.Fprintf(b, " \\fI%s\\fR", roff(varname))
		}
		b.WriteString("\n")
		b.WriteString(roffLine(usage))
		if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "[]" && def != "0s" {
			fmt.Fprintf(b, " (default %s)", roff(def))
		}
		b.WriteString("\n")
	})
}

// writeRoffText writes help text as paragraphs: a blank line starts a
// new one; a paragraph with an indented line (a table, an example, JSON)
// keeps its lines as they are, the others are filled.
func writeRoffText(b *strings.Builder, text string) {
	for _, para := range strings.Split(strings.TrimSpace(text), "\n\n") {
		para = strings.Trim(para, "\n")
		if para == "" {
			continue
		}
		lines := strings.Split(para, "\n")
		verbatim := false
		for _, l := range lines {
			if l != "" && (unicode.IsSpace(rune(l[0])) || l[0] == '{' || l[0] == '}') {
				verbatim = true
			}
		}
		b.WriteString(".PP\n")
		if verbatim {
			b.WriteString(".nf\n")
		}
		for _, l := range lines {
			b.WriteString(roffLine(l) + "\n")
		}
		if verbatim {
			b.WriteString(".fi\n")
		}
	}
}

// roff escapes text for a roff line: backslashes, hyphens (so that flags
// render as the ASCII '-' a reader can paste), and every character beyond
// ASCII as \[uXXXX], which groff and mandoc read whatever the locale.
// Control characters cannot be in help text; they are dropped.
func roff(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case r == '\t':
			b.WriteString("        ")
		case r < 0x20 || r == 0x7f:
		case r > 0x7f:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// roffLine is roff for a whole input line: one starting with a '.' or
// an apostrophe would be read as a request.
func roffLine(s string) string {
	s = roff(s)
	if s != "" && (s[0] == '.' || s[0] == '\'') {
		return `\&` + s
	}
	return s
}

// roffQuoted is a macro argument in double quotes.
func roffQuoted(s string) string {
	return `"` + strings.ReplaceAll(roff(s), `"`, `\(dq`) + `"`
}
