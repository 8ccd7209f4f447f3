package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/skillfs/skillfs/internal/config"
)

// mountProblems are what a config that loads can still hold for the mount
// to refuse or fail: a label skillfs mount refuses wherever it mounts (a
// server's directory named like a folder agents read skills from, such as
// "skills"), and a stdio command that is not there to start.
func mountProblems(cfg *config.Config) []string {
	var out []string
	for _, o := range cfg.Origins {
		// The label's own directory, wherever the mountpoint is: "/" stands
		// for it, as mount checks MOUNTPOINT/LABEL.
		var pe *config.PlacementError
		if err := config.CheckPlacement("/" + o.Label); errors.As(err, &pe) {
			out = append(out, fmt.Sprintf("%s: skillfs mount refuses this label: its directory would be %s, which agents read skills from; rename the server (the key under mcpServers) to something else, e.g. %q",
				o.Label, pe.Discovery, o.Label+"-mcp"))
		}
		if o.Kind == config.Stdio {
			if p := commandProblem(o.Command, o.Cwd); p != "" {
				out = append(out, fmt.Sprintf("%s: %s; mount would start the other servers and show this one as failed-to-start", o.Label, p))
			}
		}
	}
	return out
}

// commandProblem says why a stdio server's command could not be started
// as mount starts it (a bare name is looked up in skillfs's PATH, a
// relative path from the server's cwd), or "".
func commandProblem(command, cwd string) string {
	if !strings.Contains(command, "/") {
		if _, err := exec.LookPath(command); err != nil {
			return fmt.Sprintf("command %q is not found in PATH (%s): install it, add its directory to PATH where skillfs runs (a systemd unit has its own PATH), or give its absolute path in \"command\"",
				command, os.Getenv("PATH"))
		}
		return ""
	}
	path := command
	if !filepath.IsAbs(path) && cwd != "" {
		path = filepath.Join(cwd, path)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("command %s does not exist: fix the path in \"command\"", path)
	case err != nil:
		return fmt.Sprintf("command %s: %v", path, err)
	case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
		return fmt.Sprintf("command %s is not an executable file: fix the path in \"command\" or chmod +x it", path)
	}
	return ""
}
