//go:build linux

package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Attacks on the control channel and on the daemon's files by a second
// local user: a real process of another uid (setpriv), the test binary run
// again in one of the attacker modes below.

// attackerUID is an unused uid: no account is needed to run as it.
const attackerUID = 47321

// Environment of the test binary run as the attacker (init, below).
const (
	envAttack = "SKILLFS_ATTACK" // set: run as the attacker, then exit
	// envMkdir: directories to create (0755), comma-separated, in order.
	envMkdir = "SKILLFS_ATTACK_MKDIR"
	// envLinks: symbolic links to plant, "LINK>TARGET", comma-separated.
	envLinks = "SKILLFS_ATTACK_LINKS"
	// envReg: a registration to write, naming envRegSocket, envRegPID and
	// envRegMount (the pid defaults to the attacker's own).
	envReg       = "SKILLFS_ATTACK_REG"
	envRegSocket = "SKILLFS_ATTACK_REG_SOCKET"
	envRegPID    = "SKILLFS_ATTACK_REG_PID"
	envRegMount  = "SKILLFS_ATTACK_REG_MOUNT"
	// envListen: a socket to answer HTTP on as a fake daemon, for ever. It
	// prints "listening PID", then "accepted" for each connection and
	// "request PATH" for each request.
	envListen = "SKILLFS_ATTACK_LISTEN"
	// envFlood: a socket to connect to envFloodN times, one at a time,
	// each read until the other end closes it. It prints "connected N
	// failed M".
	envFlood  = "SKILLFS_ATTACK_FLOOD"
	envFloodN = "SKILLFS_ATTACK_FLOOD_N"
)

func init() {
	if os.Getenv(envAttack) == "" {
		return
	}
	if err := attack(); err != nil {
		fmt.Fprintln(os.Stderr, "attacker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func attack() error {
	for _, d := range splitList(os.Getenv(envMkdir)) {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	for _, l := range splitList(os.Getenv(envLinks)) {
		link, target, _ := strings.Cut(l, ">")
		if err := os.Symlink(target, link); err != nil {
			return err
		}
	}
	var ln net.Listener
	if sock := os.Getenv(envListen); sock != "" {
		var err error
		if ln, err = net.Listen("unix", sock); err != nil {
			return err
		}
		os.Chmod(sock, 0o777)
	}
	if reg := os.Getenv(envReg); reg != "" {
		pid := os.Getpid()
		if p := os.Getenv(envRegPID); p != "" {
			pid, _ = strconv.Atoi(p)
		}
		b, _ := json.Marshal(map[string]any{"mountpoint": os.Getenv(envRegMount), "pid": pid, "socket": os.Getenv(envRegSocket), "started": time.Now()})
		if err := os.WriteFile(reg, b, 0o644); err != nil {
			return err
		}
	}
	if sock := os.Getenv(envFlood); sock != "" {
		n, _ := strconv.Atoi(os.Getenv(envFloodN))
		ok, failed := 0, 0
		for range n {
			c, err := net.DialTimeout("unix", sock, 30*time.Second)
			if err != nil {
				failed++
				continue
			}
			c.SetDeadline(time.Now().Add(30 * time.Second))
			io.Copy(io.Discard, c)
			c.Close()
			ok++
		}
		fmt.Printf("connected %d failed %d\n", ok, failed)
	}
	if ln == nil {
		return nil
	}
	fmt.Printf("listening %d\n", os.Getpid())
	mount := os.Getenv(envRegMount)
	return http.Serve(loggingListener{ln}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Printf("request %s\n", r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/status") {
			fmt.Fprintf(w, `{"mount":{"path":%q,"pid":%d},"uptime":"1s","version":"fake","servers":[{"label":"evil","state":"connected"}]}`+"\n", mount, os.Getpid())
			return
		}
		fmt.Fprintln(w, `[]`)
	}))
}

type loggingListener struct{ net.Listener }

func (l loggingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		fmt.Println("accepted")
	}
	return c, err
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// attacker is the test binary, copied where the attacker can run it; the
// test is skipped when it cannot run a process as another user.
func attacker(t *testing.T) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to run a process as a second user (setpriv)")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv to run a process as a second user")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := sharedDir(t, 0o755)
	bin := filepath.Join(dir, "attacker")
	placeExecutable(t, exe, bin)
	return bin
}

