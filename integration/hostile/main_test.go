package hostile_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/integration/hostile"
)

// command re-executes this test binary as a server (TestMain calls Main).
func command(t *testing.T, opts hostile.Options, httpAddr string) *exec.Cmd {
	t.Helper()
	cmd, err := hostile.Command(opts, httpAddr)
	if err != nil {
		t.Fatal(err)
	}
	return cmd
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestMainStdio runs Main as a subprocess over stdio with a go-sdk client
// and checks the access log it keeps.
func TestMainStdio(t *testing.T) {
	dir := t.TempDir()
	access := dir + "/access.log"
	stderr := &lockedBuffer{}
	cmd := command(t, hostile.Options{Fixtures: []string{hostile.Stale}, AccessLog: access, StateFile: dir + "/state.json", PageSize: 1}, "")
	cmd.Stderr = stderr
	cs, err := newClient(t).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: eraOld})
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr)
	}
	raws, _ := listAll(t, cs, 10)
	if len(raws) != 3 {
		t.Errorf("listed %d skills, want honest-a, honest-b and stale", len(raws))
	}
	md, err := read(t.Context(), cs, "skill://honest-a/SKILL.md")
	if err != nil || !bytes.Equal(md, hostile.Files(hostile.HonestA)["skill://honest-a/SKILL.md"]) {
		t.Errorf("read honest-a: %v", err)
	}
	if _, err := getSkill(t.Context(), cs, "skill://stale/SKILL.md"); err != nil {
		t.Error(err)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	// CommandTransport has waited for the process.
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("the server ended with %v; stderr:\n%s", cmd.ProcessState, stderr)
	}
	log, err := os.ReadFile(access)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(log), "\n"), "\n")
	for _, want := range []string{
		"initialize -",
		"notifications/initialized -",
		"skills/list -",
		"skills/list list:1",
		"skills/list list:2",
		"resources/read skill://honest-a/SKILL.md",
		"skills/get skill://stale/SKILL.md",
	} {
		if !containsLine(lines, want) {
			t.Errorf("access log lacks %q:\n%s", want, log)
		}
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

// TestMainStdioDieMidRead: the server writes half of the response line
// and exits with status 3.
func TestMainStdioDieMidRead(t *testing.T) {
	cmd := command(t, hostile.Options{Fixtures: []string{hostile.DieMidRead}}, "")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &lockedBuffer{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	c := newRawClient(t, stdin, stdout)
	if _, err := c.call("resources/read", map[string]any{"uri": "skill://honest-a/SKILL.md"}); err != nil {
		t.Fatalf("an honest read before: %v", err)
	}
	c.id++
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": "resources/read", "params": map[string]any{"uri": "skill://die-mid-read/SKILL.md"}}); err != nil {
		t.Fatal(err)
	}
	// A server that does not die would keep the pipe open forever.
	watchdog := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	defer watchdog.Stop()
	rest, err := io.ReadAll(c.r)
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) < 100 || bytes.IndexByte(rest, '\n') >= 0 || !bytes.HasPrefix(rest, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":`, c.id)) {
		t.Errorf("the server wrote %d bytes (%q…) before dying; want the first half of the response, without newline", len(rest), truncate(rest))
	}
	if json.Valid(rest) {
		t.Error("the half line is valid JSON")
	}
	if code := exitCode(cmd.Wait()); code != hostile.ExitDied {
		t.Errorf("exit status %d, want %d; stderr:\n%s", code, hostile.ExitDied, cmd.Stderr)
	}
}

var listening = regexp.MustCompile(`^hostile: listening on (http://\S+/)$`)

// startHTTP runs Main as a subprocess serving HTTP and returns its URL.
func startHTTP(t *testing.T, opts hostile.Options) (string, *exec.Cmd, *lockedBuffer) {
	t.Helper()
	cmd := command(t, opts, "127.0.0.1:0")
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	stderr := &lockedBuffer{}
	url := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			fmt.Fprintln(stderr, sc.Text())
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				url <- m[1]
			}
		}
		close(url)
	}()
	u, ok := <-url
	if !ok {
		cmd.Wait()
		t.Fatalf("the server exited without listening; stderr:\n%s", stderr)
	}
	return u, cmd, stderr
}

func TestMainHTTP(t *testing.T) {
	for _, era := range []string{eraOld, eraNew} {
		t.Run(era, func(t *testing.T) {
			u, cmd, stderr := startHTTP(t, hostile.Options{Fixtures: []string{}})
			cs, err := connectHTTP(t, u, era)
			if err != nil {
				t.Fatalf("connect: %v\nstderr:\n%s", err, stderr)
			}
			if raws, _ := listAll(t, cs, 10); len(raws) != 2 {
				t.Errorf("listed %d skills", len(raws))
			}
			if _, err := read(t.Context(), cs, "skill://honest-b/assets/logo.bin"); err != nil {
				t.Error(err)
			}
			cs.Close()
			cmd.Process.Signal(syscall.SIGTERM)
			if code := exitCode(cmd.Wait()); code != 0 {
				t.Errorf("exit status %d after SIGTERM; stderr:\n%s", code, stderr)
			}
		})
	}
}

func TestMainHTTPDieMidRead(t *testing.T) {
	u, cmd, stderr := startHTTP(t, hostile.Options{Fixtures: []string{hostile.DieMidRead}})
	cs, err := connectHTTP(t, u, eraOld)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := read(t.Context(), cs, "skill://die-mid-read/SKILL.md"); err == nil {
		t.Error("the read answered")
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := exitCode(err); code != hostile.ExitDied {
			t.Errorf("exit status %d, want %d; stderr:\n%s", code, hostile.ExitDied, stderr)
		}
	case <-time.After(time.Minute):
		t.Fatalf("the server did not exit; stderr:\n%s", stderr)
	}
}

func TestMainBadEnvironment(t *testing.T) {
	for _, opts := range []hostile.Options{{Mode: "bogus"}, {Fixtures: []string{"bogus"}}} {
		cmd := command(t, opts, "")
		out, err := cmd.CombinedOutput()
		if code := exitCode(err); code != 2 || !strings.Contains(string(out), "bogus") {
			t.Errorf("%+v: exit status %d, output %q; want 2 and a message naming it", opts, code, out)
		}
	}
	cmd := command(t, hostile.Options{}, "")
	cmd.Env = append(cmd.Env, hostile.EnvPageSize+"=-3")
	if out, err := cmd.CombinedOutput(); exitCode(err) != 2 {
		t.Errorf("negative page size: %v, %q", err, out)
	}
}
