package support

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/agentapp/agentapp/store"
)

// ChangesChannel is the PostgreSQL notification channel every write of the
// support component announces itself on, so that a process waiting for a
// decision made by another (a blocking tasks/result in `agentapp serve`
// while the operator decides in `agentapp web`) wakes at once.
const ChangesChannel = "agentapp_support"

// changePoll spaces the looks at SQLite's change counter while waiting:
// a look reads the WAL index header from memory (store.Watch).
const changePoll = 50 * time.Millisecond

// changes wakes the waiters of one Service.
type changes struct {
	open  sync.Once
	watch *store.Watch // SQLite; nil where it could not be opened

	mu     sync.Mutex
	ch     chan struct{} // closed at the next notification (PostgreSQL)
	listen bool          // the listener runs, until stop (Close)
	life   context.Context
	stop   context.CancelFunc
	done   chan struct{}
}

// close stops the listener, if it runs, and waits for it.
func (c *changes) close() {
	c.mu.Lock()
	stop, done := c.stop, c.done
	c.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// notifyTx announces tx's write when it commits (PostgreSQL; nothing on
// SQLite, where waiters look at the change counter).
func (s *Service) notifyTx(ctx context.Context, tx *sql.Tx) error {
	return s.st.Notify(ctx, tx, ChangesChannel)
}

// WaitChange returns when anything may have been committed to the
// database since it was called (by any process, any replica), or after d,
// or when ctx ends, whichever comes first. A caller re-reads what it waits
// for after it returns: a change is not necessarily the one awaited.
func (s *Service) WaitChange(ctx context.Context, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	if s.st.Dialect() == store.Postgres {
		select {
		case <-s.notified():
		case <-timer.C:
		case <-ctx.Done():
		}
		return
	}
	c := &s.changes
	c.open.Do(func() { c.watch, _ = s.st.Watch(context.WithoutCancel(ctx)) })
	if c.watch == nil {
		select { // no counter to look at: the plain wait
		case <-timer.C:
		case <-ctx.Done():
		}
		return
	}
	from, err := c.watch.Version()
	if err != nil {
		return
	}
	tick := time.NewTicker(changePoll)
	defer tick.Stop()
	for {
		select {
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if v, err := c.watch.Version(); err != nil || v != from {
			return
		}
	}
}

// notified returns a channel closed at the next notification on
// ChangesChannel, starting the Service's one listener on first use; it
// runs until Close.
func (s *Service) notified() <-chan struct{} {
	c := &s.changes
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	if !c.listen {
		c.listen = true
		c.life, c.stop = context.WithCancel(context.Background())
		c.done = make(chan struct{})
		go func() {
			defer close(c.done)
			_ = s.st.Listen(c.life, ChangesChannel, nil, func(string) {
				c.mu.Lock()
				close(c.ch)
				c.ch = make(chan struct{})
				c.mu.Unlock()
			})
		}()
	}
	return c.ch
}
