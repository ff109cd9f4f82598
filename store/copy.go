package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// copyBatch is how many rows one INSERT of CopyTables carries; it keeps a
// statement's parameters well under PostgreSQL's limit of 65535.
const copyBatch = 200

// CopyTables copies every row of the named tables from src into tx (a
// transaction on another store), in order, column by column as src names
// them. Both databases must be migrated to the same schema; the target
// tables should be empty. It returns the number of rows copied per table.
func CopyTables(ctx context.Context, src *Store, tx *sql.Tx, tables []string) (map[string]int, error) {
	counts := map[string]int{}
	for _, table := range tables {
		n, err := copyTable(ctx, src, tx, table)
		if err != nil {
			return counts, fmt.Errorf("copy table %s: %w", table, err)
		}
		counts[table] = n
	}
	return counts, nil
}

func copyTable(ctx context.Context, src *Store, tx *sql.Tx, table string) (int, error) {
	rows, err := src.DB.QueryContext(ctx, `SELECT * FROM `+table)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	var args []any
	n := 0
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		k := len(args) / len(cols)
		q := `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES ` +
			strings.TrimSuffix(strings.Repeat(row+", ", k), ", ")
		_, err := tx.ExecContext(ctx, q, args...)
		args = args[:0]
		return err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		args = append(args, vals...)
		n++
		if n%copyBatch == 0 {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return n, err
	}
	return n, flush()
}
