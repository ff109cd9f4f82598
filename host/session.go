package host

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/store"
)

// migrations is the chat component's schema, applied by store.Migrate.
// Steps are numbered by position: never edit or reorder a released step,
// only append.
var migrations = []string{
	// 1: one row per conversation. updated_ms orders sessions for
	// --continue; it is an integer so ordering never depends on how a
	// timestamp string was formatted.
	`CREATE TABLE chat_sessions (
		id         TEXT PRIMARY KEY,
		created_at TEXT NOT NULL,
		updated_ms INTEGER NOT NULL
	)`,
	// 2: the messages of each session in order: user messages, assistant
	// turns (with their tool calls as JSON) and tool results.
	`CREATE TABLE chat_messages (
		session_id   TEXT NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
		seq          INTEGER NOT NULL,
		role         TEXT NOT NULL,
		content      TEXT NOT NULL,
		tool_calls   TEXT NOT NULL DEFAULT '',
		tool_call_id TEXT NOT NULL DEFAULT '',
		name         TEXT NOT NULL DEFAULT '',
		created_at   TEXT NOT NULL,
		PRIMARY KEY (session_id, seq)
	)`,
	// 3: --continue looks up the most recently used session.
	`CREATE INDEX chat_sessions_updated ON chat_sessions (updated_ms)`,
	// 4: what the model's view of a session keeps apart from its messages:
	// the summary of the turns folded so far (the messages up to
	// folded_seq are in it; the transcript keeps them for people) and the
	// session's token totals.
	`CREATE TABLE chat_context (
		session_id      TEXT PRIMARY KEY REFERENCES chat_sessions(id) ON DELETE CASCADE,
		summary         TEXT NOT NULL DEFAULT '',
		folded_seq      INTEGER NOT NULL DEFAULT 0,
		folds           INTEGER NOT NULL DEFAULT 0,
		input_tokens    INTEGER NOT NULL DEFAULT 0,
		output_tokens   INTEGER NOT NULL DEFAULT 0,
		calls           INTEGER NOT NULL DEFAULT 0,
		estimated_calls INTEGER NOT NULL DEFAULT 0
	)`,
	// 5: who answers the conversation (states.go): "assistant", "waiting"
	// (a hand-off was asked) or "human" (an operator holds it).
	`ALTER TABLE chat_sessions ADD COLUMN state TEXT NOT NULL DEFAULT 'assistant'`,
	// 6: when the state last changed, in ms: the queue is oldest first.
	`ALTER TABLE chat_sessions ADD COLUMN state_ms BIGINT NOT NULL DEFAULT 0`,
	// 7: the display name of the operator holding the conversation.
	`ALTER TABLE chat_sessions ADD COLUMN operator TEXT NOT NULL DEFAULT ''`,
	// 8: the queue and the held conversations are read by state.
	`CREATE INDEX chat_sessions_state ON chat_sessions (state, state_ms)`,
	// 9: what happened to a conversation outside the model's turns (state
	// changes, operators' and queued customers' messages), read by the
	// streams of every replica in seq order (states.go).
	`CREATE TABLE chat_events (
		seq        INTEGER PRIMARY KEY AUTOINCREMENT,
		session_id TEXT NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
		kind       TEXT NOT NULL,
		data       TEXT NOT NULL,
		created_ms BIGINT NOT NULL
	)`,
	// 10: a customer's stream reads its session's events.
	`CREATE INDEX chat_events_session ON chat_events (session_id, seq)`,
	// 11: old events are deleted by age.
	`CREATE INDEX chat_events_created ON chat_events (created_ms)`,
	// 12: the note of the operator who handed the conversation back,
	// until the assistant's next turn reads it.
	`ALTER TABLE chat_sessions ADD COLUMN handback_note TEXT NOT NULL DEFAULT ''`,
	// 13: who wrote the note.
	`ALTER TABLE chat_sessions ADD COLUMN handback_by TEXT NOT NULL DEFAULT ''`,
	// 14: an answer's token counts ({"inputTokens", "outputTokens",
	// "estimated"} as JSON; '' on other messages and on older answers),
	// so that a reloaded page shows them under the answer as a live one.
	`ALTER TABLE chat_messages ADD COLUMN token_usage TEXT NOT NULL DEFAULT ''`,
}

