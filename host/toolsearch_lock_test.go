package host

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentapp/agentapp/model"
)

// TestToolSearchSlowDatabaseHoldsNoOtherSession: while one session's
// first read of its loaded tools waits on the database, another session's
// turn (its model call included) runs; before, the read held the tool
// search's lock, which every model call of every session takes.
func TestToolSearchSlowDatabaseHoldsNoOtherSession(t *testing.T) {
	ctx := context.Background()
	srv := &liveServer{name: "big"}
	var names []string
	for i := range 60 { // past auto mode's 40: the tools are deferred
		names = append(names, fmt.Sprintf("tool_%02d", i))
	}
	srv.offer(names...)
	m := &scriptModel{}
	h, err := newHost(ctx, config{Model: m, Servers: []Server{srv}, Store: openTestStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	inQuery, release := make(chan struct{}), make(chan struct{})
	read := h.search.readLoaded
	h.search.readLoaded = func(ctx context.Context, session string) ([]string, error) {
		if session == "slow" {
			close(inQuery)
			select { // the slow database, bounded so a failing test ends
			case <-release:
			case <-time.After(30 * time.Second):
			}
		}
		return read(ctx, session)
	}
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		h.offered(ctx, "slow", h.table.Current())
	}()
	<-inQuery
	fastDone := make(chan error, 1)
	go func() {
		_, err := h.Run(ctx, Turn{Session: "fast", Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
		fastDone <- err
	}()
	select {
	case err := <-fastDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a session's turn waited for another session's database read")
	}
	if len(m.requests()) != 1 {
		t.Errorf("%d model calls, want the fast session's one", len(m.requests()))
	}
	close(release)
	<-slowDone
	if st := h.ToolSearch(ctx, "slow"); !st.Deferred || len(st.Waiting) != 60 {
		t.Errorf("after the slow read: %+v, want 60 deferred tools waiting", st)
	}
}

// TestLoadedCacheEvictsOneAtATime: a full cache drops the session used
// least recently, one per new session, instead of emptying itself (which
// sent every session back to the database at once).
func TestLoadedCacheEvictsOneAtATime(t *testing.T) {
	c := newLoadedCache(3)
	c.put("a", []string{"x"})
	c.put("b", nil)
	c.put("c", []string{"y"})
	if _, ok := c.get("a"); !ok { // a is now the most recently used
		t.Fatal("a missing")
	}
	c.put("d", nil)
	if c.len() != 3 {
		t.Fatalf("%d sessions kept, want 3", c.len())
	}
	if _, ok := c.get("b"); ok {
		t.Error("b, the least recently used, is still kept")
	}
	for _, s := range []string{"a", "c", "d"} {
		if _, ok := c.get(s); !ok {
			t.Errorf("%s was dropped", s)
		}
	}
	c.put("c", []string{"z"}) // an update keeps one entry
	if names, _ := c.get("c"); c.len() != 3 || len(names) != 1 || names[0] != "z" {
		t.Errorf("after an update: %d sessions, c = %v", c.len(), names)
	}
	for i := range 10 {
		c.put(fmt.Sprint("s", i), nil)
		if c.len() != 3 {
			t.Fatalf("%d sessions after adding s%d, want 3", c.len(), i)
		}
	}
}
