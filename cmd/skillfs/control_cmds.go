package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/exitcode"
	"github.com/skillfs/skillfs/internal/mountd"
	"github.com/skillfs/skillfs/internal/report"
	"github.com/skillfs/skillfs/internal/term"
)

// controlOptions are the flags every command that talks to a running
// mount shares.
type controlOptions struct {
	mount    string
	json     bool
	cacheDir string
	origin   string // --origin LABEL: arguments are URIs of that server
	out      io.Writer
}

func (o *controlOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.mount, "mount", "", "the mount to ask (`DIR`); needed when more than one is running, found by its path whatever its environment")
	f.BoolVar(&o.json, "json", false, "print JSON instead of a table")
	f.StringVar(&o.cacheDir, "cache-dir", "", "the mount's --cache-dir, where its socket is when $XDG_RUNTIME_DIR is not set")
}

// client finds the mount to ask.
func (o *controlOptions) client() (*control.Client, error) {
	root, err := mountd.CacheRoot(o.cacheDir)
	if err != nil {
		root = "" // no HOME: only $XDG_RUNTIME_DIR can hold a socket
	}
	return control.Find(control.Dirs(root), o.mount)
}

// refs turns command-line arguments into skill references: URIs of
// --origin, or mount-relative paths (an absolute path inside the mount, or
// a path to the skill's SKILL.md, names the skill too).
func (o *controlOptions) refs(c *control.Client, args []string) ([]control.SkillRef, error) {
	var out []control.SkillRef
	for _, a := range args {
		if o.origin != "" {
			out = append(out, control.SkillRef{Origin: o.origin, URI: a})
			continue
		}
		if strings.Contains(a, "://") {
			return nil, usageError(fmt.Errorf("%q is a URI: name its server with --origin LABEL, or give the skill's path (acme/billing/refunds)", a))
		}
		p := a
		if filepath.IsAbs(p) {
			rel, err := filepath.Rel(c.Mountpoint, p)
			if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				return nil, usageError(fmt.Errorf("%s is not inside the mount %s", p, c.Mountpoint))
			}
			p = rel
		}
		p = strings.TrimSuffix(strings.Trim(filepath.ToSlash(filepath.Clean(p)), "/"), "/SKILL.md")
		out = append(out, control.SkillRef{Path: p})
	}
	return out, nil
}

// truncated warns, on stderr, of an answer the mount cut at its cap, and
// lets the command print what it got; other errors pass through.
func truncated(err error) error {
	var te *control.TruncatedError
	if errors.As(err, &te) {
		fmt.Fprintf(os.Stderr, "skillfs: warning: %v\n", te)
		return nil
	}
	return err
}

// remote gives a mount's answer the exit code it deserves: a request the
// mount calls invalid is a usage error.
func remote(err error) error {
	if errors.Is(err, control.ErrInvalid) {
		return usageError(err)
	}
	return err
}

func (o *controlOptions) printJSON(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(o.out, "%s\n", b)
	return err
}

func newControlCommands() []*cobra.Command {
	return []*cobra.Command{
		newStatusCommand(), newListCommand(), newInspectCommand(), newPendingCommand(),
		newApproveCommand(), newRevokeCommand(), newGetCommand(), newReloadCommand(),
	}
}

// controlCommand builds a command that asks a running mount: run gets the
// client and the arguments.
func controlCommand(use, short, long string, args cobra.PositionalArgs, opts *controlOptions, run func(ctx context.Context, c *control.Client, args []string) error) *cobra.Command {
	cmd := &cobra.Command{
		Use: use, Short: short, Long: long, Args: args,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.out = cmd.OutOrStdout()
			c, err := opts.client()
			if err != nil {
				return err
			}
			for _, s := range c.Skipped {
				fmt.Fprintf(cmd.ErrOrStderr(), "skillfs: skipped %s\n", s)
			}
			return run(cmd.Context(), c, args)
		},
	}
	opts.addFlags(cmd)
	return cmd
}

func argsBetween(lo, hi int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || (hi >= 0 && len(args) > hi) {
			return usageError(fmt.Errorf("%s: %s (see `%s --help`)", cmd.CommandPath(), what, cmd.CommandPath()))
		}
		return nil
	}
}

const findHelp = `The command asks a running mount: the one at --mount DIR, or the only one
running. Add --json for JSON.`