// postgresMigrations replaces the steps PostgreSQL needs written
// differently: its INTEGER is 32 bits, too small for a time in
// milliseconds.
var postgresMigrations = map[int]string{
	1: `CREATE TABLE chat_sessions (
		id         TEXT PRIMARY KEY,
		created_at TEXT NOT NULL,
		updated_ms BIGINT NOT NULL
	)`,
	4: `CREATE TABLE chat_context (
		session_id      TEXT PRIMARY KEY REFERENCES chat_sessions(id) ON DELETE CASCADE,
		summary         TEXT NOT NULL DEFAULT '',
		folded_seq      BIGINT NOT NULL DEFAULT 0,
		folds           BIGINT NOT NULL DEFAULT 0,
		input_tokens    BIGINT NOT NULL DEFAULT 0,
		output_tokens   BIGINT NOT NULL DEFAULT 0,
		calls           BIGINT NOT NULL DEFAULT 0,
		estimated_calls BIGINT NOT NULL DEFAULT 0
	)`,
	9: `CREATE TABLE chat_events (
		seq        BIGSERIAL PRIMARY KEY,
		session_id TEXT NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
		kind       TEXT NOT NULL,
		data       TEXT NOT NULL,
		created_ms BIGINT NOT NULL
	)`,
}

// Migrate applies the chat component's schema to st, as the first chat
// does; `agentapp db migrate` calls it to prepare a database up front.
func Migrate(ctx context.Context, st *store.Store) error {
	return st.MigrateDialect(ctx, "chat", migrations, postgresMigrations)
}

// SchemaVersion is the version of the chat schema this package migrates
// to, for `agentapp db status`.
func SchemaVersion() int { return len(migrations) }

// sessions keeps conversations in the shared database.
type sessions struct {
	st  *store.Store
	now func() time.Time
	// views keeps the model's view of recent sessions between turns;
	// nil reads every view whole (tests compare the two).
	views *viewCache
	// viewLimit caps the messages of a view: maxViewMessages.
	viewLimit int
	stmts     stmtCache // prepared.go
	eventsPrune
}

// ErrNoSession is wrapped by the error for a --session id that is not in
// the database.
var ErrNoSession = errors.New("no such chat session")

func openSessions(ctx context.Context, st *store.Store, now func() time.Time) (*sessions, error) {
	if st == nil || st.DB == nil {
		return nil, errors.New("host: no open store (call store.Open first)")
	}
	if err := Migrate(ctx, st); err != nil {
		return nil, err
	}
	return &sessions{st: st, now: now, views: newViewCache(), viewLimit: maxViewMessages}, nil
}

// newID returns a fresh session id: the UTC start time, readable in a
// listing, and random bits so two chats started in the same second differ.
func (s *sessions) newID() string {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; fall back to
		// the clock's nanoseconds rather than stop the chat.
		n := s.now().UnixNano()
		b = [3]byte{byte(n), byte(n >> 8), byte(n >> 16)}
	}
	return s.now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// count returns how many messages a session holds and whether it exists.
func (s *sessions) count(ctx context.Context, id string) (int, bool, error) {
	var exists int
	if err := s.st.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM chat_sessions WHERE id = ?`, id).Scan(&exists); err != nil {
		return 0, false, fmt.Errorf("look up chat session %s: %w", id, err)
	}
	if exists == 0 {
		return 0, false, nil
	}
	var n int
	if err := s.st.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM chat_messages WHERE session_id = ?`, id).Scan(&n); err != nil {
		return 0, false, fmt.Errorf("count messages of chat session %s: %w", id, err)
	}
	return n, true, nil
}

