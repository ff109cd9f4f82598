package support

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// A refund request filed as an MCP task: the task is "working" with the
// status message "waiting for an operator" until an operator decides,
// then "completed" with the request (and the decision) as its result. It
// lives in the database, so it outlives the process and any replica
// sharing the database answers for it, and is removed once its TTL has
// passed since it was created. Only its caller can read or cancel it.

// The statuses of a task (MCP 2025-11-25).
const (
	TaskWorking   = "working"
	TaskCompleted = "completed"
	TaskCancelled = "cancelled"
)

// RefundWithdrawn is the state of a request whose caller cancelled its
// task before an operator decided.
const RefundWithdrawn = "withdrawn"

// RefundPollInterval is how often a client is told to poll a refund task:
// a person decides, so seconds do not matter.
const RefundPollInterval = 5 * time.Second

// MaxTaskList caps the tasks RefundTasks returns.
const MaxTaskList = 200

// ErrTaskEnded is the error of cancelling a task that has ended.
var ErrTaskEnded = errors.New("the task has ended already")

// RefundTask is a refund request seen as a task.
type RefundTask struct {
	ID            string
	Status        string
	StatusMessage string
	Created       time.Time
	Updated       time.Time
	TTL           time.Duration
	PollInterval  time.Duration
	// Refund is the request; the task's result once it is completed.
	Refund *Refund
}