func newStatusCommand() *cobra.Command {
	var opts controlOptions
	return controlCommand("status", "Show a running mount's servers: state, skills, bytes fetched, last error", findHelp,
		argsBetween(0, 0, "takes no arguments"), &opts,
		func(ctx context.Context, c *control.Client, _ []string) error {
			st, err := c.Status(ctx)
			if err != nil {
				return remote(err)
			}
			if opts.json {
				return opts.printJSON(st)
			}
			return report.Status(opts.out, st)
		})
}

func newListCommand() *cobra.Command {
	var opts controlOptions
	return controlCommand("list [LABEL]", "List every skill of a running mount (or of one server): path, state, approval, flags", findHelp,
		argsBetween(0, 1, "takes at most one server LABEL"), &opts,
		func(ctx context.Context, c *control.Client, args []string) error {
			label := ""
			if len(args) == 1 {
				label = args[0]
			}
			skills, err := c.Skills(ctx, label)
			if err := truncated(err); err != nil {
				return remote(err)
			}
			if opts.json {
				return opts.printJSON(skills)
			}
			if len(skills) == 0 && label != "" {
				_, err := fmt.Fprintln(opts.out, emptyListNote(ctx, c, label))
				return err
			}
			tw := report.NewTable(opts.out)
			fmt.Fprintln(tw, "PATH\tSTATE\tAPPROVAL\tFLAGS")
			for _, s := range skills {
				p := s.Path
				if p == "" {
					p = s.Origin + " " + s.URI
				}
				state := string(s.State)
				if s.Reason != "" {
					state += " (" + s.Reason + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", report.Cell(p, 0), report.Cell(state, 60), report.Cell(s.Approval, 0), report.List(s.Flags))
			}
			return tw.Flush()
		})
}

func newInspectCommand() *cobra.Command {
	var opts controlOptions
	var show bool
	cmd := controlCommand("inspect [--show] PATH | --origin LABEL URI", "Describe one skill: entry, files with digests, flags, approval",
		`Inspect describes one skill of a running mount, named by its mount-relative
path (acme/billing/refunds) or by --origin LABEL and its SKILL.md URI.
--show also prints SKILL.md, verified. On a terminal every invisible or
control character is written as <U+XXXX> (and bytes that are not UTF-8 as
<0xNN>), so that you read all of what an agent would and nothing in it acts
on the terminal; through a pipe or into a file SKILL.md is written as its
exact bytes (--json keeps the <U+XXXX> form).

`+findHelp,
		argsBetween(1, 1, "needs one skill PATH (or --origin LABEL URI)"), &opts,
		func(ctx context.Context, c *control.Client, args []string) error {
			refs, err := opts.refs(c, args)
			if err != nil {
				return err
			}
			// SKILL.md first, so that the files table says it is verified.
			var md *string
			exact := false
			if show {
				b, err := c.ShowSkillMD(ctx, refs[0])
				if err != nil {
					return remote(err)
				}
				// On a terminal every invisible or control character is
				// shown, and none acts; elsewhere (a pipe, a file) the
				// bytes are the file's own.
				v := control.Visible(b)
				if f, ok := opts.out.(*os.File); ok && !opts.json && !term.IsTerminal(f) {
					v, exact = string(b), true
				}
				md = &v
			}
			ins, err := c.Inspect(ctx, refs[0])
			if err != nil {
				return remote(err)
			}
			out := report.Inspected{Inspection: ins, SkillMD: md, Exact: exact}
			if opts.json {
				return opts.printJSON(out)
			}
			return report.Inspection(opts.out, out)
		})
	cmd.Flags().BoolVar(&show, "show", false, "also print SKILL.md (verified): invisible characters made visible on a terminal, its exact bytes otherwise")
	cmd.Flags().StringVar(&opts.origin, "origin", "", "the argument is a URI of this server (`LABEL`)")
	return cmd
}

func newPendingCommand() *cobra.Command {
	var opts controlOptions
	return controlCommand("pending", "List the skills waiting for approval, new or changed, with what changed", findHelp,
		argsBetween(0, 0, "takes no arguments"), &opts,
		func(ctx context.Context, c *control.Client, _ []string) error {
			ps, err := c.Pending(ctx)
			if err := truncated(err); err != nil {
				return remote(err)
			}
			if opts.json {
				return opts.printJSON(ps)
			}
			if len(ps) == 0 {
				fmt.Fprintln(opts.out, "no skills are waiting for approval")
				return nil
			}
			return report.Pending(opts.out, ps)
		})
}

type approveOptions struct {
	controlOptions
	all string
	yes bool
	// binding: approve the one skill named only if it is still the one
	// with this binding digest (from `skillfs inspect`).
	binding string
	in      io.Reader
	// terminal reports whether in is a terminal a person answers on.
	terminal func() bool
}

func newApproveCommand() *cobra.Command {
	var opts approveOptions
	cmd := controlCommand("approve PATH... | --all LABEL | --origin LABEL URI...", "Approve skills waiting in `skillfs pending`; they appear in the mount at once",
		`Approve shows what it is about to approve and asks on the terminal: each
skill's server (secrets masked), name, description, content flags and why it
waits, and for a skill approved before a unified diff of every changed file
against the version approved (binary files by size and digest), through
$PAGER (else less, else plain) when stdout is a terminal. --yes approves
without asking (for scripts; needed when stdin is not a terminal).

An approval is bound to what approve showed you: the skill's server, URI,
frontmatter and every file's size and digest, named by the binding digest
that `+"`skillfs pending --json`"+` and `+"`skillfs inspect --json`"+` show. The mount
approves a skill only if it still holds exactly that; if the server
changed it in the meantime, nothing is approved and approve says so: run
`+"`skillfs pending`"+` again. --all approves exactly the skills it listed: a
skill that arrived after the listing is not approved, and one that changed
is left pending and named. A skill never approved is shown with its file
list (sizes, flags) and its SKILL.md, verified and made visible. To approve
exactly what `+"`skillfs inspect --show PATH`"+` showed, name the binding it printed:
`+"`skillfs approve --binding DIGEST PATH`"+` refuses, and approves nothing, when the
skill is no longer that one. Exit status 1 when a skill was not approved.
If the server changes an approved skill later, it waits in
`+"`skillfs pending`"+` again.

`+findHelp,
		func(cmd *cobra.Command, args []string) error {
			if (opts.all == "") == (len(args) == 0) {
				return usageError(fmt.Errorf("approve needs skill PATHs or --all LABEL (see `skillfs approve --help`)"))
			}
			if opts.binding != "" && (opts.all != "" || len(args) != 1) {
				return usageError(fmt.Errorf("approve --binding DIGEST names one skill PATH (the one `skillfs inspect` showed it for)"))
			}
			return nil
		}, &opts.controlOptions,
		func(ctx context.Context, c *control.Client, args []string) error {
			return runApprove(ctx, c, opts, args)
		})
	cmd.Flags().StringVar(&opts.all, "all", "", "approve every pending skill of this server (`LABEL`), exactly as listed")
	cmd.Flags().StringVar(&opts.binding, "binding", "", "approve the skill only if it is still the one `skillfs inspect` showed with this binding (`DIGEST`); refused, exit 1, when the server changed it")
	cmd.Flags().BoolVarP(&opts.yes, "yes", "y", false, "do not ask (what is approved is still what approve fetched and printed)")
	cmd.Flags().StringVar(&opts.origin, "origin", "", "the arguments are URIs of this server (`LABEL`)")
	opts.in = os.Stdin
	opts.terminal = func() bool { return term.IsTerminal(os.Stdin) }
	return cmd
}

// runApprove shows the skills named (or --all's), asks unless --yes, and
// has the mount approve exactly the entries shown.
func runApprove(ctx context.Context, c *control.Client, opts approveOptions, args []string) error {
	// Buffered: --all prints a few lines per skill, and there may be
	// tens of thousands; flushed before the question and at the end.
	raw := opts.out
	out := bufio.NewWriter(opts.out)
	defer out.Flush()
	opts.out = out
	refs, err := opts.refs(c, args)
	if err != nil {
		return err
	}
	if !opts.yes && !opts.terminal() {
		return usageError(errors.New("approve asks before approving and stdin is not a terminal: pass --yes to approve without asking"))
	}
	// What is shown is what is approved: every ref carries the binding
	// digest of the entry shown here, and the mount approves nothing else.
	refs, chosen, err := approvalBindings(ctx, c, opts, refs)
	if err != nil {
		return err
	}
	if opts.binding != "" {
		if err := checkBinding(opts.binding, refs[0], args[0]); err != nil {
			return err
		}
		// chosen (and refs) stay: without --yes the prompt still shows
		// the skill, which is the one bound.
	}
	if opts.all != "" && len(refs) == 0 {
		// Still ask the mount: it says whether the server needs approval.
		if _, err := c.Approve(ctx, nil, opts.all); err != nil {
			return remote(err)
		}
		fmt.Fprintln(opts.out, "nothing to approve")
		return nil
	}
	switch {
	case len(chosen) > 0 && !opts.yes:
		if err := pageReviews(ctx, c, out, raw, chosen, refs); err != nil {
			return err
		}
	case len(chosen) > 0 && !opts.json:
		listApprovals(opts.out, chosen)
	}
	if !opts.yes && !askApprove(opts, out, len(refs)) {
		return nil
	}
	done, err := c.Approve(ctx, refs, opts.all)
	if err != nil {
		if errors.Is(err, control.ErrChanged) {
			return exitcode.New(exitFailure, err)
		}
		return remote(err)
	}
	return reportApprovals(opts, done)
}

// checkBinding holds approve to what the person read elsewhere (inspect
// --show): that is what is approved, or nothing is, when the mount's entry
// (ref) no longer has binding. The mount checks it again.
func checkBinding(binding string, ref control.SkillRef, name string) error {
	if ref.Binding == binding {
		return nil
	}
	return exitcode.New(exitFailure, fmt.Errorf("%s is no longer the skill you were shown: you gave binding %s, the mount now holds %s (the server changed it); nothing was approved: read it again with `skillfs inspect --show %s`",
		report.Cell(name, 0), report.Cell(binding, 0), report.Cell(ref.Binding, 0), report.Cell(name, 0)))
}

// pageReviews shows each chosen skill in full, through the pager on a
// terminal (raw); the refs take the bindings of the entries shown. out is
// flushed before the pager starts, so that what it holds comes first.
func pageReviews(ctx context.Context, c *control.Client, out *bufio.Writer, raw io.Writer, chosen []control.Pending, refs []control.SkillRef) error {
	var view strings.Builder
	fmt.Fprintln(&view, "These skills will be approved exactly as shown here; if the server changes one before the mount approves it, it is not approved.")
	fmt.Fprintln(&view)
	if err := reviews(ctx, c, &view, chosen, refs); err != nil {
		return err
	}
	out.Flush()
	return page(raw, view.String())
}

// listApprovals lists, for --yes, the skills about to be approved with
// their bindings.
func listApprovals(w io.Writer, chosen []control.Pending) {
	fmt.Fprintln(w, "These skills will be approved exactly as shown here (see `skillfs inspect --show PATH`); if the server changes one before the mount approves it, it is not approved:")
	report.Pending(w, chosen)
	for _, p := range chosen {
		fmt.Fprintf(w, "  %s binding %s\n", report.Cell(p.Skill.Path, 0), p.Binding)
	}
}

// askApprove asks on opts.in whether to approve n skills, and says "not
// approved" unless the answer is yes.
func askApprove(opts approveOptions, out *bufio.Writer, n int) bool {
	fmt.Fprintf(opts.out, "Approve %d skills? [y/N] ", n)
	out.Flush()
	answer, _ := bufio.NewReader(opts.in).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		fmt.Fprintln(opts.out, "not approved")
		return false
	}
	return true
}

