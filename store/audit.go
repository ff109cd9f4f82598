package store

import (
	"context"
	"fmt"
	"time"
)

// AuditTable is where AppendAudit writes, named for people who read the
// trail with SQL.
const AuditTable = "audit_log"

// MaxAuditRecord bounds one audit record; the guards' events are short
// previews, so anything longer is a bug, not something to store.
const MaxAuditRecord = 64 << 10

// AppendAudit adds one record of the guards' audit trail (a JSON object)
// to the audit_log table. Replicas on one PostgreSQL share the trail, which
// a file per machine could not give them.
func (s *Store) AppendAudit(ctx context.Context, at time.Time, event string, record []byte) error {
	if len(record) > MaxAuditRecord {
		return fmt.Errorf("audit record of %d bytes is over the %d-byte limit", len(record), MaxAuditRecord)
	}
	_, err := s.DB.ExecContext(ctx, `INSERT INTO audit_log (at_ms, event, record) VALUES (?, ?, ?)`,
		at.UnixMilli(), event, string(record))
	return err
}

// AuditRecord is one row of the audit trail.
type AuditRecord struct {
	At     time.Time
	Event  string
	Record string // the JSON object, as written
}

// RecentAudit returns the newest n records (at most 1000), newest first.
func (s *Store) RecentAudit(ctx context.Context, n int) ([]AuditRecord, error) {
	if n <= 0 || n > 1000 {
		n = 1000
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT at_ms, event, record FROM audit_log ORDER BY id DESC LIMIT ?`, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AuditRecord
	for rows.Next() {
		var ms int64
		var r AuditRecord
		if err := rows.Scan(&ms, &r.Event, &r.Record); err != nil {
			return nil, err
		}
		r.At = time.UnixMilli(ms).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}
