package support

// migrations is the support component's schema, applied by store.Migrate.
// Steps are numbered by position: never edit or reorder a released step, only
// append. The demo orders are a step of their own, so they are inserted
// exactly once, and an order an operator later removes stays removed.
var migrations = []string{
	// 1: orders the demo can look up.
	`CREATE TABLE support_orders (
		id     TEXT PRIMARY KEY,
		status TEXT NOT NULL,
		eta    TEXT NOT NULL
	)`,
	// 2: the demo orders.
	`INSERT INTO support_orders (id, status, eta) VALUES
		('A-1024', '已发货', '明天 18:00 前送达'),
		('A-2048', '仓库打包中', '后天发货'),
		('B-0001', '已签收', '已送达，无需等待')`,
	// 3: named counters; "ticket" numbers tickets and hand-offs alike.
	`CREATE TABLE support_counters (
		name  TEXT PRIMARY KEY,
		value INTEGER NOT NULL
	)`,
	// 4: the ticket counter starts at zero, so the first ticket is 0001.
	`INSERT INTO support_counters (name, value) VALUES ('ticket', 0)`,
	// 5: after-sales tickets.
	`CREATE TABLE support_tickets (
		id          TEXT PRIMARY KEY,
		seq         INTEGER NOT NULL UNIQUE,
		subject     TEXT NOT NULL,
		description TEXT NOT NULL,
		status      TEXT NOT NULL,
		session     TEXT NOT NULL,
		created_at  TEXT NOT NULL
	)`,
	// 6: recent createTicket calls, keyed by a hash of session, tool and
	// canonical arguments.
	`CREATE TABLE support_idempotency (
		key        TEXT PRIMARY KEY,
		ticket_id  TEXT NOT NULL REFERENCES support_tickets(id),
		created_ms INTEGER NOT NULL
	)`,
	// 7: expired keys are deleted by age.
	`CREATE INDEX support_idempotency_created ON support_idempotency (created_ms)`,
	// 8: hand-offs to a human agent; their ids come from the ticket counter.
	`CREATE TABLE support_handoffs (
		ticket_id  TEXT PRIMARY KEY,
		seq        INTEGER NOT NULL UNIQUE,
		reason     TEXT NOT NULL,
		transcript TEXT NOT NULL,
		session    TEXT NOT NULL,
		created_at TEXT NOT NULL
	)`,
	// 9: when an operator marked a hand-off resolved ('' while it is
	// open). Plain SQL that PostgreSQL runs as well.
	`ALTER TABLE support_handoffs ADD COLUMN resolved_at TEXT NOT NULL DEFAULT ''`,
	// 10: when an operator marked a ticket resolved ('' while it is open);
	// the ticket's status says "resolved" from then on.
	`ALTER TABLE support_tickets ADD COLUMN resolved_at TEXT NOT NULL DEFAULT ''`,
	// 11: refund requests waiting for an operator's decision (refunds.go);
	// caller is who asked (the MCP caller or the chat session), the only
	// one who may read the request back.
	`CREATE TABLE support_refunds (
		id         TEXT PRIMARY KEY,
		order_id   TEXT NOT NULL,
		reason     TEXT NOT NULL,
		status     TEXT NOT NULL,
		caller     TEXT NOT NULL,
		note       TEXT NOT NULL DEFAULT '',
		created_at TEXT NOT NULL,
		decided_at TEXT NOT NULL DEFAULT ''
	)`,
	// 12: the operator's list shows the newest first.
	`CREATE INDEX support_refunds_created ON support_refunds (created_at)`,
	// 13: refund requests filed as MCP tasks (refund_tasks.go): the task's
	// id is the request's, its caller the only one who may read or cancel
	// it, and it is removed at expires_ms (its TTL). BIGINT: times in ms.
	`CREATE TABLE support_tasks (
		id         TEXT PRIMARY KEY,
		caller     TEXT NOT NULL,
		tool       TEXT NOT NULL,
		created_ms BIGINT NOT NULL,
		ttl_ms     BIGINT NOT NULL,
		expires_ms BIGINT NOT NULL,
		cancelled  INTEGER NOT NULL DEFAULT 0
	)`,
	// 14: tasks/list reads a caller's tasks; expiry deletes by time.
	`CREATE INDEX support_tasks_caller ON support_tasks (caller, created_ms)`,
	// 15:
	`CREATE INDEX support_tasks_expires ON support_tasks (expires_ms)`,
	// 16: recent requestRefund calls, keyed by a hash of caller, order and
	// reason, so a retry returns the first request (refunds.go).
	`CREATE TABLE support_refund_keys (
		key        TEXT PRIMARY KEY,
		refund_id  TEXT NOT NULL,
		created_ms BIGINT NOT NULL
	)`,
}

// postgresMigrations replaces the steps PostgreSQL needs written
// differently, by step number: its INTEGER is 32 bits, too small for a
// time in milliseconds. Portable steps appended to migrations need no
// entry here.
var postgresMigrations = map[int]string{
	6: `CREATE TABLE support_idempotency (
		key        TEXT PRIMARY KEY,
		ticket_id  TEXT NOT NULL REFERENCES support_tickets(id),
		created_ms BIGINT NOT NULL
	)`,
}

// SchemaVersion is the version of the support schema this package
// migrates to, for `agentapp db status`.
func SchemaVersion() int { return len(migrations) }