// StartRefundTask files a refund request of caller (the tool's raw
// arguments, as requestRefund takes them) as a task kept for ttl.
func (s *Service) StartRefundTask(ctx context.Context, caller string, args json.RawMessage, ttl time.Duration) (*RefundTask, error) {
	if caller == "" {
		return nil, errors.New("a task needs a caller to belong to")
	}
	orderID, reason, err := refundArgs(ctx, args)
	if err != nil {
		return nil, err
	}
	s.expireTasks(ctx)
	// The request and its task are one transaction: a failure between two
	// would leave a pending request whose caller was told it failed, and
	// the retry would file a second one.
	var r *Refund
	err = s.write(ctx, func(tx *sql.Tx) error {
		var err error
		if r, err = s.fileRefund(ctx, tx, caller, orderID, reason); err != nil {
			return err
		}
		// The task dates from its request; a retry's request has its task
		// already (kept as it is) unless the task expired, when a new one
		// starts now.
		created := s.now()
		if c, err := time.Parse(time.RFC3339Nano, r.CreatedAt); err == nil && c.Add(ttl).After(created) {
			created = c
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO support_tasks (id, caller, tool, created_ms, ttl_ms, expires_ms) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO NOTHING`,
			r.RefundID, caller, "requestRefund", created.UnixMilli(), ttl.Milliseconds(), created.Add(ttl).UnixMilli())
		return err
	})
	if err != nil {
		return nil, refundError(err)
	}
	return s.RefundTask(ctx, caller, r.RefundID)
}

// RefundTask returns caller's task id; a task of another caller, an
// expired one and an unknown id are all ErrNotFound.
func (s *Service) RefundTask(ctx context.Context, caller, id string) (*RefundTask, error) {
	var (
		owner                 string
		createdMS, ttlMS, exp int64
		cancelled             int
	)
	err := s.st.DB.QueryRowContext(ctx, `SELECT caller, created_ms, ttl_ms, expires_ms, cancelled FROM support_tasks WHERE id = ?`, id).
		Scan(&owner, &createdMS, &ttlMS, &exp, &cancelled)
	if errors.Is(err, sql.ErrNoRows) || err == nil && (owner != caller || exp <= s.now().UnixMilli()) {
		return nil, fmt.Errorf("%w: no task of yours has the id %q (tasks are removed when their TTL has passed)", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("read task %s: %w", id, err)
	}
	q, err := s.refund(ctx, id)
	if err != nil {
		return nil, err
	}
	return refundTask(&q.Refund, createdMS, ttlMS, cancelled != 0), nil
}

func refundTask(r *Refund, createdMS, ttlMS int64, cancelled bool) *RefundTask {
	t := &RefundTask{
		ID:           r.RefundID,
		Created:      time.UnixMilli(createdMS).UTC(),
		TTL:          time.Duration(ttlMS) * time.Millisecond,
		PollInterval: RefundPollInterval,
		Refund:       r,
	}
	t.Updated = t.Created
	if d, err := time.Parse(time.RFC3339Nano, r.DecidedAt); err == nil {
		t.Updated = d
	}
	switch {
	case cancelled:
		t.Status, t.StatusMessage = TaskCancelled, "the caller withdrew the request"
	case r.Status == RefundPending:
		t.Status, t.StatusMessage = TaskWorking, RefundWaiting
	default:
		t.Status, t.StatusMessage = TaskCompleted, r.Message
	}
	return t
}

// RefundTasks lists caller's tasks that have not expired, newest first,
// at most MaxTaskList.
func (s *Service) RefundTasks(ctx context.Context, caller string) ([]*RefundTask, error) {
	ts, _, err := s.RefundTasksPage(ctx, caller, "")
	return ts, err
}

// ErrBadCursor is RefundTasksPage's error for a cursor it did not issue.
var ErrBadCursor = errors.New("invalid cursor")

// RefundTasksPage lists caller's tasks that have not expired, newest first,
// MaxTaskList at most, from cursor ("" for the first page); next is the
// cursor of the page after ("" after the last). A cursor names the last
// task of its page (time and id), so tasks filed meanwhile do not shift
// the pages after it.
func (s *Service) RefundTasksPage(ctx context.Context, caller, cursor string) (tasks []*RefundTask, next string, err error) {
	afterMS, afterID := int64(math.MaxInt64), ""
	if cursor != "" {
		if afterMS, afterID, err = decodeTaskCursor(cursor); err != nil {
			return nil, "", err
		}
	}
	s.expireTasks(ctx)
	rows, err := s.st.DB.QueryContext(ctx, `SELECT t.created_ms, t.ttl_ms, t.cancelled,
			r.id, r.order_id, r.reason, r.status, r.note, r.created_at, r.decided_at
		FROM support_tasks t JOIN support_refunds r ON r.id = t.id
		WHERE t.caller = ? AND t.expires_ms > ? AND (t.created_ms < ? OR (t.created_ms = ? AND t.id < ?))
		ORDER BY t.created_ms DESC, t.id DESC LIMIT ?`, caller, s.now().UnixMilli(), afterMS, afterMS, afterID, MaxTaskList+1)
	if err != nil {
		return nil, "", fmt.Errorf("list tasks: %w", err)
	}
	defer rows.Close()
	var out []*RefundTask
	for rows.Next() {
		var (
			createdMS, ttlMS int64
			cancelled        int
			r                Refund
		)
		if err := rows.Scan(&createdMS, &ttlMS, &cancelled, &r.RefundID, &r.OrderID, &r.Reason, &r.Status, &r.Note, &r.CreatedAt, &r.DecidedAt); err != nil {
			return nil, "", fmt.Errorf("list tasks: %w", err)
		}
		r.Message = refundMessage(r.Status, r.Note)
		out = append(out, refundTask(&r, createdMS, ttlMS, cancelled != 0))
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("list tasks: %w", err)
	}
	if len(out) > MaxTaskList {
		out = out[:MaxTaskList]
		last := out[len(out)-1]
		next = encodeTaskCursor(last.Created.UnixMilli(), last.ID)
	}
	return out, next, nil
}

// A task cursor is "t1:" and the base64 of the last task's creation time
// in ms and its id, joined by a colon.
const taskCursorPrefix = "t1:"

func encodeTaskCursor(createdMS int64, id string) string {
	return taskCursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(createdMS, 10)+":"+id))
}

func decodeTaskCursor(c string) (createdMS int64, id string, err error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(c, taskCursorPrefix))
	ms, id, ok := strings.Cut(string(b), ":")
	if err == nil && ok && strings.HasPrefix(c, taskCursorPrefix) && id != "" && len(id) <= 64 {
		if createdMS, err = strconv.ParseInt(ms, 10, 64); err == nil {
			return createdMS, id, nil
		}
	}
	return 0, "", fmt.Errorf("%w %q", ErrBadCursor, c)
}

// CancelRefundTask withdraws caller's pending request and cancels its
// task. A task that has ended is ErrTaskEnded.
func (s *Service) CancelRefundTask(ctx context.Context, caller, id string) (*RefundTask, error) {
	if _, err := s.RefundTask(ctx, caller, id); err != nil {
		return nil, err
	}
	stamp := s.now().UTC().Format(time.RFC3339Nano)
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE support_refunds SET status = ?, decided_at = ? WHERE id = ? AND status = ?`, RefundWithdrawn, stamp, id, RefundPending)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrTaskEnded
		}
		_, err = tx.ExecContext(ctx, `UPDATE support_tasks SET cancelled = 1 WHERE id = ? AND caller = ?`, id, caller)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrTaskEnded) {
			return nil, fmt.Errorf("%w: task %s is not working (an operator decided the request)", ErrTaskEnded, id)
		}
		return nil, fmt.Errorf("cancel task %s: %w", id, err)
	}
	return s.RefundTask(ctx, caller, id)
}

// expireTasks removes the tasks whose TTL has passed (the requests stay,
// for the operator). A failure only delays the removal.
func (s *Service) expireTasks(ctx context.Context) {
	_ = s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM support_tasks WHERE expires_ms <= ?`, s.now().UnixMilli())
		return err
	})
}
