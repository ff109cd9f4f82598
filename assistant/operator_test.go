package assistant

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/support"
)

func TestOperatorWhen(t *testing.T) {
	if when("not a time <b>") != "not a time &lt;b&gt;" {
		t.Errorf("an unparsable stamp is not shown escaped: %q", when("not a time <b>"))
	}
	if got := when("2026-12-02T01:39:05.123456789Z"); got != `<time datetime="2026-12-02T01:39:05Z" title="2026-12-02T01:39:05Z">2026-12-02 01:39 UTC</time>` {
		t.Errorf("nanosecond stamp shown as %q", got)
	}
}

// TestOperatorRoutes: every route of the operator view is under /operator
// (the web mounts nothing else behind its token), and the queue answers
// without any front end around it.
func TestOperatorRoutes(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc, err := support.New(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTicketTool().Execute(ctx, json.RawMessage(`{"subject":"broken box","description":"the box came broken"}`)); err != nil {
		t.Fatal(err)
	}
	routes := Operator(svc, nil)
	mux := http.NewServeMux()
	for p, h := range routes {
		mux.Handle(p, h)
	}
	if len(routes) != 7 {
		t.Errorf("%d routes, want the page, the queue, two resolves and three refund routes", len(routes))
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/operator/queue", nil))
	var q Queue
	if err := json.Unmarshal(rec.Body.Bytes(), &q); err != nil || rec.Code != http.StatusOK || len(q.Tickets) != 1 || q.Handoffs == nil {
		t.Fatalf("queue: %d %v %+v", rec.Code, err, q)
	}
}
