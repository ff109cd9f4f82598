package tasks

import (
	"encoding/json"
	"sync"
)

// maxWaiters bounds the tasks waited on at once that a status
// notification can wake (a wait not registered still polls).
const maxWaiters = 1000

// Wakers are the waits on tasks that a notifications/tasks/status can end
// early: the server says the status changed, and the wait reads the task
// at once instead of at its next poll. The zero value is ready to use.
type Wakers struct {
	mu   sync.Mutex
	byID map[string]chan struct{}
}

// Wait returns a channel told of each status notification of task id,
// and the func that stops it. Past the bound the channel is nil (never
// told) and the wait keeps its polls.
func (w *Wakers) Wait(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byID == nil {
		w.byID = map[string]chan struct{}{}
	}
	if len(w.byID) >= maxWaiters {
		return nil, func() {}
	}
	w.byID[id] = ch
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.byID[id] == ch {
			delete(w.byID, id)
		}
	}
}

// Notified wakes the wait on the task a notifications/tasks/status's
// params name, if there is one.
func (w *Wakers) Notified(params json.RawMessage) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	if json.Unmarshal(params, &p) != nil || p.TaskID == "" {
		return
	}
	w.mu.Lock()
	ch := w.byID[p.TaskID]
	w.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default: // a wake-up is pending already
		}
	}
}
