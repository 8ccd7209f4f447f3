package integrate

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func paths(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

// TestFilesRemoveAsksNothingOfTheMount: removing lists both forms' files
// with no parts, and asks for neither the mount, its catalog nor this
// binary (nil funcs would panic), so --remove works with no mount running.
func TestFilesRemoveAsksNothingOfTheMount(t *testing.T) {
	home := t.TempDir()
	for _, host := range MCPHosts {
		files, err := Files(Setup{Host: host, Home: home, Project: filepath.Join(home, "p"), Remove: true})
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		if len(files) == 0 {
			t.Errorf("%s: nothing to remove from", host)
		}
		for _, f := range files {
			if len(f.Parts) != 0 {
				t.Errorf("%s: %s has parts when removing", host, f.Path)
			}
		}
	}
}

// TestFilesEachFormEmptiesTheOther: a write of one form lists the other
// form's file without parts, so the host is never set up twice.
func TestFilesEachFormEmptiesTheOther(t *testing.T) {
	home := t.TempDir()
	s := Setup{
		Host: "claude-code", Home: home, Tools: []string{"list_skill_files", "read_skill_file"},
		Mount:   func() (string, error) { return "/m", nil },
		Hook:    func(mnt string) (string, error) { return "skillfs catalog --hook claude-code --mount " + mnt, nil },
		Command: func() (string, []string, error) { return "/bin/skillfs", []string{"mcp"}, nil },
	}
	files, err := Files(s)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(home, ".claude", "settings.json"), filepath.Join(home, ".claude", "CLAUDE.md"), filepath.Join(home, ".claude.json")}
	if got := paths(files); !slices.Equal(got, want) {
		t.Fatalf("mount form: %q, want %q", got, want)
	}
	if len(files[2].Parts) != 0 || len(files[0].Parts) != 2 || files[0].Parts[1].Value != "Read(//m/**)" {
		t.Errorf("mount form parts: %+v", files)
	}
	s.MCP = true
	files, err = Files(s)
	if err != nil {
		t.Fatal(err)
	}
	if files[0].Path != filepath.Join(home, ".claude.json") || len(files[0].Parts) != 1 || !strings.Contains(string(files[0].Parts[0].JSON), `"/bin/skillfs"`) {
		t.Errorf("mcp form: %+v", files[0])
	}
	if len(files) != 3 || len(files[1].Parts) != 2 || files[1].Parts[1].Value != "mcp__skillfs__read_skill_file" || len(files[2].Parts) != 0 {
		t.Errorf("mcp form's other files: %+v", files[1:])
	}
}

// TestFilesFailWithTheMount: a form that needs the mount fails with its
// error, and writes nothing (no files returned).
func TestFilesFailWithTheMount(t *testing.T) {
	down := errors.New("no skillfs mount is running")
	for _, host := range []string{"gemini", "codex", "cursor"} {
		files, err := Files(Setup{Host: host, Home: t.TempDir(), Snapshot: func() (string, string, error) { return "", "", down }})
		if !errors.Is(err, down) || files != nil {
			t.Errorf("%s: %v, %d files", host, err, len(files))
		}
	}
}

// TestCodexServerIsTOML: skillfs mcp's table quotes what TOML must.
func TestCodexServerIsTOML(t *testing.T) {
	got := codexServer(`/opt/my "skillfs"/bin`, []string{"mcp", "--config", `C:\x`})
	want := "[mcp_servers.skillfs]\ncommand = \"/opt/my \\\"skillfs\\\"/bin\"\nargs = [\"mcp\", \"--config\", \"C:\\\\x\"]\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
