package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// envFilled is a file of exactly n bytes that parses as an envFile with
// KEY=v: comment lines pad it.
func envFilled(n int) []byte {
	b := []byte("KEY=v\n")
	for len(b) < n {
		line := min(n-len(b), 4096)
		pad := strings.Repeat("x", line-1)
		if line > 1 {
			pad = "#" + pad[1:]
		}
		b = append(b, pad+"\n"...)
	}
	return b[:n]
}

// TestConfigInputsAreRegularFilesWithinACap: the config and every envFile
// are read only from regular files of at most their cap, and a FIFO with
// no writer or a device fails at once with the file named and what to do,
// instead of blocking the reader.
func TestConfigInputsAreRegularFilesWithinACap(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	atCap := filepath.Join(dir, "at-cap.env")
	if err := os.WriteFile(atCap, envFilled(MaxEnvFileSize), 0o600); err != nil {
		t.Fatal(err)
	}
	overCap := filepath.Join(dir, "over-cap.env")
	if err := os.WriteFile(overCap, envFilled(MaxEnvFileSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.env")
	if err := os.Symlink(atCap, link); err != nil {
		t.Fatal(err)
	}
	cfgFile := func(envFile string) string {
		p := filepath.Join(t.TempDir(), "config.json")
		if err := os.WriteFile(p, []byte(`{"mcpServers": {"s": {"command": "x", "envFile": "`+envFile+`"}}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, envFile string
		err           string // "" loads
	}{
		{"fifo without a writer", fifo, fifo + ": is a named pipe (FIFO), not a regular file (skillfs reads its config inputs only from regular files); point envFile at a regular file"},
		{"dev zero", "/dev/zero", "/dev/zero: is a character device, not a regular file"},
		{"directory", dir, dir + ": is a directory, not a regular file"},
		{"one byte over the cap", overCap, overCap + ": is larger than 1 MiB, the most skillfs reads"},
		{"exactly at the cap", atCap, ""},
		{"a symlink to a regular file", link, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan struct{})
			var cfg *Config
			var err error
			go func() { cfg, err = Load(cfgFile(tc.envFile)); close(done) }()
			select {
			case <-done:
			case <-time.After(time.Minute): // only to fail a hang
				t.Fatalf("Load blocked on envFile %s", tc.envFile)
			}
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := cfg.Origins[0].Env["KEY"]; got != "v" {
					t.Errorf("KEY=%q, want v", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "mcpServers.s.envFile: "+tc.err) {
				t.Errorf("error %v\nwant one containing %q", err, tc.err)
			}
		})
	}

	// The config file itself: the same rules, its own cap.
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(`{"x": "`+strings.Repeat("a", MaxConfigSize)+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{fifo, fifo + ": is a named pipe (FIFO), not a regular file (skillfs reads its config inputs only from regular files); pass the config file itself, a regular file, with --config FILE"},
		{"/dev/zero", "/dev/zero: is a character device, not a regular file"},
		{big, big + ": is larger than 4 MiB, the most skillfs reads"},
	} {
		done := make(chan struct{})
		var err error
		go func() { _, err = Load(tc.path); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("Load(%s) blocked", tc.path)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%s): %v\nwant one containing %q", tc.path, err, tc.want)
		}
	}
}

// TestReadInputGivesUpAtTheDeadline: a read that does not finish by the
// deadline (a file on a filesystem that stopped answering) is abandoned
// with an error that says so, and the config names the file.
func TestReadInputGivesUpAtTheDeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	readFile = func(name string, limit int64) ([]byte, *inputError) {
		if strings.HasSuffix(name, "stuck.env") {
			<-release
		}
		return readRegular(name, limit)
	}
	defer func() { readFile = readRegular }()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "stuck.env"), []byte("A=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := parse([]byte(`{"mcpServers": {"s": {"command": "x", "envFile": "stuck.env"}}}`), filepath.Join(dir, "c.json"), dir, testEnv, time.Now().Add(100*time.Millisecond))
	want := "mcpServers.s.envFile: " + filepath.Join(dir, "stuck.env") + ": reading it did not finish within 10s"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v\nwant one containing %q", err, want)
	}
}