// sharedDir is a directory of root's under the system's temporary
// directory (which any user can reach), with the given mode: 0755 to
// let the attacker in, 0777 for one the attacker can write to.
func sharedDir(t *testing.T, mode os.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "skillfs-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

// asAttacker runs the attacker binary as attackerUID with env (name=value)
// and waits for it.
func asAttacker(t *testing.T, bin string, env ...string) string {
	t.Helper()
	cmd := attackerCmd(bin, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("attacker %v: %v\n%s", env, err, out)
	}
	return string(out)
}

func attackerCmd(bin string, env ...string) *exec.Cmd {
	uid := strconv.Itoa(attackerUID)
	cmd := exec.Command("setpriv", "--reuid="+uid, "--regid="+uid, "--clear-groups", bin)
	cmd.Env = append([]string{envAttack + "=1", "HOME=/nonexistent", "PATH=/usr/bin:/bin"}, env...)
	return cmd
}

// fakeDaemon starts the attacker as a fake daemon answering on sock
// (planting env first); it returns the attacker's pid and what it printed
// so far, read on demand. The process is killed in t.Cleanup.
func fakeDaemon(t *testing.T, bin, sock string, env ...string) (int, func() string) {
	t.Helper()
	cmd := attackerCmd(bin, append(env, envListen+"="+sock)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut syncBuffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var out syncBuffer
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		first := true
		for sc.Scan() {
			if first {
				lines <- sc.Text()
				first = false
				continue
			}
			out.Write([]byte(sc.Text() + "\n"))
		}
		close(lines)
	}()
	select {
	case line, ok := <-lines:
		var pid int
		if _, err := fmt.Sscanf(line, "listening %d", &pid); !ok || err != nil {
			t.Fatalf("fake daemon did not start: %q\n%s", line, errOut.String())
		}
		return pid, out.String
	case <-time.After(2 * time.Minute):
		t.Fatalf("fake daemon did not start\n%s", errOut.String())
	}
	return 0, nil
}

// clientEnv is an environment of the test's own for the CLI, with
// XDG_RUNTIME_DIR set to rt.
func clientEnv(t *testing.T, rt string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "XDG_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	home := t.TempDir()
	return append(env, "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, "cache"), "XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_RUNTIME_DIR="+rt)
}

// TestControlClientSkipsAnotherUsersRegistrations: with XDG_RUNTIME_DIR
// writable by another user, that user pre-creates the skillfs directory
// (or writes into it) with a registration and a fake daemon behind it.
// status, pending and approve never talk to it and say what they skipped.
func TestControlClientSkipsAnotherUsersRegistrations(t *testing.T) {
	t.Parallel()
	bin := attacker(t)
	for _, tc := range []struct {
		name string
		// rootMakesDir: the skillfs directory is root's, mode 0777;
		// otherwise the attacker creates it.
		rootMakesDir bool
		why          string
	}{
		{"attacker-owned directory", false, fmt.Sprintf("owned by uid %d, not by you (uid 0)", attackerUID)},
		{"attacker-writable directory", true, "writable by group or others (mode 0777)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := sharedDir(t, 0o777)
			dir := filepath.Join(rt, "skillfs")
			var env []string
			if tc.rootMakesDir {
				if err := os.Mkdir(dir, 0o777); err != nil {
					t.Fatal(err)
				}
				os.Chmod(dir, 0o777)
			} else {
				env = append(env, envMkdir+"="+dir)
			}
			mnt := filepath.Join(t.TempDir(), "mnt")
			sock := filepath.Join(dir, "fake.sock")
			_, seen := fakeDaemon(t, bin, sock, append(env, envReg+"="+filepath.Join(dir, "fake.json"), envRegSocket+"="+sock, envRegMount+"="+mnt)...)
			cenv := clientEnv(t, rt)
			for _, args := range [][]string{
				{"status"}, {"status", "--json"}, {"pending"}, {"approve", "--yes", "evil/skill"}, {"status", "--mount", mnt},
			} {
				out, errOut, code := ctl(t, cenv, args...)
				if code != 1 || !strings.Contains(errOut, "no skillfs mount is running") || !strings.Contains(errOut, "skipped "+dir+": "+tc.why) {
					t.Errorf("skillfs %s: exit %d, stdout %q, stderr %q; want exit 1, no mount, and the directory skipped: %s", strings.Join(args, " "), code, out, errOut, tc.why)
				}
			}
			if s := seen(); s != "" {
				t.Errorf("the fake daemon was contacted:\n%s", s)
			}
			for _, name := range []string{"fake.json", "fake.sock"} {
				if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
					t.Errorf("the client removed the other user's %s: %v", name, err)
				}
			}
		})
	}
}

