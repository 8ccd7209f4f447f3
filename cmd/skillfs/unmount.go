package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	skfs "github.com/skillfs/skillfs/fs"
)

type unmountOptions struct {
	lazy bool
}

func newUnmountCommand() *cobra.Command {
	var opts unmountOptions
	cmd := &cobra.Command{
		Use:   "unmount [--lazy] MOUNTPOINT",
		Short: "Unmount a skillfs mount (the daemon then exits 0)",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(fmt.Errorf("unmount needs exactly one MOUNTPOINT"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUnmount(opts, args[0])
		},
	}
	cmd.Flags().BoolVar(&opts.lazy, "lazy", false, "detach even if the mount is busy; it disappears when the last user lets go")
	return cmd
}

func runUnmount(opts unmountOptions, mountpoint string) error {
	mnt, err := filepath.Abs(mountpoint)
	if err != nil {
		return usageError(err)
	}
	if !skfs.IsMounted(mnt) {
		return usageError(fmt.Errorf("%s is not a mount point", mnt))
	}
	if err := skfs.UnmountPath(mnt, opts.lazy); err != nil {
		return fmt.Errorf("%w (use --lazy to detach a busy mount)", err)
	}
	return nil
}
