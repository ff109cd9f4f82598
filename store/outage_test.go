package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/store/storetest"
)

// TestPostgresAdminShutdownIsUnavailable (issue 43, item 10): a connection
// the server terminates (FATAL 57P01, as on a restart or failover) fails
// the next statement with the one outage message, not the server's raw
// text; the cause is kept for the logs, and the store works again after.
func TestPostgresAdminShutdownIsUnavailable(t *testing.T) {
	db := storetest.NewPostgres(t)
	ctx := context.Background()
	st, err := store.OpenURL(ctx, db.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.DB.SetMaxOpenConns(1)
	var pid int
	if err := st.DB.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	admin, err := store.OpenURL(ctx, db.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.DB.ExecContext(ctx, `SELECT pg_terminate_backend(?)`, pid); err != nil {
		t.Fatal(err)
	}
	var one int
	err = st.DB.QueryRowContext(ctx, `SELECT 1`).Scan(&one)
	if err == nil {
		t.Skip("database/sql retried the terminated connection on a fresh one; nothing to see")
	}
	if !store.IsUnavailable(err) || err.Error() != store.UnavailableMessage || !strings.Contains(store.Cause(err), "57P01") {
		t.Fatalf("a statement on a terminated connection: %v (cause %q); want the outage message", err, store.Cause(err))
	}
	if err := st.DB.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		t.Errorf("the next statement: %v; want the pool to reconnect", err)
	}
}
