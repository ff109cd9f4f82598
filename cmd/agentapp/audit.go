package main

import (
	"log/slog"
	"strings"

	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/store"
)

// openAudit opens the guards' audit trail. On PostgreSQL it is the shared
// database's audit_log table, so that replicas behind a load balancer keep
// one trail, unless AGENT_AUDIT_LOG names a file, which then wins; on
// SQLite it is the file at *where. *where is updated to say where the
// trail went, for the banner.
func openAudit(st *store.Store, where *string, getenv func(string) string, logger *slog.Logger) *guard.Audit {
	if st.Dialect() == store.Postgres && strings.TrimSpace(getenv(guard.EnvAuditLog)) == "" {
		*where = "table " + store.AuditTable + " of the database " + st.Path
		return guard.NewAuditTo(st, *where, logger)
	}
	return guard.NewAudit(*where, logger)
}
