package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/mountd"
	"github.com/skillfs/skillfs/internal/render"
)

// Shell completion (`skillfs completion bash|zsh|fish`, cobra's) completes
// from the running mount: server labels (list, --origin, --all), skill
// paths (inspect, approve, revoke: those each can act on) and mountpoints
// (--mount, unmount). A completion is bounded: at most maxCompletions
// candidates, the rest counted in a hint, and at most completionTimeout
// for all of it, finding the mount included — a mount that does not answer
// completes nothing rather than hold the shell.

const (
	// maxCompletions: the most candidates a completion offers.
	maxCompletions = 200
	// completionTimeout: the most time a completion takes.
	completionTimeout = 2 * time.Second
)

type completeFunc = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective)

// withCompletions gives the commands below root their completions. It is
// applied to the finished tree so that the commands' own files stay as
// they are; a command that completes by itself already is left alone.
func withCompletions(root *cobra.Command) {
	skillPaths := func(approval string) completeFunc {
		return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if origin, _ := cmd.Flags().GetString("origin"); origin != "" {
				return nil, cobra.ShellCompDirectiveNoFileComp // a URI: the server's to name
			}
			return completeSkillPaths(cmd, args, toComplete, approval)
		}
	}
	firstOnly := func(f completeFunc) completeFunc {
		return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return f(cmd, args, toComplete)
		}
	}
	args := map[string]completeFunc{
		"skillfs list":      firstOnly(completeLabels),
		"skillfs inspect":   firstOnly(skillPaths(control.CompleteAny)),
		"skillfs approve":   skillPaths(control.CompletePending),
		"skillfs revoke":    skillPaths(control.CompleteApproved),
		"skillfs unmount":   firstOnly(completeMounts),
		"skillfs mount":     firstOnly(dirsOnly),
		"skillfs serve":     firstOnly(dirsOnly),
		"skillfs integrate": firstOnly(fixed(integrateHosts)),
	}
	flags := map[string]completeFunc{
		"mount":     completeMounts,
		"origin":    completeLabels,
		"all":       completeLabels,
		"cache-dir": dirsOnly,
	}
	// Flags of one command whose values are a fixed few.
	commandFlags := map[string]map[string]completeFunc{
		"skillfs catalog": {
			"format": fixed([]string{string(render.FormatXML), string(render.FormatMarkdown), string(render.FormatJSON)}),
			"hook":   fixed([]string{"claude-code"}),
		},
		"skillfs mount":     {"log-level": fixed([]string{"debug", "info", "warn", "error"})},
		"skillfs integrate": {"project": dirsOnly},
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if f, ok := args[c.CommandPath()]; ok && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = f
		}
		for name, f := range commandFlags[c.CommandPath()] {
			if c.Flags().Lookup(name) != nil {
				c.RegisterFlagCompletionFunc(name, f)
			}
		}
		for name, f := range flags {
			if fl := c.LocalNonPersistentFlags().Lookup(name); fl != nil && fl.Value.Type() == "string" {
				c.RegisterFlagCompletionFunc(name, f) // an error: it has one already
			}
		}
		for name, f := range flags {
			if fl := c.PersistentFlags().Lookup(name); fl != nil && fl.Value.Type() == "string" {
				c.RegisterFlagCompletionFunc(name, f)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func dirsOnly(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}

func fixed(words []string) completeFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return bounded(words, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeLabels offers the labels of the mount's servers.
func completeLabels(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	labels, _ := askMount(cmd, func(ctx context.Context, c *control.Client) ([]string, error) {
		st, err := c.Status(ctx)
		var labels []string
		for _, s := range st.Servers {
			labels = append(labels, s.Label)
		}
		return labels, err
	})
	return bounded(labels, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeMounts offers the mountpoints of the running mounts.
func completeMounts(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	cacheDir, _ := cmd.Flags().GetString("cache-dir")
	root, err := mountd.CacheRoot(cacheDir)
	if err != nil {
		root = ""
	}
	mounts, _ := inTime(func() ([]string, error) { return control.Mounts(control.Dirs(root)), nil })
	return bounded(mounts, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeSkillPaths offers the skill paths, one segment at a time, of the
// skills the command can act on, leaving out those already on the line.
func completeSkillPaths(cmd *cobra.Command, args []string, toComplete, approval string) ([]string, cobra.ShellCompDirective) {
	got, _ := askMount(cmd, func(ctx context.Context, c *control.Client) (control.Completions, error) {
		return c.Complete(ctx, toComplete, approval, maxCompletions+len(args))
	})
	var out []string
	dirs := false
	for _, p := range got.Candidates {
		if slices.Contains(args, p) {
			continue
		}
		dirs = dirs || strings.HasSuffix(p, "/")
		out = append(out, p)
	}
	more := got.More
	if len(out) > maxCompletions {
		more += len(out) - maxCompletions
		out = out[:maxCompletions]
	}
	if more > 0 {
		out = cobra.AppendActiveHelp(out, fmt.Sprintf("%d more; type more of the path", more))
	}
	d := cobra.ShellCompDirectiveNoFileComp
	if dirs {
		d |= cobra.ShellCompDirectiveNoSpace
	}
	return out, d
}

// askMount runs ask against the mount the command names (--mount,
// --cache-dir), or the only one running, within completionTimeout; an
// error or no answer in time completes nothing.
func askMount[T any](cmd *cobra.Command, ask func(context.Context, *control.Client) (T, error)) (T, error) {
	var opts controlOptions
	opts.mount, _ = cmd.Flags().GetString("mount")
	opts.cacheDir, _ = cmd.Flags().GetString("cache-dir")
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	return inTime(func() (T, error) {
		c, err := opts.client()
		if err != nil {
			var zero T
			return zero, err
		}
		return ask(ctx, c)
	})
}

// inTime returns what f returns, or an error after completionTimeout if f
// is not done by then: finding a mount reads files and dials sockets that
// need not answer. f is left to finish on its own; the process exits.
func inTime[T any](f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	t := time.NewTimer(completionTimeout)
	defer t.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			cobra.CompDebugln(fmt.Sprintf("skillfs: completion: %v", r.err), true)
		}
		return r.v, r.err
	case <-t.C:
		cobra.CompDebugln("skillfs: completion: no answer in time", true)
		var zero T
		return zero, fmt.Errorf("no answer within %s", completionTimeout)
	}
}

// bounded is the words that start with prefix, at most maxCompletions.
func bounded(words []string, prefix string) []string {
	var out []string
	for _, w := range words {
		if strings.HasPrefix(w, prefix) {
			out = append(out, w)
		}
	}
	if len(out) > maxCompletions {
		out = cobra.AppendActiveHelp(out[:maxCompletions], fmt.Sprintf("%d more; type more of it", len(out)-maxCompletions))
	}
	return out
}