// latest returns the id of the most recently used session, or "" when
// there is none.
func (s *sessions) latest(ctx context.Context) (string, error) {
	var id string
	q := `SELECT id FROM chat_sessions ORDER BY updated_ms DESC, rowid DESC LIMIT 1`
	if s.st.Dialect() == store.Postgres {
		// No rowid there; ids begin with their start time.
		q = `SELECT id FROM chat_sessions ORDER BY updated_ms DESC, id DESC LIMIT 1`
	}
	err := s.st.DB.QueryRowContext(ctx, q).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find the latest chat session: %w", err)
	}
	return id, nil
}

// window returns the newest messages of a session that fit in limit,
// oldest first, starting at a user message: a window that began with a tool
// result or with an assistant's tool calls cut from their answers would be
// rejected by providers (and would confuse any model).
func (s *sessions) window(ctx context.Context, id string, limit int) ([]model.Message, error) {
	msgs, _, err := s.transcript(ctx, id, limit, false)
	return msgs, err
}

// transcript is window that, with usage, also returns each message's
// stored token counts (nil but for answers stored with them).
func (s *sessions) transcript(ctx context.Context, id string, limit int, usage bool) ([]model.Message, []*Usage, error) {
	if limit <= 0 {
		return nil, nil, nil
	}
	col := "''"
	if usage {
		col = "token_usage"
	}
	rows, err := s.st.DB.QueryContext(ctx, `SELECT role, content, tool_calls, tool_call_id, name, `+col+`
		FROM chat_messages WHERE session_id = ? ORDER BY seq DESC LIMIT ?`, id, limit)
	if err != nil {
		return nil, nil, fmt.Errorf("read chat session %s: %w", id, err)
	}
	defer rows.Close()
	var msgs []model.Message
	var usages []*Usage
	for rows.Next() {
		var m model.Message
		var role, calls, us string
		if err := rows.Scan(&role, &m.Content, &calls, &m.ToolCallID, &m.Name, &us); err != nil {
			return nil, nil, fmt.Errorf("read chat session %s: %w", id, err)
		}
		m.Role = model.Role(role)
		if calls != "" {
			if err := json.Unmarshal([]byte(calls), &m.ToolCalls); err != nil {
				return nil, nil, fmt.Errorf("read chat session %s: a stored tool call is corrupt: %w", id, err)
			}
		}
		var u *Usage
		if us != "" {
			u = new(Usage)
			if json.Unmarshal([]byte(us), u) != nil {
				u = nil // counts are for display; a bad one is left out, not fatal
			}
		}
		msgs = append(msgs, m)
		usages = append(usages, u)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read chat session %s: %w", id, err)
	}
	slices.Reverse(msgs)
	slices.Reverse(usages)
	for len(msgs) > 0 && msgs[0].Role != model.RoleUser {
		msgs, usages = msgs[1:], usages[1:]
	}
	if !usage {
		usages = nil
	}
	return msgs, usages, nil
}

// appendMessages stores the messages of one finished turn at the end of a
// session, creating the session on its first turn. It is one transaction:
// a crash leaves either the whole turn or none of it. Turns that end
// together are committed together (store.GroupTx).
func (s *sessions) appendMessages(ctx context.Context, id string, msgs []model.Message) error {
	return s.appendTurn(ctx, id, msgs, Usage{})
}

// The statements of storing a turn.
const (
	touchSessionQuery = `INSERT INTO chat_sessions (id, created_at, updated_ms) VALUES (?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET updated_ms = excluded.updated_ms`
	nextSeqQuery = `SELECT COALESCE(MAX(seq), 0) + 1 FROM chat_messages WHERE session_id = ?`
)

// insertQuery is the INSERT of n messages; "" for none.
func insertQuery(n int) string {
	if n <= 0 {
		return ""
	}
	return `INSERT INTO chat_messages (session_id, seq, role, content, tool_calls, tool_call_id, name, created_at, token_usage) VALUES ` +
		strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?), ", n-1) + "(?, ?, ?, ?, ?, ?, ?, ?, ?)"
}

// insertBatch is the most messages one INSERT statement stores: 9
// parameters each stays far below SQLite's and PostgreSQL's limits.
const insertBatch = 64

