//go:build linux

// Command loopback is the benchmark's FUSE floor: go-fuse's stock loopback
// file system (fs.NewLoopbackRoot) over a directory, mounted with the same
// kernel options and cache timeouts as skillfs, and nothing else. The bench
// builds it and runs it as a subprocess, so that the mount it reads is
// never served from its own process.
//
//	loopback SRC MNT
//
// It prints "loopback: mounted" once the mount is live and unmounts on
// SIGTERM or SIGINT.
//
// It lives here, as a program of its own, rather than in the bench: go-fuse
// stays out of every package but fs and this one, whose whole point is to
// be go-fuse with nothing of skillfs in it.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: loopback SRC MNT")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "loopback:", err)
		os.Exit(1)
	}
}

func run(src, mnt string) error {
	root, err := gofs.NewLoopbackRoot(src)
	if err != nil {
		return err
	}
	timeout := time.Minute // skillfs's CacheTimeout
	server, err := gofs.Mount(mnt, root, &gofs.Options{
		EntryTimeout: &timeout,
		AttrTimeout:  &timeout,
		MountOptions: fuse.MountOptions{
			FsName:           "loopback",
			Name:             "loopback",
			Options:          []string{"ro", "nosuid", "nodev", "noexec", "default_permissions"},
			DirectMount:      os.Geteuid() == 0,
			DirectMountFlags: syscall.MS_RDONLY | syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC,
			MaxReadAhead:     128 << 10,
			MaxBackground:    1024,
		},
	})
	if err != nil {
		return fmt.Errorf("mount %s: %w", mnt, err)
	}
	fmt.Println("loopback: mounted")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		// A reader still inside the mount makes it busy for a moment.
		for range 50 {
			if server.Unmount() == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		fmt.Fprintln(os.Stderr, "loopback: still busy; leaving", mnt, "mounted")
		os.Exit(1)
	}()
	server.Wait()
	return nil
}
