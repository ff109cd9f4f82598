package web

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentapp/agentapp/store"
)

// storeFailed answers a request whose database call failed with err: a
// database outage is 503 with Retry-After and the one outage message (the
// same request may work shortly), anything else 500 with msg. plain
// answers text (the operator's page) instead of the JSON error body.
func storeFailed(w http.ResponseWriter, err error, msg string, plain bool) {
	code := http.StatusInternalServerError
	if store.IsUnavailable(err) {
		code, msg = http.StatusServiceUnavailable, store.UnavailableMessage
		w.Header().Set("Retry-After", strconv.Itoa(int(store.RetryAfter.Seconds())))
	}
	if plain {
		http.Error(w, msg, code)
		return
	}
	writeError(w, code, msg)
}

// writeCheckEvery spaces the writes /readyz makes: a load balancer asks
// every few seconds, and one small write in this time tells as much.
const writeCheckEvery = 5 * time.Second

// writeCheck is store.CheckWrite at most once per writeCheckEvery; between
// checks it reports the last one's result.
func (s *Server) writeCheck(ctx context.Context) error {
	c := &s.writes
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); c.at.IsZero() || now.Sub(c.at) >= writeCheckEvery {
		c.err = s.h.Store().CheckWrite(ctx)
		c.at = now
	}
	return c.err
}

// writeChecks holds the last write check.
type writeChecks struct {
	mu  sync.Mutex
	at  time.Time
	err error
}
