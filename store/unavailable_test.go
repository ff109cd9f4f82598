package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestSQLiteBusyIsUnavailable (issue 43, item 10): SQLite locked by another
// writer past the busy timeout reads as every outage does, "the database
// is unavailable, try again shortly", with SQLITE_BUSY kept as the cause
// for the logs.
func TestSQLiteBusyIsUnavailable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "busy.db")
	open := func() *sql.DB {
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)&_txlock=immediate")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	a, b := open(), open()
	if _, err := a.ExecContext(ctx, `CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	holder, err := a.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	st := &Store{DB: b}
	err = st.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO t VALUES (1)`)
		return err
	})
	if !IsUnavailable(err) || err.Error() != UnavailableMessage || !strings.Contains(Cause(err), "SQLITE_BUSY") {
		t.Fatalf("a write behind another writer: %v (cause %q); want the outage message", err, Cause(err))
	}
	if other := errors.New("UNIQUE constraint failed"); IsUnavailable(sqliteBusy(other)) {
		t.Error("an ordinary error was taken for an outage")
	}
	if m := MarkUnavailable(errors.New("FATAL: terminating connection due to administrator command (SQLSTATE 57P01)")); !IsUnavailable(m) || m.Error() != UnavailableMessage || !strings.Contains(Cause(m), "57P01") {
		t.Errorf("MarkUnavailable: %v", m)
	}
}
