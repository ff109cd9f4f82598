package kb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentapp/agentapp/store"
)

// RebuildIndex rebuilds the full-text index from the stored chunks, in one
// transaction. `agentapp db copy` copies documents and chunks as rows and
// then calls it, since each backend keeps its index in its own form.
func (k *KB) RebuildIndex(ctx context.Context) error {
	err := k.st.Tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT c.id, c.heading, c.text, d.title
			FROM kb_chunks c JOIN kb_documents d ON d.id = c.doc_id ORDER BY c.id`)
		if err != nil {
			return err
		}
		type chunk struct {
			id                   int64
			heading, text, title string
		}
		var all []chunk
		for rows.Next() {
			var c chunk
			if err := rows.Scan(&c.id, &c.heading, &c.text, &c.title); err != nil {
				rows.Close()
				return err
			}
			all = append(all, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		pg := k.st.Dialect() == store.Postgres
		clear := `DELETE FROM kb_fts`
		if pg {
			clear = `DELETE FROM kb_postings`
		}
		if _, err := tx.ExecContext(ctx, clear); err != nil {
			return err
		}
		for _, c := range all {
			ix := indexRow{doc: indexTokens(c.title), heading: indexTokens(ownHeading(c.heading, c.title)), body: indexTokens(c.text)}
			if !pg {
				if _, err := tx.ExecContext(ctx, sqlInsertIndex, c.id, ix.doc, ix.heading, ix.body); err != nil {
					return err
				}
				continue
			}
			toks, cols := pgTokens(ix)
			if _, err := tx.ExecContext(ctx, `UPDATE kb_chunks SET tokens = ? WHERE id = ?`, len(toks), c.id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, sqlInsertPostingsPG, c.id, toks, cols); err != nil {
				return err
			}
		}
		if pg {
			// Rows copied with their ids leave the identity behind them.
			_, err := tx.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence('kb_chunks', 'id'), COALESCE((SELECT MAX(id) FROM kb_chunks), 0) + 1, false)`)
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rebuild the knowledge-base index: %w", err)
	}
	return nil
}
