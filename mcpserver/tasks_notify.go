package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Task-status notifications (2025-11-25): when a task a session created
// changes status (typically a refund decided by an operator in `agentapp
// web`, another process) the session is sent notifications/tasks/status
// with the task, if it has a standing channel for it: its stdio
// connection, or an open GET event stream on HTTP. A session without one
// learns by polling, as before. (At 2026-07-28 the tasks extension sends
// its notifications on a subscriptions/listen stream, which this server
// does not offer.)
//
// The Go SDK cannot send a notification it does not know, so the bytes go
// out through the transport: lineConn's writer, or the GET stream's
// response writer, which the SDK writes one whole event at a time.
//
// One watcher goroutine runs while tasks are watched. It waits for the
// backend's change signal (TaskWaiter: PostgreSQL LISTEN/NOTIFY, SQLite's
// change counter) or at most watchIdle, and re-reads the watched tasks.

// statusMethod is the notification's method.
const statusMethod = "notifications/tasks/status"

// Bounds of the watching.
const (
	maxWatchedTasks = 10000           // tasks watched at once; more are not watched
	maxReadPerRound = 500             // tasks re-read per round
	watchIdle       = 2 * time.Second // a round at least this often
	watchRead       = 5 * time.Second // bounds one round's reads
	watchLimit      = 24 * time.Hour  // a task is watched no longer than this
)

// taskSink writes one JSON-RPC message (without line ending) to a session.
type taskSink struct {
	write func(msg []byte) error
}

// watchedTask is a task whose status changes its session hears of.
type watchedTask struct {
	session, caller, id, status string
	until                       time.Time
}

// taskNotifier keeps the sessions' channels and the watched tasks.
type taskNotifier struct {
	mu      sync.Mutex
	sinks   map[string][]*taskSink // session key ("mcp:" + id) → its channels
	watched []*watchedTask
	running bool               // the watcher goroutine runs
	cancel  context.CancelFunc // ends the watcher's current wait
}

// addSink registers write as a channel of session and returns the func
// that removes it. endsSession: the session ends with this channel (stdio),
// so its watched tasks are forgotten then; an HTTP session may open
// another GET stream, and its tasks are forgotten when it ends.
func (n *taskNotifier) addSink(session string, write func([]byte) error, endsSession bool) func() {
	sink := &taskSink{write: write}
	n.mu.Lock()
	if n.sinks == nil {
		n.sinks = map[string][]*taskSink{}
	}
	n.sinks[session] = append(n.sinks[session], sink)
	n.mu.Unlock()
	return func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		list := slices.DeleteFunc(n.sinks[session], func(s *taskSink) bool { return s == sink })
		if len(list) == 0 {
			delete(n.sinks, session)
		} else {
			n.sinks[session] = list
		}
		if endsSession {
			n.forgetLocked(session)
		}
	}
}

// forget drops the watched tasks of session (it ended).
func (n *taskNotifier) forget(session string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.forgetLocked(session)
}

func (n *taskNotifier) forgetLocked(session string) {
	n.watched = slices.DeleteFunc(n.watched, func(w *watchedTask) bool { return w.session == session })
	if len(n.watched) == 0 && n.cancel != nil {
		n.cancel() // the watcher ends now rather than after its wait
	}
}

// watchTask has session hear of t's status changes (t is caller's). The
// watcher starts if it is not running.
func (s *Server) watchTask(session, caller string, t *Task) {
	if session == "" || t.terminal() {
		return
	}
	n := &s.taskNotes
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.watched) >= maxWatchedTasks {
		return // it is still polled; only the notification is missed
	}
	until := time.Now().Add(min(cmpDuration(t.TTL, watchLimit), watchLimit))
	n.watched = append(n.watched, &watchedTask{session: session, caller: caller, id: t.ID, status: t.Status, until: until})
	if !n.running {
		n.running = true
		go s.watchTasks()
	}
}

func cmpDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// watchTasks runs rounds until no task is watched. A round waits for the
// backend's change signal, or watchIdle; forgetting the last task ends
// the wait at once.
func (s *Server) watchTasks() {
	n := &s.taskNotes
	for {
		n.mu.Lock()
		if len(n.watched) == 0 {
			n.running, n.cancel = false, nil
			n.mu.Unlock()
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		n.cancel = cancel
		n.mu.Unlock()
		if w, ok := s.tasks.(TaskWaiter); ok {
			w.WaitChange(ctx, watchIdle)
		} else {
			select {
			case <-ctx.Done():
			case <-time.After(watchIdle):
			}
		}
		if ctx.Err() == nil {
			s.taskRound(ctx)
		}
		cancel()
	}
}

// taskRound re-reads the watched tasks (a bounded number, oldest watched
// first) and notifies the sessions of those whose status changed.
func (s *Server) taskRound(ctx context.Context) {
	n := &s.taskNotes
	n.mu.Lock()
	batch := slices.Clone(n.watched[:min(len(n.watched), maxReadPerRound)])
	n.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, watchRead)
	defer cancel()
	now := time.Now()
	var drop []*watchedTask
	for _, w := range batch {
		t, err := s.tasks.Task(rctx, w.caller, w.id)
		if err != nil {
			if rctx.Err() != nil {
				return // the database is slow or gone: the next round tries again
			}
			drop = append(drop, w) // expired or gone
			continue
		}
		if t.Status != w.status {
			w.status = t.Status
			s.sendTaskStatus(w.session, t)
		}
		if t.terminal() || now.After(w.until) {
			drop = append(drop, w)
		}
	}
	n.mu.Lock()
	n.watched = slices.DeleteFunc(n.watched, func(w *watchedTask) bool { return slices.Contains(drop, w) })
	// Read next round from where this one stopped.
	if len(n.watched) > maxReadPerRound {
		k := min(len(batch)-len(drop), len(n.watched))
		n.watched = append(n.watched[k:], n.watched[:k]...)
	}
	n.mu.Unlock()
}

// taskStatusNote is the notification's wire form.
type taskStatusNote struct {
	JSONRPC string   `json:"jsonrpc"`
	Method  string   `json:"method"`
	Params  wireTask `json:"params"`
}

// sendTaskStatus writes t's status notification to every channel session
// has open; a session without one is skipped (it polls).
func (s *Server) sendTaskStatus(session string, t *Task) {
	n := &s.taskNotes
	n.mu.Lock()
	sinks := slices.Clone(n.sinks[session])
	n.mu.Unlock()
	if len(sinks) == 0 {
		return
	}
	msg, err := json.Marshal(taskStatusNote{JSONRPC: "2.0", Method: statusMethod, Params: toWire(t)})
	if err != nil {
		return
	}
	for _, sink := range sinks {
		_ = sink.write(msg) // a broken channel is the client's going; its poll still works
	}
}

// noteWriter is a GET event stream's response writer that can also take
// a notification between the SDK's events: the SDK writes each event in
// one Write, and the lock keeps ours from landing inside one.
type noteWriter struct {
	http.ResponseWriter
	mu      sync.Mutex
	header  bool // the status is out
	started bool // it was 200: events may follow
	ended   bool // the handler returned: nothing more may be written
}

func (w *noteWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.header {
		w.header, w.started = true, code == http.StatusOK
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *noteWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.header {
		w.header, w.started = true, true // an implicit 200
	}
	return w.ResponseWriter.Write(b)
}

func (w *noteWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *noteWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *noteWriter) end() {
	w.mu.Lock()
	w.ended = true
	w.mu.Unlock()
}

// noteWait bounds the write of one notification to a GET stream.
const noteWait = 5 * time.Second

// note writes msg as an event of the stream.
func (w *noteWriter) note(msg []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.started || w.ended {
		return errNoStream
	}
	rc := http.NewResponseController(w.ResponseWriter)
	_ = rc.SetWriteDeadline(time.Now().Add(noteWait))
	defer rc.SetWriteDeadline(time.Time{})
	ev := make([]byte, 0, len(msg)+32)
	ev = append(ev, "event: message\ndata: "...)
	ev = append(ev, msg...)
	ev = append(ev, "\n\n"...)
	if _, err := w.ResponseWriter.Write(ev); err != nil {
		return err
	}
	return rc.Flush()
}

var errNoStream = errors.New("the event stream is not open")
