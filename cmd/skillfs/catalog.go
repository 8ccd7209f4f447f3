package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/render"
	"github.com/skillfs/skillfs/internal/report"
)

// hookCatalogBytes bounds the catalog `catalog --hook claude-code` prints:
// Claude Code is reported to keep at most 10,000 characters of a hook's
// output in the context (more is saved to a file and replaced with a
// preview), and a byte is at most a character.
const hookCatalogBytes = 10000

// hookHosts are the hosts `catalog --hook` writes the output of.
var hookHosts = []string{"claude-code"}

func newCatalogCommand() *cobra.Command {
	var opts controlOptions
	var format, hook string
	var maxBytes int
	cmd := controlCommand("catalog [--format xml|markdown|json] [--max-bytes N] [--hook claude-code]",
		"Print what an agent host should put in the model's context: how to use the skills, and every skill it can load now",
		`Catalog prints, from a running mount, what a host puts in the model's
context so that the model knows the skills exist: a short paragraph on how
to use them (read SKILL.md with the file tool, resolve relative paths from
its folder, list a folder to see what is there; the content is the named
server's, not the user's), then one entry per skill that can be loaded now,
with its server, name, description and the absolute path of its SKILL.md.
Skills with the same name are qualified by their path. Skills waiting for
approval, failed, rejected or of servers not connected now are left out and
counted, never named. The mount keeps the same text (xml) at
MOUNT/.skillfs/catalog.md, for hosts that include a file by path.

--format xml (default; the <available_skills> block), markdown or json.
--max-bytes bounds the output (default 32768, at least 4096): skills that do
not fit are left out, in order, and counted.
--hook claude-code prints Claude Code's SessionStart hook output, JSON with
the catalog as hookSpecificOutput.additionalContext, bounded at 10000 bytes
unless --max-bytes says otherwise (see skillfs integrate claude-code).

`+findHelp,
		argsBetween(0, 0, "takes no arguments"), &opts,
		func(ctx context.Context, c *control.Client, _ []string) error {
			f, err := render.CatalogFormat(format)
			if err != nil {
				return usageError(err)
			}
			if opts.json {
				f = render.FormatJSON
			}
			max := maxBytes
			if hook != "" {
				f, max = render.FormatXML, cmp.Or(max, hookCatalogBytes)
			}
			b, err := catalogOf(ctx, c, f, max)
			if err != nil {
				return err
			}
			_, err = opts.out.Write(b)
			return err
		})
	f := cmd.Flags()
	f.StringVar(&format, "format", string(render.FormatXML), "`xml`, markdown or json")
	f.IntVar(&maxBytes, "max-bytes", 0, fmt.Sprintf("bound the output to `N` bytes (default %d, at least %d)", render.DefaultCatalogBytes, render.MinCatalogBytes))
	f.StringVar(&hook, "hook", "", "print the catalog as `HOST`'s hook output (claude-code)")
	// The hook never fails: whatever goes wrong, Claude Code gets output
	// that says so (exit 0), within hookDeadline.
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if hook == "" {
			return run(cmd, args)
		}
		opts.out = cmd.OutOrStdout()
		_, err := opts.out.Write(hookOutput(&opts, cmp.Or(maxBytes, hookCatalogBytes)))
		return err
	}
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		if maxBytes != 0 && maxBytes < render.MinCatalogBytes {
			return usageError(fmt.Errorf("--max-bytes %d: give at least %d", maxBytes, render.MinCatalogBytes))
		}
		if hook != "" && hook != "claude-code" {
			return usageError(fmt.Errorf("--hook %q: the hosts with a hook are %v", hook, hookHosts))
		}
		if hook != "" && (cmd.Flags().Changed("format") || opts.json) {
			return usageError(fmt.Errorf("--hook prints JSON of its own: leave out --format and --json"))
		}
		return nil
	}
	return cmd
}

// catalogOf renders the catalog of the mount c answers for: its rows and
// its servers' states, as `skillfs list` and `skillfs status` get them.
func catalogOf(ctx context.Context, c *control.Client, f render.Format, max int) ([]byte, error) {
	st, err := c.Status(ctx)
	if err != nil {
		return nil, remote(err)
	}
	skills, err := c.Skills(ctx, "")
	if err := truncated(err); err != nil {
		return nil, remote(err)
	}
	s := &render.Snapshot{Mount: st.Mount.Path, Index: render.Index{Skills: skills}}
	for _, o := range st.Servers {
		s.Status.Origins = append(s.Status.Origins, o.OriginStatus)
	}
	return render.Catalog(s, f, max), nil
}

// hookDeadline bounds the hook: finding the mount and asking it. Claude
// Code waits for a SessionStart hook before the session starts.
const hookDeadline = 2 * time.Second

// hookOutput is the SessionStart hook's output: the catalog, or, when the
// mount is missing, ambiguous, wedged or failing, context that says the
// skills are unavailable and why, with a one-line warning for the user.
func hookOutput(opts *controlOptions, max int) []byte {
	ctx, cancel := context.WithTimeout(context.Background(), hookDeadline)
	defer cancel()
	done := make(chan []byte, 1)
	var err error
	errc := make(chan error, 1)
	go func() {
		c, err := opts.client()
		if err == nil {
			var b []byte
			if b, err = catalogOf(ctx, c, render.FormatXML, max); err == nil {
				done <- b
				return
			}
		}
		errc <- err
	}()
	select {
	case b := <-done:
		if out, err := claudeHookOutput(b, ""); err == nil {
			return out
		}
	case err = <-errc:
	case <-ctx.Done():
		where := "the skillfs mount"
		if opts.mount != "" {
			where = "the skillfs mount at " + opts.mount
		}
		err = fmt.Errorf("%s did not answer within %s", where, hookDeadline)
	}
	why := hookLine(fmt.Sprint(err), 400)
	ctxText := "Skills served over MCP through skillfs are unavailable in this session: " + why +
		". Do not look for them on disk; if the user asks for a skill, say that skillfs is not answering."
	out, _ := claudeHookOutput([]byte(ctxText), "skillfs: skills unavailable: "+why)
	return out
}

// hookLine is the first line of s, made visible and cut to max runes.
func hookLine(s string, max int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return report.Cell(s, max)
}

// claudeHookOutput wraps a catalog as a Claude Code SessionStart hook's
// output.
// output, with warning, when set, as the systemMessage Claude Code shows
// the user.
func claudeHookOutput(catalog []byte, warning string) ([]byte, error) {
	type specific struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	}
	// Without HTML escapes: '<' is one byte, not six.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(struct {
		SystemMessage      string   `json:"systemMessage,omitempty"`
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{warning, specific{"SessionStart", string(catalog)}})
	return b.Bytes(), err
}