// TestControlClientRemovesOnlyItsOwn: a stale registration planted by
// another user names a victim file as its socket, and a pid that is gone.
// The client skips it; the victim survives.
func TestControlClientRemovesOnlyItsOwn(t *testing.T) {
	t.Parallel()
	bin := attacker(t)
	victim := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	rt := sharedDir(t, 0o777)
	dir := filepath.Join(rt, "skillfs")
	asAttacker(t, bin, envMkdir+"="+dir, envReg+"="+filepath.Join(dir, "stale.json"), envRegSocket+"="+victim,
		envRegPID+"="+strconv.Itoa(dead.Process.Pid), envRegMount+"=/nowhere")
	_, errOut, code := ctl(t, clientEnv(t, rt), "status")
	if code != 1 || !strings.Contains(errOut, "skipped "+dir+": owned by uid") {
		t.Errorf("status: exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "precious\n" {
		t.Errorf("the victim file after skillfs status: %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "stale.json")); err != nil {
		t.Errorf("the client removed the other user's registration: %v", err)
	}
}

// TestControlClientRefusesAPeerOfAnotherUser: the files all look right
// (root's registration and socket in root's 0700 directory), but the
// process answering on the socket runs as another user. The client
// refuses it and says why.
func TestControlClientRefusesAPeerOfAnotherUser(t *testing.T) {
	t.Parallel()
	bin := attacker(t)
	adir := sharedDir(t, 0o777)
	rt := t.TempDir()
	dir := filepath.Join(rt, "skillfs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	mnt := filepath.Join(t.TempDir(), "mnt")
	pid, seen := fakeDaemon(t, bin, filepath.Join(adir, "fake.sock"), envRegMount+"="+mnt)
	sock := filepath.Join(dir, "looks-right.sock")
	if err := os.Rename(filepath.Join(adir, "fake.sock"), sock); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(sock, 0, 0); err != nil {
		t.Fatal(err)
	}
	os.Chmod(sock, 0o600)
	b, _ := json.Marshal(map[string]any{"mountpoint": mnt, "pid": pid, "socket": sock, "started": time.Now()})
	reg := filepath.Join(dir, "looks-right.json")
	if err := os.WriteFile(reg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cenv := clientEnv(t, rt)
	for _, args := range [][]string{{"status"}, {"pending"}, {"approve", "--yes", "evil/skill"}, {"status", "--mount", mnt}} {
		out, errOut, code := ctl(t, cenv, args...)
		want := fmt.Sprintf("skipped %s: not your skillfs: answered by a process of uid %d, not by you (uid 0)", sock, attackerUID)
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("skillfs %s: exit %d, stdout %q, stderr %q; want exit 1 and %q", strings.Join(args, " "), code, out, errOut, want)
		}
	}
	if s := seen(); strings.Contains(s, "request") {
		t.Errorf("the fake daemon was asked:\n%s", s)
	}
	if _, err := os.Lstat(reg); err != nil {
		t.Errorf("the registration was removed: %v", err)
	}
}

// TestControlFindsTheMountItIsTold: the CLI, with another XDG_RUNTIME_DIR,
// XDG_CACHE_HOME and HOME than the mount's, finds `--mount DIR` through
// the mount's .skillfs/control.json.
func TestControlFindsTheMountItIsTold(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	genTree(t, dir, "local")
	// The mount: no XDG_RUNTIME_DIR, so its socket is in <cache-dir>/run.
	menv := clientEnv(t, "")
	m := startMountEnv(t, menv[:len(menv)-1], writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)}, nil))
	b, err := os.ReadFile(m.Path(".skillfs", "control.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ep struct {
		Mountpoint string `json:"mountpoint"`
		PID        int    `json:"pid"`
		Socket     string `json:"socket"`
	}
	if err := json.Unmarshal(b, &ep); err != nil || ep.Mountpoint != m.Dir || ep.PID != m.cmd.Process.Pid || filepath.Dir(ep.Socket) != filepath.Join(m.Cache, "run") {
		t.Errorf(".skillfs/control.json: %v\n%s", err, b)
	}
	cenv := clientEnv(t, t.TempDir())
	st := status(t, cenv, "--mount", m.Dir)
	if st.Mount.Path != m.Dir || st.Mount.PID != m.cmd.Process.Pid || len(st.Servers) != 1 {
		t.Errorf("status --mount %s from another environment: %+v", m.Dir, st)
	}
	out, _, code := ctl(t, cenv, "list", "--mount", m.Dir+"/")
	if code != 0 || !strings.Contains(out, "local/alpha") {
		t.Errorf("list --mount %s/: exit %d\n%s", m.Dir, code, out)
	}

	// A hung mount (its daemon stopped) does not hang the command.
	syscall.Kill(m.cmd.Process.Pid, syscall.SIGSTOP)
	_, errOut, code := ctl(t, cenv, "status", "--mount", m.Dir)
	syscall.Kill(m.cmd.Process.Pid, syscall.SIGCONT)
	if code != 1 || !strings.Contains(errOut, "the mount at "+m.Dir+" did not answer within") {
		t.Errorf("status --mount of a hung mount: exit %d: %s", code, errOut)
	}
}

// TestDaemonRefusesLinksAtItsFiles: with a shared state directory, another
// user plants links at the default log and pid paths (and at explicit
// ones) to a file of root's. mount --daemon refuses, naming the path and
// what to change, and the file is unchanged.
func TestDaemonRefusesLinksAtItsFiles(t *testing.T) {
	t.Parallel()
	bin := attacker(t)
	dir := t.TempDir()
	genTree(t, dir, "local")
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)}, nil)
	for _, tc := range []struct {
		name string
		// setup plants the attack and returns the extra mount flags and
		// the message wanted.
		setup func(t *testing.T, state, mnt, victim string) ([]string, string)
	}{
		{"default paths in a directory of the attacker's", func(t *testing.T, state, mnt, victim string) ([]string, string) {
			sd := filepath.Join(state, "skillfs")
			base := filepath.Join(sd, mountFileName(mnt))
			asAttacker(t, bin, envMkdir+"="+sd, envLinks+"="+base+".log>"+victim+","+base+".pid>"+victim+","+base+".pid.tmp>"+victim)
			return nil, fmt.Sprintf("state directory %s is owned by uid %d, not by you (uid 0)", sd, attackerUID)
		}},
		{"default paths in a directory others can write to", func(t *testing.T, state, mnt, victim string) ([]string, string) {
			sd := filepath.Join(state, "skillfs")
			os.Mkdir(sd, 0o777)
			os.Chmod(sd, 0o777)
			base := filepath.Join(sd, mountFileName(mnt))
			asAttacker(t, bin, envLinks+"="+base+".log>"+victim+","+base+".pid>"+victim+","+base+".pid.tmp>"+victim)
			return nil, fmt.Sprintf("state directory %s is writable by group or others (mode 0777): chmod 700 it", sd)
		}},
		{"explicit --log-file", func(t *testing.T, state, mnt, victim string) ([]string, string) {
			log := filepath.Join(state, "x.log")
			asAttacker(t, bin, envLinks+"="+log+">"+victim)
			return []string{"--log-file", log, "--pid-file", filepath.Join(t.TempDir(), "x.pid")}, log + " is a symbolic link; skillfs does not write through links"
		}},
		{"explicit --pid-file", func(t *testing.T, state, mnt, victim string) ([]string, string) {
			pid := filepath.Join(state, "x.pid")
			asAttacker(t, bin, envLinks+"="+pid+">"+victim+","+pid+".tmp>"+victim)
			return []string{"--log-file", filepath.Join(t.TempDir(), "x.log"), "--pid-file", pid}, pid + " is a symbolic link; skillfs does not write through links"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			victim := filepath.Join(t.TempDir(), "precious")
			if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			state := sharedDir(t, 0o777)
			mnt := filepath.Join(t.TempDir(), "mnt")
			extra, want := tc.setup(t, state, mnt, victim)
			args := append([]string{"mount", "--daemon", "--config", cfg, "--cache-dir", t.TempDir(), "--startup-timeout", "10m"}, extra...)
			cmd := exec.Command(skillfsBin, append(args, mnt)...)
			cmd.Env = clientEnv(t, t.TempDir())
			cmd.Env = append(cmd.Env, "XDG_STATE_HOME="+state)
			out, err := cmd.CombinedOutput()
			t.Cleanup(func() {
				if m := regexp.MustCompile(`pid (\d+);`).FindSubmatch(out); m != nil {
					pid, _ := strconv.Atoi(string(m[1]))
					syscall.Kill(pid, syscall.SIGKILL)
				}
				if isMounted(mnt) {
					syscall.Unmount(mnt, syscall.MNT_DETACH)
				}
			})
			if code := exitCode(err); code != 2 || !strings.Contains(string(out), want) {
				t.Errorf("mount --daemon: exit %d, want 2 and %q:\n%s", code, want, out)
			}
			if isMounted(mnt) {
				t.Errorf("%s is mounted after the daemon refused", mnt)
			}
			if b, err := os.ReadFile(victim); err != nil || string(b) != "precious\n" {
				t.Errorf("the victim file: %q, %v", b, err)
			}
		})
	}
}

