package kb

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"github.com/agentapp/agentapp/store"
	"io/fs"
	"path"
	"sort"
	"time"
)

// demoFS holds the demo FAQ: company policies of the customer-service demo
// (travel and lodging, leave, returns and refunds, IT equipment).
//
//go:embed demo/*.md
var demoFS embed.FS

// demoSeedName is the kb_seeded row that records the demo FAQ was ingested.
const demoSeedName = "demo-faq"

// DemoFiles returns the file names and contents of the embedded demo FAQ,
// sorted by name.
func DemoFiles() (map[string][]byte, error) {
	entries, err := fs.ReadDir(demoFS, "demo")
	if err != nil {
		return nil, fmt.Errorf("read the embedded demo FAQ: %w", err)
	}
	out := make(map[string][]byte, len(entries))
	for _, e := range entries {
		b, err := demoFS.ReadFile(path.Join("demo", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read the embedded demo FAQ: %w", err)
		}
		out[e.Name()] = b
	}
	return out, nil
}

// SeedDemo ingests the embedded demo FAQ the first time it runs on a
// database and records that it did, so a later `kb rm` of a demo document
// is respected rather than undone at the next start. The check and the
// ingestion are one transaction: two processes starting together seed once.
// The seeding is reported on the logger given with WithLogger.
func (k *KB) SeedDemo(ctx context.Context) error {
	// Nearly every start finds the seed recorded: a read answers that
	// without chunking the files or taking the write lock.
	var at string
	err := k.st.DB.QueryRowContext(ctx, `SELECT seeded_at FROM kb_seeded WHERE name = ?`, demoSeedName).Scan(&at)
	if err == nil {
		return nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("seed the demo FAQ into the knowledge base: %w", err)
	}
	files, err := DemoFiles()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	preps := make([]*prepared, 0, len(names))
	for _, n := range names {
		p, err := prepare(n, files[n])
		if err != nil {
			return fmt.Errorf("embedded demo FAQ: %w", err)
		}
		preps = append(preps, p)
	}
	seeded := false
	err = k.st.Tx(ctx, func(tx *sql.Tx) error {
		if k.st.Dialect() == store.Postgres {
			// Replicas starting together seed once: the others wait here,
			// then find the seed recorded.
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(?, 2))`, demoSeedName); err != nil {
				return err
			}
		}
		var at string
		err := tx.QueryRowContext(ctx, `SELECT seeded_at FROM kb_seeded WHERE name = ?`, demoSeedName).Scan(&at)
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		it, err := k.ingestTx(ctx, tx)
		if err != nil {
			return err
		}
		now := time.Now()
		for _, p := range preps {
			if _, err := it.storePrepared(ctx, p, now); err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO kb_seeded (name, seeded_at) VALUES (?, ?)`,
			demoSeedName, now.UTC().Format(time.RFC3339Nano))
		if err != nil {
			return err
		}
		if err := k.st.Notify(ctx, tx, ChangeChannel); err != nil {
			return err
		}
		seeded = true
		return nil
	})
	if err != nil {
		return fmt.Errorf("seed the demo FAQ into the knowledge base: %w", err)
	}
	if seeded {
		k.logger.Info("knowledge base seeded with the demo FAQ", "documents", len(preps))
	}
	return nil
}
