package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newChatCmd is a placeholder until its issue lands.
func newChatCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "chat",
		Short: "(not built yet)",
		RunE:  func(*cobra.Command, []string) error { return errors.New("chat is not built yet") },
	}
}
