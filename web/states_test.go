package web

import (
	"context"
	"slices"
	"testing"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/model/offline"
)

// "转人工" leaves the conversation waiting; while an operator holds it a
// customer message is answered with "queued" and "done" and no assistant
// text, and it is kept in the transcript.
func TestMessageWhileHeldIsQueued(t *testing.T) {
	e := newEnv(t, offline.New(offlineDemo), nil)
	ctx := context.Background()
	id := e.newSession(t)
	e.send(t, id, "转人工").rest(t)
	ss := e.srv.h.Sessions()
	if st, err := ss.State(ctx, id); err != nil || st.State != host.StateWaiting {
		t.Fatalf("after 转人工: %+v, %v; want waiting", st, err)
	}
	if _, err := ss.Transition(ctx, id, []host.ConvState{host.StateWaiting}, host.StateHuman, "ana"); err != nil {
		t.Fatal(err)
	}
	evs := e.send(t, id, "where is my parcel A-1024?").rest(t)
	if got := names(evs); !slices.Equal(got, []string{"session", "queued", "done"}) {
		t.Fatalf("events %v, want session, queued, done", got)
	}
	var q QueuedEvent
	evs[1].decode(t, &q)
	var d DoneEvent
	evs[2].decode(t, &d)
	if q.State != host.StateHuman || q.Operator != "ana" || d.Answer != "" || !d.Queued {
		t.Errorf("queued %+v, done %+v", q, d)
	}
	hist := e.history(t, id)
	if last := hist[len(hist)-1]; last.Content != "where is my parcel A-1024?" {
		t.Errorf("the last entry of the transcript is %+v", last)
	}
}
