package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/model"
)

// refundModel asks for a refund of A-1024 and, once the call has an
// answer, repeats that answer: every session's turn is the same, whatever
// the order in which concurrent turns reach it.
type refundModel struct{}

func (refundModel) Name() string { return "refund-model" }

func (m refundModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return m.Stream(ctx, req, nil)
}

func (refundModel) Stream(_ context.Context, req *model.Request, onText func(string)) (*model.Response, error) {
	if last := req.Messages[len(req.Messages)-1]; last.Role == model.RoleTool {
		text := "tool said: " + last.Content
		if onText != nil {
			onText(text)
		}
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: text}}, nil
	}
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
		{ID: "r1", Name: "refund", Arguments: []byte(`{"orderId":"A-1024"}`)}}}}, nil
}

// capsEnv is a server whose every turn waits for approval of a refund,
// with a fake clock so nothing runs out unless the test says so.
func capsEnv(t *testing.T, edit func(*envOptions)) (*testEnv, *fakeClock) {
	t.Helper()
	_, bridge := connectShop(t)
	clock := newFakeClock()
	e := newEnv(t, refundModel{}, func(o *envOptions) {
		o.Servers = []host.Server{bridge}
		o.Guards = confirmGuards(t, "refund")
		o.Clock = clock
		if edit != nil {
			edit(o)
		}
	})
	return e, clock
}

// pending starts a turn in a new session and returns its stream at the
// pending approval.
func (e *testEnv) pending(t *testing.T) (string, *sseStream, ApprovalEvent) {
	t.Helper()
	id := e.newSession(t)
	s := e.send(t, id, "请给订单 A-1024 退款")
	evs := s.until(t, "approval")
	var ap ApprovalEvent
	evs[len(evs)-1].decode(t, &ap)
	if ap.Decision != "pending" {
		t.Fatalf("approval %+v, want pending", ap)
	}
	return id, s, ap
}

// refusedAtOnce sends a turn and returns its answer, which must come
// without any approval being raised.
func (e *testEnv) refusedAtOnce(t *testing.T) string {
	t.Helper()
	id := e.newSession(t)
	evs := e.send(t, id, "请给订单 A-1024 退款").rest(t)
	if d := decisionOf(t, evs); d != "" {
		t.Fatalf("an approval was raised (%s) past the cap: %v", d, names(evs))
	}
	for _, ev := range evs {
		if ev.Name == "done" {
			var d DoneEvent
			ev.decode(t, &d)
			return d.Answer
		}
	}
	t.Fatalf("no done event: %v", names(evs))
	return ""
}

// TestApprovalsPerClientCapped: one client may have only
// ApprovalsPerClient approvals waiting; the next turn's call is refused at
// once (its turn ends and frees its slot) and, once one is answered, the
// client may wait again.
func TestApprovalsPerClientCapped(t *testing.T) {
	e, _ := capsEnv(t, func(o *envOptions) { o.ApprovalsPerClient = 2 })
	id1, s1, ap1 := e.pending(t)
	id2, s2, ap2 := e.pending(t)
	if ans := e.refusedAtOnce(t); !strings.Contains(ans, "2 approvals from this address are waiting already") {
		t.Errorf("third turn's answer %q, want the per-client refusal", ans)
	}
	if code := e.answer(t, id1, ap1.ID, true); code != http.StatusOK {
		t.Fatalf("answer: %d", code)
	}
	s1.rest(t)
	id3, s3, ap3 := e.pending(t)
	for _, p := range []struct {
		id string
		s  *sseStream
		ap ApprovalEvent
	}{{id2, s2, ap2}, {id3, s3, ap3}} {
		e.answer(t, p.id, p.ap.ID, false)
		p.s.rest(t)
	}
}

// TestApprovalsCappedServerWide: at most half the turn slots wait for
// approval, whatever the number of clients; the rest stay for turns that
// wait on nobody.
func TestApprovalsCappedServerWide(t *testing.T) {
	e, _ := capsEnv(t, func(o *envOptions) { o.MaxStreams = 4; o.ApprovalsPerClient = 100 })
	id1, s1, ap1 := e.pending(t)
	id2, s2, ap2 := e.pending(t)
	if ans := e.refusedAtOnce(t); !strings.Contains(ans, "too many approvals are waiting on this server") {
		t.Errorf("third turn's answer %q, want the server-wide refusal", ans)
	}
	e.answer(t, id1, ap1.ID, false)
	e.answer(t, id2, ap2.ID, false)
	s1.rest(t)
	s2.rest(t)
}

// TestUnreadApprovalsGetShorterBound: a client that let its approval run
// out gets the short bound on the next, until it answers one.
func TestUnreadApprovalsGetShorterBound(t *testing.T) {
	e, clock := capsEnv(t, nil)
	_, s, ap := e.pending(t)
	if ap.TimeoutSeconds != 60 {
		t.Fatalf("first approval waits %d s, want 60", ap.TimeoutSeconds)
	}
	clock.Advance(DefaultApprovalTimeout)
	if d := decisionOf(t, s.rest(t)); d != "timeout" {
		t.Fatalf("decision %q, want timeout", d)
	}
	id, s, ap := e.pending(t)
	if ap.TimeoutSeconds != 10 {
		t.Errorf("after an unanswered approval the next waits %d s, want 10", ap.TimeoutSeconds)
	}
	e.answer(t, id, ap.ID, true)
	s.rest(t)
	id, s, ap = e.pending(t)
	if ap.TimeoutSeconds != 60 {
		t.Errorf("after an answered approval the next waits %d s, want 60 again", ap.TimeoutSeconds)
	}
	e.answer(t, id, ap.ID, false)
	s.rest(t)
}

// TestClientAddrGroupsIPv6By64: the per-client key of an IPv6 peer is its
// /64, of an IPv4 peer (mapped or not) its address.
func TestClientAddrGroupsIPv6By64(t *testing.T) {
	key := func(remote string) string {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = remote
		return clientAddr(r)
	}
	if a, b := key("[2001:db8:1:2::1]:4000"), key("[2001:db8:1:2:ffff:1:2:3]:5000"); a != b || a != "2001:db8:1:2::/64" {
		t.Errorf("one /64: %q and %q, want both 2001:db8:1:2::/64", a, b)
	}
	if a, b := key("[2001:db8:1:2::1]:4000"), key("[2001:db8:1:3::1]:4000"); a == b {
		t.Errorf("two /64s share the key %q", a)
	}
	if got := key("[::ffff:192.0.2.7]:80"); got != "192.0.2.7" {
		t.Errorf("IPv4-mapped: %q", got)
	}
	if got := key("192.0.2.7:80"); got != "192.0.2.7" {
		t.Errorf("IPv4: %q", got)
	}
}
