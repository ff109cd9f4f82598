package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newMCPCmd is a placeholder until its issue lands.
func newMCPCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "(not built yet)",
		RunE:  func(*cobra.Command, []string) error { return errors.New("mcp is not built yet") },
	}
}
