//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// approveAll measures `skillfs approve --yes --all` of every skill of the
// tree (issue 17 item 2: 10,000 skills well under 2 s), exec to exit,
// against writing the approvals.json it produced once, as the store writes
// it (a temp file, fsync, rename, fsync of the directory). Each repetition
// mounts the tree again with approval: required and a fresh cache, so that
// every skill is pending; the mounts are not timed.
func (s *scenario) approveAll(ctx context.Context) {
	reps := min(s.b.opts.Reps, 3)
	r := s.row("approve --yes --all of every skill (approval: required)", KindTime)
	r.Baseline = "write the same approvals.json once (temp, fsync, rename)"
	if s.tree.Skills >= 10000 {
		r.Target = Target{Op: ValueBelow, Limit: 2}
	}
	fail := func(err error) {
		r.Err = err.Error()
		s.rows = append(s.rows, r)
		s.note("approve --all: %v", err)
	}
	cfg, err := s.approvalConfig()
	if err != nil {
		fail(err)
		return
	}
	mnt := filepath.Join(s.dir, "mnt-approval")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		fail(err)
		return
	}
	var approves, writes []time.Duration
	for rep := range reps {
		cache := filepath.Join(s.dir, fmt.Sprintf("cache-approval-%d", rep))
		m, _, err := startMount(ctx, s.b.cl, s.b.bin, cfg, cache, mnt, s.log)
		if err != nil {
			fail(err)
			return
		}
		var out []byte
		d, err := timed(func() error {
			cmd := exec.CommandContext(ctx, s.b.bin, "approve", "--yes", "--all", label, "--mount", mnt, "--cache-dir", cache)
			var e error
			out, e = cmd.Output()
			return e
		})
		if err == nil {
			if n := strings.Count(string(out), "\napproved "+label+"/"); n < s.tree.Skills-1 {
				err = fmt.Errorf("approve --all approved %d of %d skills", n, s.tree.Skills)
			}
		}
		var data []byte
		if err == nil {
			data, err = approvalsFile(cache)
		}
		stopErr := m.Stop()
		if err == nil {
			err = stopErr
		}
		if err != nil {
			fail(fmt.Errorf("repetition %d: %w", rep, err))
			return
		}
		w, err := timed(func() error { return writeDurably(filepath.Join(s.dir, "approvals-baseline.json"), data) })
		if err != nil {
			fail(err)
			return
		}
		approves, writes = append(approves, d), append(writes, w)
		os.RemoveAll(cache)
	}
	r.N = reps
	r.measured(seconds(approves), seconds(writes))
	s.rows = append(s.rows, r)
}

// approvalConfig is the scenario's config with approval: required.
func (s *scenario) approvalConfig() (string, error) {
	b, err := os.ReadFile(s.cfg)
	if err != nil {
		return "", err
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		return "", err
	}
	sk, _ := cfg["skillfs"].(map[string]any)
	if sk == nil {
		sk = map[string]any{}
		cfg["skillfs"] = sk
	}
	def, _ := sk["defaults"].(map[string]any)
	if def == nil {
		def = map[string]any{}
		sk["defaults"] = def
	}
	def["approval"] = "required"
	if b, err = json.MarshalIndent(cfg, "", "  "); err != nil {
		return "", err
	}
	p := filepath.Join(s.dir, "config-approval.json")
	return p, os.WriteFile(p, b, 0o600)
}

// approvalsFile is the approvals.json under a cache directory.
func approvalsFile(cache string) ([]byte, error) {
	var found string
	filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "approvals.json" {
			found = p
		}
		return nil
	})
	if found == "" {
		return nil, fmt.Errorf("no approvals.json under %s", cache)
	}
	return os.ReadFile(found)
}

// writeDurably writes data to p as the store writes approvals.json.
func writeDurably(p string, data []byte) error {
	tmp := p + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(p))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
