package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// Secret returns the database's secret called name: 32 random bytes made
// the first time any process asks for it and kept in the meta table, so
// that every process on the database (every replica on PostgreSQL) gets
// the same bytes. It signs what a server hands a client to bring back
// (the MCP requestState), which any replica must then accept.
func (s *Store) Secret(ctx context.Context, name string) ([]byte, error) {
	key := "secret:" + name
	fresh := make([]byte, 32)
	rand.Read(fresh)
	// Insert-if-absent, then read: two processes racing both read the
	// winner's bytes.
	if _, err := s.DB.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`, key, hex.EncodeToString(fresh)); err != nil {
		return nil, fmt.Errorf("store: keeping the secret %s: %w", name, err)
	}
	var value string
	if err := s.DB.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&value); err != nil {
		return nil, fmt.Errorf("store: reading the secret %s: %w", name, err)
	}
	b, err := hex.DecodeString(value)
	if err != nil || len(b) < 16 {
		return nil, fmt.Errorf("store: the secret %s in the meta table is damaged; delete its row to make a new one", name)
	}
	return b, nil
}