// appendTurn is appendMessages that also adds the turn's usage to the
// session's totals in the same transaction (a turn's usage is stored
// with it, or, when storing fails, on its own by keepUsage).
func (s *sessions) appendTurn(ctx context.Context, id string, msgs []model.Message, u Usage) error {
	return s.appendTurnThen(ctx, id, msgs, u, nil)
}

// appendTurnThen is appendTurn that also runs then, when set, in the
// turn's transaction (a hand-off's state change).
func (s *sessions) appendTurnThen(ctx context.Context, id string, msgs []model.Message, u Usage, then func(*sql.Tx) error) error {
	// The transaction's statements are prepared before it begins (see
	// prepared.stmt); one that cannot be is run unprepared.
	queries := []string{touchSessionQuery, nextSeqQuery, insertQuery(min(len(msgs), insertBatch)), insertQuery(len(msgs) % insertBatch)}
	if len(u.Calls) > 0 {
		queries = append(queries, addUsageQuery)
	}
	for _, q := range queries {
		if q != "" {
			_, _ = s.prepare(ctx, q) // an error shows when the statement runs
		}
	}
	now := s.now()
	// The turn's tokens go with its answer: the last assistant message
	// without tool calls.
	answer, usage := -1, ""
	if u.InputTokens > 0 || u.OutputTokens > 0 {
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == model.RoleAssistant && len(msgs[i].ToolCalls) == 0 {
				b, err := json.Marshal(Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, Estimated: u.Estimated})
				if err != nil {
					return fmt.Errorf("save chat session %s: %w", id, err)
				}
				answer, usage = i, string(b)
				break
			}
		}
	}
	err := s.st.GroupTx(ctx, func(sqlTx *sql.Tx) error {
		tx := s.prepared(sqlTx)
		if err := s.insertMessages(ctx, tx, id, msgs, now, answer, usage); err != nil {
			return err
		}
		if len(u.Calls) > 0 {
			if err := addUsage(ctx, tx, id, u); err != nil {
				return err
			}
		}
		if then != nil {
			return then(sqlTx)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save chat session %s: %w", id, err)
	}
	return nil
}

// insertMessages stores msgs at the end of session id in tx, creating the
// session when it is not stored.
// insertMessages stores msgs after the session's last message; the one at
// index answer (none when -1) carries usage, its turn's tokens as JSON.
func (s *sessions) insertMessages(ctx context.Context, tx prepared, id string, msgs []model.Message, now time.Time, answer int, usage string) error {
	stamp := now.UTC().Format(time.RFC3339)
	if _, err := tx.ExecContext(ctx, touchSessionQuery, id, stamp, now.UnixMilli()); err != nil {
		return err
	}
	var next int
	if err := tx.QueryRowContext(ctx, nextSeqQuery, id).Scan(&next); err != nil {
		return err
	}
	// One statement per batch of messages rather than one per
	// message: fewer statements to run.
	var args []any
	for start := 0; start < len(msgs); start += insertBatch {
		batch := msgs[start:min(len(msgs), start+insertBatch)]
		args = args[:0]
		for i, m := range batch {
			calls := ""
			if len(m.ToolCalls) > 0 {
				b, err := json.Marshal(storableCalls(m.ToolCalls))
				if err != nil {
					return err
				}
				calls = string(b)
			}
			mu := ""
			if start+i == answer {
				mu = usage
			}
			args = append(args, id, next+start+i, string(m.Role), m.Content, calls, m.ToolCallID, m.Name, stamp, mu)
		}
		if _, err := tx.ExecContext(ctx, insertQuery(len(batch)), args...); err != nil {
			return err
		}
	}
	return nil
}

// storableCalls returns calls whose arguments are valid JSON: a model can
// send broken arguments (the loop feeds the parse error back to it), and
// they are kept as a JSON string rather than making the turn unsavable.
func storableCalls(calls []model.ToolCall) []model.ToolCall {
	out := slices.Clone(calls)
	for i, c := range out {
		if len(c.Arguments) > 0 && !json.Valid(c.Arguments) {
			b, _ := json.Marshal(string(c.Arguments))
			out[i].Arguments = b
		}
	}
	return out
}