// TestControlRefusalsAreNotALogFlood: with the socket's modes loosened by
// mistake, another user connects thousands of times. The daemon refuses
// each, logs a bounded number of lines that count them all, and still
// answers its own user.
func TestControlRefusalsAreNotALogFlood(t *testing.T) {
	t.Parallel()
	bin := attacker(t)
	dir := t.TempDir()
	genTree(t, dir, "local")
	rt := sharedDir(t, 0o755)
	env := clientEnv(t, rt)
	m := startMountEnv(t, env, writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)}, nil))
	m.warnings = true
	socks, _ := filepath.Glob(filepath.Join(rt, "skillfs", "*.sock"))
	if len(socks) != 1 {
		t.Fatalf("sockets in %s/skillfs: %v", rt, socks)
	}
	os.Chmod(filepath.Join(rt, "skillfs"), 0o755)
	os.Chmod(socks[0], 0o666)
	const n = 3000
	start := time.Now()
	out := asAttacker(t, bin, envFlood+"="+socks[0], envFloodN+"="+strconv.Itoa(n))
	elapsed := time.Since(start)
	if want := fmt.Sprintf("connected %d failed 0\n", n); out != want {
		t.Fatalf("the attacker: %q, want %q", out, want)
	}
	if st := status(t, env); st.Mount.Path != m.Dir {
		t.Errorf("status after the flood: %+v", st.Mount)
	}
	m.Stop(t)
	var lines []string
	total := 0
	for _, line := range strings.Split(m.log.String(), "\n") {
		if !strings.Contains(line, "refused") {
			continue
		}
		lines = append(lines, line)
		if c := regexp.MustCompile(` count=(\d+)`).FindStringSubmatch(line); c != nil {
			k, _ := strconv.Atoi(c[1])
			total += k
		} else {
			total++
		}
	}
	// One line as the flood starts, one a minute while it lasts, one as the
	// daemon stops.
	if bound := 2 + int(elapsed/time.Minute) + 1; len(lines) > bound {
		t.Errorf("%d log lines about refused connections (bound %d):\n%s", len(lines), bound, strings.Join(lines[:min(len(lines), 10)], "\n"))
	}
	if len(lines) == 0 {
		t.Fatalf("no refused connection logged:\n%s", m.log.String())
	}
	if total != n || !strings.Contains(lines[0], fmt.Sprintf("uid=%d", attackerUID)) {
		t.Errorf("the log counts %d refused connections, want %d:\n%s", total, n, strings.Join(lines[:min(len(lines), 10)], "\n"))
	}
}

