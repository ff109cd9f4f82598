package web

// What a step's view needs, kept with the step: its server, its ui://
// resource and the tool's result as the server sent it. A reload then
// shows the view even when the server is gone (the step names it, and says
// the view is unavailable) and with the result the view got live, which
// the text the model saw may have dropped (structuredContent, images). The
// view's HTML is not kept: it is read from its server each time, as hosts
// do, and a view whose server is down is not shown.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentapp/agentapp/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// appStepMigrations is the "webapps" component's schema. Steps are
// numbered by position: never edit or reorder a released step, only
// append.
var appStepMigrations = []string{
	// 1: one row per step of a stored turn whose tool linked a view, in
	// the order of the steps (seq, per session). result is the
	// CallToolResult's JSON, or '' when it was over maxStoredResult.
	`CREATE TABLE web_app_steps (
		session_id   TEXT NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
		seq          INTEGER NOT NULL,
		call_id      TEXT NOT NULL,
		tool         TEXT NOT NULL,
		server       TEXT NOT NULL,
		resource_uri TEXT NOT NULL,
		result       TEXT NOT NULL DEFAULT '',
		created_at   TEXT NOT NULL,
		PRIMARY KEY (session_id, seq)
	)`,
	// 2: where the operators were last seen, shared by the replicas so
	// that one does not release a conversation whose operator another
	// sees (absent.go). id is "s:" and an operator stream's random id
	// (seen_at: its last heartbeat, or when it closed), or "a:" and a
	// held session's id (seen_at: its holder's last action). Unix ms.
	`CREATE TABLE web_operator_presence (
		id         TEXT PRIMARY KEY,
		session_id TEXT NOT NULL DEFAULT '',
		seen_at    BIGINT NOT NULL
	)`,
}

// MigrateAppSteps applies the web's schema (the views kept with their
// steps, the operators' presence) to st (after the chat component's, which it refers to); New calls it,
// and `agentapp db migrate` does up front.
func MigrateAppSteps(ctx context.Context, st *store.Store) error {
	return st.Migrate(ctx, "webapps", appStepMigrations)
}

// AppStepsSchemaVersion is the version of the "webapps" schema this
// package migrates to.
func AppStepsSchemaVersion() int { return len(appStepMigrations) }

const (
	// maxStoredResult bounds the result kept with a step. Over it the
	// step keeps its server and resource without the result, and a
	// reload gives the view the result rebuilt from the text the model
	// saw (resultOfOutput), as before results were kept.
	maxStoredResult = 1 << 20
	// maxTurnResults bounds the results a turn holds until their steps
	// end (calls running at once).
	maxTurnResults = 64
	// maxHistoryAppSteps bounds the rows a history reads: more than the
	// view steps a history window can hold.
	maxHistoryAppSteps = 2000
	// appStepsTimeout bounds storing a turn's view steps.
	appStepsTimeout = 10 * time.Second
)

// appStep is one row of web_app_steps.
type appStep struct {
	CallID, Tool, Server, URI string
	// Result is the CallToolResult as the server sent it; nil when it was
	// over maxStoredResult or not seen.
	Result json.RawMessage
}

// viewResults keeps, by call id, the results a turn's tools returned
// (host.Turn.OnToolResult) until their steps end.
type viewResults struct {
	mu   sync.Mutex
	byID map[string]json.RawMessage
}

