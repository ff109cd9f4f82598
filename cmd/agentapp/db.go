package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/kb"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/support"
	"github.com/agentapp/agentapp/web"
	"github.com/spf13/cobra"
)

// newDBCmd builds `agentapp db`: schema status and migration of the
// database, and copying a data directory's SQLite database to PostgreSQL.
func newDBCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "db",
		Short: "Manage the database (status, migrate, copy)",
		Long: `The database holds orders, tickets, hand-offs, chat sessions and the knowledge
base: SQLite in the data directory by default, or a shared PostgreSQL with
--database postgres://… (or $` + envDatabaseURL + `). Every command migrates the
schema when it opens the database; db migrate does it on its own, before
replicas start.`,
	}
	cmd.AddCommand(newDBStatusCmd(), newDBMigrateCmd(), newDBCopyCmd())
	return cmd
}

// component is one part of agentapp that keeps tables in the database.
type component struct {
	name    string
	version int
}

// components lists them with the schema version this binary knows.
func components() []component {
	return []component{
		{"store", store.SchemaVersion()},
		{"support", support.SchemaVersion()},
		{"kb", kb.SchemaVersion()},
		{"chat", host.SchemaVersion()},
		{"webapps", web.AppStepsSchemaVersion()},
	}
}

// migrateAll applies every component's migrations to st.
func migrateAll(ctx context.Context, st *store.Store) error {
	if _, err := support.New(ctx, st); err != nil {
		return err
	}
	if _, err := kb.Open(ctx, st); err != nil {
		return err
	}
	if err := host.Migrate(ctx, st); err != nil {
		return err
	}
	return web.MigrateAppSteps(ctx, st)
}

// describe names a store for people: its backend and where it is.
func describe(st *store.Store) string {
	if st.Dialect() == store.Postgres {
		return "PostgreSQL " + st.Path
	}
	return "SQLite " + st.Path
}

func newDBStatusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the database and the schema version of each component",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := openStore(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			have, err := st.Versions(cmd.Context())
			if err != nil {
				return err
			}
			return printStatus(cmd.OutOrStdout(), st, have)
		},
	}
}

func printStatus(w io.Writer, st *store.Store, have map[string]int) error {
	fmt.Fprintf(w, "Database: %s\n\n", describe(st))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tDATABASE\tTHIS AGENTAPP\tSTATE")
	for _, c := range components() {
		v := have[c.name]
		state := "up to date"
		switch {
		case v > c.version:
			state = "newer than this agentapp: upgrade agentapp"
		case v == 0:
			// Not a fault: each component creates its tables when first
			// used (the web's only when the web runs).
			state = "not created yet (its first use creates it; agentapp db migrate does it now)"
		case v < c.version:
			state = fmt.Sprintf("%d step(s) to apply (the next start applies them; agentapp db migrate does it now)", c.version-v)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", c.name, v, c.version, state)
	}
	return tw.Flush()
}

func newDBMigrateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply the schema migrations this agentapp knows",
		Long: `Apply the schema migrations this agentapp knows. Processes apply them at start
as well, one at a time (on PostgreSQL under an advisory lock), so this is only
needed to migrate ahead of a deployment. A database migrated by a newer
agentapp is refused.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := openStore(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			if err := migrateAll(cmd.Context(), st); err != nil {
				return err
			}
			have, err := st.Versions(cmd.Context())
			if err != nil {
				return err
			}
			return printStatus(cmd.OutOrStdout(), st, have)
		},
	}
}

// copyTables are the tables db copy moves, in an order that respects their
// foreign keys. The knowledge-base index is rebuilt, not copied: each
// backend keeps it in its own form.
var copyTables = []string{
	"support_orders", "support_counters", "support_tickets", "support_idempotency", "support_handoffs",
	"chat_sessions", "chat_messages", "chat_context", "web_app_steps",
	"kb_documents", "kb_chunks", "kb_seeded",
}

// seededTables hold rows the migrations insert (the demo orders, the
// ticket counter), which the copy replaces by the source's.
var seededTables = []string{"support_orders", "support_counters", "kb_seeded"}

// dataTables must be empty in the target: db copy fills a new database and
// never merges two.
var dataTables = []string{"support_tickets", "support_handoffs", "chat_sessions", "kb_documents"}

func newDBCopyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "copy --to postgres://… [--from sqlite:PATH]",
		Short: "Copy an SQLite database into a new PostgreSQL database",
		Long: `Copy every order, ticket, hand-off, chat session and knowledge-base document
from one database into another, empty one, in one transaction: a failure leaves
the target as it was. --from defaults to the data directory's database. Both
are first migrated to this agentapp's schema. Stop the processes that write to
the source first; afterwards, start them with --database set to the target.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			from, _ := cmd.Flags().GetString("from")
			to, _ := cmd.Flags().GetString("to")
			if to == "" {
				return usageHint(cmd, errors.New("--to is required: the database to copy into, e.g. --to postgres://agentapp@db.example:5432/agentapp"))
			}
			if from == to {
				return usageHint(cmd, errors.New("--from and --to name the same database"))
			}
			var src *store.Store
			var err error
			if from == "" {
				dir, derr := dataDir(cmd)
				if derr != nil {
					return derr
				}
				src, err = store.Open(dir)
			} else {
				src, err = openURL(cmd, from)
			}
			if err != nil {
				return err
			}
			defer src.Close()
			dst, err := openURL(cmd, to)
			if err != nil {
				return err
			}
			defer dst.Close()
			return copyDB(cmd.Context(), cmd.OutOrStdout(), src, dst)
		},
	}
	cmd.Flags().String("from", "", "database to copy: sqlite:PATH or postgres://… (default the data directory's)")
	cmd.Flags().String("to", "", "empty database to copy into: postgres://… (or sqlite:PATH)")
	return cmd
}

// copyDB copies src into the empty dst.
func copyDB(ctx context.Context, w io.Writer, src, dst *store.Store) error {
	if err := migrateAll(ctx, src); err != nil {
		return fmt.Errorf("the source database: %w", err)
	}
	if err := migrateAll(ctx, dst); err != nil {
		return fmt.Errorf("the target database: %w", err)
	}
	var held []string
	for _, t := range dataTables {
		var n int
		if err := dst.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+t).Scan(&n); err != nil {
			return fmt.Errorf("the target database: %w", err)
		}
		if n > 0 {
			held = append(held, fmt.Sprintf("%d rows in %s", n, t))
		}
	}
	if len(held) > 0 {
		return fmt.Errorf("the target database %s is not empty (%s): db copy fills a new database and never merges two; give an empty one", dst.Path, strings.Join(held, ", "))
	}
	var counts map[string]int
	err := dst.Tx(ctx, func(tx *sql.Tx) error {
		for _, t := range seededTables {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+t); err != nil {
				return err
			}
		}
		var err error
		counts, err = store.CopyTables(ctx, src, tx, copyTables)
		return err
	})
	if err != nil {
		return fmt.Errorf("copy into %s (nothing was written): %w", dst.Path, err)
	}
	k, err := kb.Open(ctx, dst)
	if err != nil {
		return err
	}
	if err := k.RebuildIndex(ctx); err != nil {
		return err
	}
	fmt.Fprintf(w, "Copied %s\n  into %s:\n", describe(src), describe(dst))
	fmt.Fprintf(w, "  %d orders, %d tickets, %d hand-offs, %d chat sessions (%d messages), %d documents (%d chunks)\n",
		counts["support_orders"], counts["support_tickets"], counts["support_handoffs"],
		counts["chat_sessions"], counts["chat_messages"], counts["kb_documents"], counts["kb_chunks"])
	return nil
}
