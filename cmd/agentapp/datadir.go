package main

import (
	"context"
	"os"
	"time"

	"github.com/agentapp/agentapp/store"
	"github.com/spf13/cobra"
)

// EnvDatabaseURL names the environment variable --database defaults to.
const envDatabaseURL = "AGENTAPP_DATABASE_URL"

// addDatabaseFlags registers the root's persistent database flags.
func addDatabaseFlags(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.String("database", "", "database URL: postgres://USER:PASSWORD@HOST:PORT/DBNAME for a shared PostgreSQL, or sqlite:PATH (default $"+envDatabaseURL+", else SQLite in the data directory)")
	f.Int("db-max-conns", store.DefaultMaxConns, "PostgreSQL: most connections this process opens (each replica takes this many of the server's max_connections)")
	f.Duration("db-connect-timeout", store.DefaultConnectTimeout, "PostgreSQL: how long one connection attempt may take before requests fail")
}

// dataDir returns the data directory: --data-dir, else $AGENTAPP_DATA_DIR,
// else the user's data directory.
func dataDir(cmd *cobra.Command) (string, error) {
	if d, _ := cmd.Flags().GetString("data-dir"); d != "" {
		return d, nil
	}
	return store.DefaultDir(os.Getenv)
}

// databaseURL returns --database, else $AGENTAPP_DATABASE_URL; "" means
// the data directory's SQLite database.
func databaseURL(cmd *cobra.Command) string {
	if u, _ := cmd.Flags().GetString("database"); u != "" {
		return u
	}
	return os.Getenv(envDatabaseURL)
}

// storeOptions returns the pool options of the database flags.
func storeOptions(cmd *cobra.Command) *store.Options {
	n, _ := cmd.Flags().GetInt("db-max-conns")
	t, _ := cmd.Flags().GetDuration("db-connect-timeout")
	return &store.Options{MaxConns: n, ConnectTimeout: t}
}

// openStore opens the database --database names, else the one in the data
// directory.
func openStore(cmd *cobra.Command) (*store.Store, error) {
	if u := databaseURL(cmd); u != "" {
		return openURL(cmd, u)
	}
	dir, err := dataDir(cmd)
	if err != nil {
		return nil, err
	}
	return store.Open(dir)
}

// openURL opens a database URL with the pool options of the flags.
func openURL(cmd *cobra.Command, u string) (*store.Store, error) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return store.OpenURL(ctx, u, storeOptions(cmd))
}