// keep records res for the call id. Results over
// maxStoredResult are recorded as nil: known, not kept.
func (v *viewResults) keep(id string, res *mcp.CallToolResult) {
	if id == "" || res == nil {
		return
	}
	raw, err := json.Marshal(res)
	if err != nil || len(raw) > maxStoredResult {
		raw = nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.byID == nil {
		v.byID = map[string]json.RawMessage{}
	}
	if _, ok := v.byID[id]; !ok && len(v.byID) >= maxTurnResults {
		return
	}
	v.byID[id] = raw
}

// take returns, and forgets, the result of call id.
func (v *viewResults) take(id string) json.RawMessage {
	v.mu.Lock()
	defer v.mu.Unlock()
	raw := v.byID[id]
	delete(v.byID, id)
	return raw
}

// keepAppSteps stores the view steps of a turn that was stored, after the
// steps kept before.
func (s *Server) keepAppSteps(ctx context.Context, session string, steps []appStep) error {
	if len(steps) == 0 {
		return nil
	}
	now := s.clock.Now().UTC().Format(time.RFC3339Nano)
	return s.h.Store().Tx(ctx, func(tx *sql.Tx) error {
		var last sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT MAX(seq) FROM web_app_steps WHERE session_id = ?`, session).Scan(&last); err != nil {
			return err
		}
		seq := last.Int64
		for _, st := range steps {
			seq++
			if _, err := tx.ExecContext(ctx, `INSERT INTO web_app_steps (session_id, seq, call_id, tool, server, resource_uri, result, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				session, seq, st.CallID, st.Tool, st.Server, st.URI, string(st.Result), now); err != nil {
				return err
			}
		}
		return nil
	})
}

// appStepsOf reads the latest view steps kept for a session, by call id
// and tool, oldest first.
func (s *Server) appStepsOf(ctx context.Context, session string) (map[string][]appStep, error) {
	rows, err := s.h.Store().DB.QueryContext(ctx, `SELECT call_id, tool, server, resource_uri, result FROM web_app_steps WHERE session_id = ? ORDER BY seq DESC LIMIT ?`, session, maxHistoryAppSteps)
	if err != nil {
		return nil, fmt.Errorf("read the views of session %s: %w", session, err)
	}
	defer rows.Close()
	var list []appStep
	for rows.Next() {
		var st appStep
		var result string
		if err := rows.Scan(&st.CallID, &st.Tool, &st.Server, &st.URI, &result); err != nil {
			return nil, fmt.Errorf("read the views of session %s: %w", session, err)
		}
		if result != "" {
			st.Result = json.RawMessage(result)
		}
		list = append(list, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the views of session %s: %w", session, err)
	}
	out := map[string][]appStep{}
	for i := len(list) - 1; i >= 0; i-- {
		k := appStepKey(list[i].CallID, list[i].Tool)
		out[k] = append(out[k], list[i])
	}
	return out, nil
}

func appStepKey(callID, tool string) string { return callID + "\x00" + tool }

// withStoredUI sets the view of a history step from the rows kept for its
// session: the history is matched from its newest step back, each step
// taking the newest row of its call id and tool left, since only stored
// turns keep rows and call ids repeat across turns. A step without a row
// (from before rows were kept) gets its view from the running servers.
func (s *Server) withStoredUI(se *StepEvent, kept map[string][]appStep) {
	k := appStepKey(se.ID, se.Tool)
	q := kept[k]
	if len(q) == 0 {
		s.withUI(se)
		return
	}
	row := q[len(q)-1]
	kept[k] = q[:len(q)-1]
	if se.Server == "" {
		se.Server = row.Server // the server is gone; the step still names it
	}
	if s.opts.SandboxOrigin == "" {
		return
	}
	se.UI = &StepUI{ResourceURI: row.URI}
	switch se.State {
	case "ok":
		if res, ok := decodeResult(row.Result); ok {
			se.UI.Result = res
			return
		}
		se.UI.Result = resultOfOutput(se.Output)
	case "denied":
		se.UI.Result = resultOfOutput(se.Output)
	case "error":
		se.UI.Result = toolResult(nil, errors.New(se.Error))
	}
}

// decodeResult reads a kept CallToolResult.
func decodeResult(raw json.RawMessage) (map[string]any, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	var res map[string]any
	if json.Unmarshal(raw, &res) != nil || res == nil {
		return nil, false
	}
	return res, true
}