// TestControlMountFileIsCheckedLikeARegistration: a directory another user
// controls carries a .skillfs/control.json naming that user's socket.
// `status --mount DIR` refuses it, says why, and never talks to it.
func TestControlMountFileIsCheckedLikeARegistration(t *testing.T) {
	t.Parallel()
	bin := attacker(t)
	adir := sharedDir(t, 0o777)
	mnt := filepath.Join(adir, "mnt")
	sock := filepath.Join(adir, "fake.sock")
	_, seen := fakeDaemon(t, bin, sock, envMkdir+"="+mnt+","+filepath.Join(mnt, ".skillfs"),
		envReg+"="+filepath.Join(mnt, ".skillfs", "control.json"), envRegSocket+"="+sock, envRegMount+"="+mnt)
	out, errOut, code := ctl(t, clientEnv(t, t.TempDir()), "status", "--mount", mnt)
	want := fmt.Sprintf("the mount at %s has its control socket in %s, which skillfs does not trust: writable by group or others (mode 0777)", mnt, adir)
	if code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("status --mount %s: exit %d, stdout %q, stderr %q; want exit 1 and %q", mnt, code, out, errOut, want)
	}
	if s := seen(); s != "" {
		t.Errorf("the fake daemon was contacted:\n%s", s)
	}
}
