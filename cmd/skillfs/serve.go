package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newServeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "serve DIR",
		Short: "Serve a folder of skills as a SEP-2640 MCP server",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("serve: not implemented yet")
		},
	}
}
