package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newKBCmd is a placeholder until its issue lands.
func newKBCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "kb",
		Short: "(not built yet)",
		RunE:  func(*cobra.Command, []string) error { return errors.New("kb is not built yet") },
	}
}