// reportApprovals prints the mount's answer, skill by skill, and fails
// when a skill was not approved.
func reportApprovals(opts approveOptions, done []control.SkillInfo) error {
	failed := 0
	for _, s := range done {
		if s.Approval != "approved" {
			failed++
		}
	}
	if opts.json {
		if err := opts.printJSON(done); err != nil {
			return err
		}
	} else {
		for _, s := range done {
			name := s.Path
			if name == "" {
				name = s.Origin + " " + s.URI
			}
			switch {
			case s.Approval != "approved":
				fmt.Fprintf(opts.out, "not approved %s: %s\n", report.Cell(name, 0), report.Cell(s.Detail, 0))
			case s.Detail == "already approved; nothing changed":
				fmt.Fprintf(opts.out, "approved %s (already approved; nothing changed)\n", report.Cell(name, 0))
			default:
				fmt.Fprintf(opts.out, "approved %s\n", report.Cell(name, 0))
			}
		}
	}
	if failed > 0 {
		return exitcode.New(exitFailure, fmt.Errorf("%d of %d skills were not approved (see above)", failed, len(done)))
	}
	return nil
}

// approvalBindings gives each ref the binding digest of the entry the
// mount holds now and returns the pending rows to show: for --all, every
// pending skill of the server (the refs are those); otherwise each ref's
// pending row, or its inspection when it is not pending (already
// approved, say: the mount's answer says so).
func approvalBindings(ctx context.Context, c *control.Client, opts approveOptions, refs []control.SkillRef) ([]control.SkillRef, []control.Pending, error) {
	ps, err := c.Pending(ctx)
	if err != nil {
		return nil, nil, remote(err)
	}
	var chosen []control.Pending
	if opts.all != "" {
		refs = nil
		for _, p := range ps {
			if p.Skill.Origin == opts.all {
				chosen = append(chosen, p)
				refs = append(refs, control.SkillRef{Origin: p.Skill.Origin, URI: p.Skill.URI, Binding: p.Binding})
			}
		}
		return refs, chosen, nil
	}
	out := make([]control.SkillRef, len(refs))
	notPending := 0
	for i, r := range refs {
		matched := false
		for _, p := range ps {
			if (r.Path != "" && r.Path == p.Skill.Path) || (r.Path == "" && r.Origin == p.Skill.Origin && r.URI == p.Skill.URI) {
				chosen = append(chosen, p)
				out[i] = control.SkillRef{Origin: p.Skill.Origin, URI: p.Skill.URI, Binding: p.Binding}
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		ins, err := c.Inspect(ctx, r)
		if err != nil {
			return nil, nil, remote(err)
		}
		notPending++
		out[i] = control.SkillRef{Origin: ins.Skill.Origin, URI: ins.Skill.URI, Binding: ins.Binding}
		if out[i].URI == "" {
			out[i] = r
		}
	}
	if notPending > 0 {
		fmt.Fprintf(opts.out, "%d of the skills named are not waiting for approval (see `skillfs pending`)\n", notPending)
	}
	return out, chosen, nil
}

func newRevokeCommand() *cobra.Command {
	var opts controlOptions
	cmd := controlCommand("revoke PATH... | --origin LABEL URI...", "Revoke approvals; the skills leave the mount at once", findHelp,
		argsBetween(1, -1, "needs skill PATHs"), &opts,
		func(ctx context.Context, c *control.Client, args []string) error {
			refs, err := opts.refs(c, args)
			if err != nil {
				return err
			}
			done, err := c.Revoke(ctx, refs)
			if err != nil {
				return remote(err)
			}
			if opts.json {
				return opts.printJSON(done)
			}
			for _, s := range done {
				if s.Detail == "not approved; nothing to revoke" {
					fmt.Fprintf(opts.out, "not revoked %s: it was not approved\n", report.Cell(s.Path, 0))
					continue
				}
				fmt.Fprintf(opts.out, "revoked %s\n", report.Cell(s.Path, 0))
			}
			return nil
		})
	cmd.Flags().StringVar(&opts.origin, "origin", "", "the arguments are URIs of this server (`LABEL`)")
	return cmd
}

func newGetCommand() *cobra.Command {
	var opts controlOptions
	cmd := controlCommand("get --origin LABEL URI", "Add a skill the server does not list, confirmed with skills/get, to the running mount",
		`Get asks the server for one skill by its SKILL.md URI (skills/get), checks the
entry and adds the skill to the mount without editing the config or
remounting. To keep it across restarts, add the URI to the server's pin list.

`+findHelp,
		func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || opts.origin == "" {
				return usageError(errors.New("get needs --origin LABEL and one SKILL.md URI (example: skillfs get --origin acme skill://billing/refunds/SKILL.md)"))
			}
			return nil
		}, &opts,
		func(ctx context.Context, c *control.Client, args []string) error {
			s, err := c.Get(ctx, opts.origin, args[0])
			if err != nil {
				return remote(err)
			}
			if opts.json {
				return opts.printJSON(s)
			}
			switch s.Approval {
			case "pending", "changed":
				// Confirmed, but held back until a person approves it.
				fmt.Fprintf(opts.out, "added %s (%s), pending approval: it is not in the mount until you run skillfs approve %s\n",
					report.Cell(s.Path, 0), report.Cell(s.URI, 0), report.Cell(s.Path, 0))
			default:
				fmt.Fprintf(opts.out, "added %s (%s)\n", report.Cell(s.Path, 0), report.Cell(s.URI, 0))
			}
			return nil
		})
	cmd.Flags().StringVar(&opts.origin, "origin", "", "the server to ask (`LABEL`)")
	return cmd
}
