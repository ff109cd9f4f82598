package web

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
)

// serveEnv runs Serve on a loopback listener; stop cancels it and
// returns Serve's error.
func serveEnv(t *testing.T, m model.Model, edit func(*envOptions)) (base string, srv *Server, stop func() error) {
	t.Helper()
	o := &envOptions{Model: m}
	o.AddressRate, o.SessionRate = Unlimited, Unlimited
	edit(o)
	opts := o.Options
	opts.Host = openHost(t, o)
	srv, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), srv, func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return within 10 s of being stopped")
			return nil
		}
	}
}

func startTurn(t *testing.T, base string) *sseStream {
	t.Helper()
	resp, err := http.Post(base+"/api/sessions", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	var info SessionInfo
	json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	resp, err = http.Post(base+"/api/sessions/"+info.ID+"/messages", "application/json", strings.NewReader(`{"content":"查"}`))
	if err != nil {
		t.Fatal(err)
	}
	return readStream(t, resp)
}

func TestShutdownLetsTurnsFinish(t *testing.T) {
	_, bridge := connectShop(t)
	release := make(chan struct{})
	tool := &agent.Tool{Name: "slowLookup", Description: "slow", Execute: func(ctx context.Context, _ json.RawMessage) (any, error) {
		<-release
		return "found", nil
	}}
	m := scripted.New(scripted.Turn{Calls: []model.ToolCall{scripted.Call("s1", "slowLookup", nil)}}, scripted.Turn{Text: "找到了"})
	base, _, stop := serveEnv(t, m, func(o *envOptions) {
		o.Local = []*agent.Tool{tool}
		o.Servers = []host.Server{bridge}
	})
	s := startTurn(t, base)
	s.until(t, "step")
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	// While draining, a new turn is refused.
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Post(base+"/api/sessions", "application/json", nil)
		if err != nil {
			break // the listener is closed: draining has begun
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("the server still accepts connections while draining")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	evs := s.rest(t)
	if names(evs)[len(evs)-1] != "done" {
		t.Errorf("the running turn did not finish: %v", names(evs))
	}
	if err := <-stopped; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if st := bridge.Status().State; st != mcpclient.StateClosed {
		t.Errorf("the MCP server is %v after shutdown, want closed", st)
	}
}

func TestShutdownCancelsTurnsAfterTheDrain(t *testing.T) {
	started, cancelled := make(chan struct{}), make(chan struct{})
	m := scripted.New(scripted.Turn{Calls: []model.ToolCall{scripted.Call("s1", "slowLookup", nil)}})
	base, _, stop := serveEnv(t, m, func(o *envOptions) {
		o.Local = []*agent.Tool{blockingTool(started, cancelled)}
		o.ShutdownTimeout = 200 * time.Millisecond
	})
	startTurn(t, base)
	<-started
	if err := stop(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the turn was not cancelled when the drain ran out")
	}
}

// A shutdown refuses the approvals that are waiting, so their turns end
// within the drain instead of waiting out the 60 s.
func TestShutdownRefusesPendingApprovals(t *testing.T) {
	shop, bridge := connectShop(t)
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("r1", "refund", map[string]string{"orderId": "A-1024"})}},
		scripted.Turn{Text: "没有退款。"},
	)
	base, _, stop := serveEnv(t, m, func(o *envOptions) {
		o.Servers = []host.Server{bridge}
		o.Guards = confirmGuards(t, "refund")
		// Longer than stop waits: only the refusal can end the turn in time.
		o.ShutdownTimeout = time.Hour
	})
	s := startTurn(t, base)
	s.until(t, "approval")
	if err := stop(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	evs := s.rest(t)
	if names(evs)[len(evs)-1] != "done" || len(shop.called()) != 0 {
		t.Errorf("events %v, refund calls %v: want the turn finished without the call", names(evs), shop.called())
	}
}

// TestOperatorRoutesChecked: the composition mounts operator routes under
// /operator only; anything else, or a route the mux refuses, is an error
// of New, not a panic.
func TestOperatorRoutesChecked(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	for _, routes := range []map[string]http.Handler{
		{"GET /api/steal": ok},
		{"/operatorx": ok},
		{"GET /operator": nil},
		{"GET /operator/{id": ok},
	} {
		_, err := New(context.Background(), Options{Host: openHost(t, &envOptions{Model: scripted.New()}), Operator: routes})
		if err == nil || !strings.Contains(err.Error(), "operator route") {
			t.Errorf("routes %v: err = %v, want it refused", routes, err)
		}
	}
}
