package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpserver"
	"github.com/agentapp/agentapp/store/storetest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startReplica starts `agentapp serve --http` on a free loopback port on
// databaseURL, with extra flags, and returns its MCP endpoint. The process
// is killed and reaped when the test ends.
func startReplica(t *testing.T, databaseURL string, extra ...string) string {
	t.Helper()
	args := append([]string{"serve", "--http", "127.0.0.1:0", "--database", databaseURL}, extra...)
	cmd := exec.Command(agentappBin(t), args...)
	cmd.Env = append(os.Environ(), "AGENTAPP_DATA_DIR="+t.TempDir())
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	stderr := bufio.NewReader(stderrPipe)
	addrRE := regexp.MustCompile(`MCP server on (http://127\.0\.0\.1:[1-9][0-9]*/mcp)`)
	var banner strings.Builder
	for {
		line, err := stderr.ReadString('\n')
		banner.WriteString(line)
		if err != nil {
			t.Fatalf("replica printed no address: %v\n%s", err, banner.String())
		}
		if m := addrRE.FindStringSubmatch(line); m != nil {
			go io.Copy(io.Discard, stderr)
			return m[1]
		}
	}
}

// connect opens an MCP client session to endpoint.
func connect(t *testing.T, endpoint string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectVia(t, endpoint, opts, nil)
}

// connectVia is connect with the client's HTTP requests sent through rt
// (nil: the default transport).
func connectVia(t *testing.T, endpoint string, opts *mcp.ClientOptions, rt http.RoundTripper) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "replica-test", Version: "1"}, opts)
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint}
	if rt != nil {
		tr.HTTPClient = &http.Client{Transport: rt}
	}
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestStatelessReplicasShareIdempotency sends one createTicket to one
// stateless replica and its retry to another: with the client's
// conversation in _meta (mcpserver.MetaSession) the retry returns the
// ticket the first replica opened.
func TestStatelessReplicasShareIdempotency(t *testing.T) {
	db := storetest.NewPostgres(t)
	a := startReplica(t, db.URL, "--stateless")
	b := startReplica(t, db.URL, "--stateless")
	call := func(endpoint, conversation string) string {
		t.Helper()
		cs := connect(t, endpoint, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{
			Meta:      mcp.Meta{mcpserver.MetaSession: conversation},
			Name:      "createTicket",
			Arguments: map[string]string{"subject": "退款", "description": "订单 A-1024 破损"},
		})
		if err != nil || res.IsError {
			t.Fatalf("createTicket on %s: %v %+v", endpoint, err, res)
		}
		var tk struct{ TicketID string }
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &tk)
		return tk.TicketID
	}
	first := call(a, "conv-1")
	if retry := call(b, "conv-1"); retry != first || first == "" {
		t.Errorf("the retry on another replica returned %q, want the first ticket %q", retry, first)
	}
	if other := call(b, "conv-2"); other == first {
		t.Errorf("another conversation got the same ticket %s", other)
	}
}

// TestIngestNotifiesClientsOfEveryReplica ingests a document through one
// process (agentapp kb ingest) and waits for resources/list_changed on
// clients of two other replicas, delivered by LISTEN/NOTIFY.
func TestIngestNotifiesClientsOfEveryReplica(t *testing.T) {
	db := storetest.NewPostgres(t)
	endpoints := []string{startReplica(t, db.URL), startReplica(t, db.URL)}
	changed := make(chan int, 16)
	opened := make(chan struct{}, len(endpoints))
	for i, ep := range endpoints {
		cs := connectVia(t, ep, &mcp.ClientOptions{
			ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- i },
		}, streamOpened{opened: opened})
		if cs.InitializeResult().Capabilities.Resources == nil || !cs.InitializeResult().Capabilities.Resources.ListChanged {
			t.Fatalf("replica %d does not promise resources/list_changed", i)
		}
	}
	// Notifications reach only the clients' streams: wait until both
	// are open (bounded), then drain what start-up sent.
	streamsUp := time.After(15 * time.Second)
	for range endpoints {
		select {
		case <-opened:
		case <-streamsUp:
			t.Fatal("the clients' GET streams did not open within 15s")
		}
	}
	for len(changed) > 0 {
		<-changed
	}
	file := filepath.Join(t.TempDir(), "returns.md")
	if err := os.WriteFile(file, []byte("# Returns\n\nReturns are accepted within 30 days."), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runKBCLI(t, "--database", db.URL, "kb", "ingest", file); err != nil {
		t.Fatal(err)
	}
	got := map[int]bool{}
	deadline := time.After(15 * time.Second)
	for len(got) < len(endpoints) {
		select {
		case i := <-changed:
			got[i] = true
		case <-deadline:
			t.Fatalf("resources/list_changed reached replicas %v of %d", got, len(endpoints))
		}
	}
}

// streamOpened reports each stream the server answered 200: the client's
// stream where the server's notifications arrive is open.
type streamOpened struct{ opened chan<- struct{} }

func (s streamOpened) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	// A 2025-11-25 session's GET stream, or (2026-07-28, the SDK's client
	// by default) the subscriptions/listen stream, answered once the
	// subscription is in place.
	stream := r.Method == http.MethodGet || r.Header.Get("Mcp-Method") == "subscriptions/listen"
	if err == nil && stream && resp.StatusCode == http.StatusOK {
		select {
		case s.opened <- struct{}{}:
		default: // a reconnect after the wait: nobody is counting
		}
	}
	return resp, err
}
