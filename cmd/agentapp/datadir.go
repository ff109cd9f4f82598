package main

import (
	"os"

	"github.com/agentapp/agentapp/store"
	"github.com/spf13/cobra"
)

// dataDir returns the data directory: --data-dir, else $AGENTAPP_DATA_DIR,
// else the user's data directory.
func dataDir(cmd *cobra.Command) (string, error) {
	if d, _ := cmd.Flags().GetString("data-dir"); d != "" {
		return d, nil
	}
	return store.DefaultDir(os.Getenv)
}

// openStore opens the database in the data directory.
func openStore(cmd *cobra.Command) (*store.Store, error) {
	dir, err := dataDir(cmd)
	if err != nil {
		return nil, err
	}
	return store.Open(dir)
}
