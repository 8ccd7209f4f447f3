package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/report"
)

func newConfigCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Inspect the config file",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "check [FILE]",
		Short: "Print the servers a config would mount, and every problem in it",
		Long: `Check reads the config file (default: the one skillfs mount reads) the way
skillfs mount does and prints the servers it would mount: label, transport,
and the command with its arguments or the URL, after ${…} expansion.
Secrets stay hidden: env and header values print as ***, and so do a URL's
user info and query values. Then it prints every problem in the file.

Exit status: 0 when the file is fine (or, for the default path, absent: the
built-in demo would be mounted), 2 when it has problems.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConfigCheck(cmd.OutOrStdout(), args)
		},
	})
	return cmd
}

// runConfigCheck loads the file as loadOrigins does and reports on it.
func runConfigCheck(out io.Writer, args []string) error {
	path, given := "", len(args) == 1
	if given {
		path = args[0]
	} else {
		p, err := config.DefaultPath()
		if err != nil {
			return usageError(err)
		}
		path = p
	}
	cfg, err := config.Load(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !given {
			_, werr := fmt.Fprintf(out, "no config at %s; skillfs mount would mount the built-in demo\n", path)
			return werr
		}
		problems, more := []string{err.Error()}, 0
		var list *config.Errors
		if errors.As(err, &list) {
			problems = problems[:0]
			for _, e := range list.List {
				problems = append(problems, e.Error())
			}
			more = list.More
		}
		fmt.Fprintf(out, "%s: nothing would be mounted; skillfs mount refuses a config with problems\n\nproblems:\n", path)
		for _, p := range problems {
			fmt.Fprintf(out, "  %s\n", p)
		}
		if more > 0 {
			fmt.Fprintf(out, "  (and %d more)\n", more)
		}
		n := "1 problem"
		if total := len(problems) + more; total > 1 {
			n = fmt.Sprintf("%d problems", total)
		}
		return usageError(fmt.Errorf("config check: %s in %s", n, path))
	}
	fmt.Fprintf(out, "%s: %d server(s) would be mounted\n\n", path, len(cfg.Origins))
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "LABEL\tTRANSPORT\tCOMMAND OR URL")
	for _, o := range cfg.Origins {
		switch o.Kind {
		case config.Stdio:
			fmt.Fprintf(tw, "%s\t%s\t%s\n", o.Label, o.Kind, report.ShellJoin(append([]string{o.Command}, o.Args...)))
			for _, k := range sortedKeys(o.Env) {
				fmt.Fprintf(tw, "\t\tenv %s=***\n", k)
			}
			if len(o.PassEnv) > 0 {
				fmt.Fprintf(tw, "\t\tpass_env %s\n", strings.Join(o.PassEnv, " "))
			}
			if o.Cwd != "" {
				fmt.Fprintf(tw, "\t\tcwd %s\n", report.ShellJoin([]string{o.Cwd}))
			}
		default:
			fmt.Fprintf(tw, "%s\t%s\t%s\n", o.Label, o.Kind, config.MaskURL(o.URL))
			for _, k := range sortedKeys(o.Headers) {
				fmt.Fprintf(tw, "\t\theader %s: ***\n", k)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if problems := mountProblems(cfg); len(problems) > 0 {
		fmt.Fprintln(out, "\nproblems:")
		for _, p := range problems {
			fmt.Fprintf(out, "  %s\n", p)
		}
		n := "1 problem"
		if len(problems) > 1 {
			n = fmt.Sprintf("%d problems", len(problems))
		}
		return usageError(fmt.Errorf("config check: %s in %s", n, path))
	}
	_, err = fmt.Fprintln(out, "\nno problems")
	return err
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
