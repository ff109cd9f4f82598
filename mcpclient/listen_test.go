package mcpclient

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpconfig"
	"go.uber.org/goleak"
)

// listChangeBound is how soon a server's announced change must reach the
// bridge's tool list.
const listChangeBound = 5 * time.Second

// plainHTTP asks the fixture for its counts without keeping connections
// (which the leak checks would see).
var plainHTTP = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}

// tsStats reads how many requests of each method the tsserver-next fixture
// at endpoint has received.
func tsStats(t *testing.T, endpoint string) map[string]int {
	t.Helper()
	base, _, _ := strings.Cut(endpoint, "/mcp")
	resp, err := plainHTTP.Get(base + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var counts map[string]int
	if err := json.NewDecoder(resp.Body).Decode(&counts); err != nil {
		t.Fatal(err)
	}
	return counts
}

// waitForTool refreshes b (as the host does before each model call) until
// it offers the tool name, for at most listChangeBound.
func waitForTool(t *testing.T, b *Bridge, name string) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		if _, err := b.Refresh(context.Background()); err != nil {
			t.Log(err)
		}
		if slices.Contains(toolNames(b), name) {
			return time.Since(start)
		}
		if time.Since(start) > listChangeBound {
			t.Fatalf("tool %s not offered %s after the server announced it; tools: %q", name, listChangeBound, toolNames(b))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A TypeScript SDK v2 server at 2026-07-28 announces a new tool on
// subscriptions/listen: the bridge's tool list (the host's live table) and
// its resources have it within the bound.
func TestListenToolsChangedTSServerNext(t *testing.T) {
	url := startTSServerNext(t)
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "ts", URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if v := b.session().InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s", v)
	}
	if got, err := adExec(t, adTool(t, b, "grow"), `{}`); err != nil || got != "grown" {
		t.Fatalf("grow: %q, %v", got, err)
	}
	t.Logf("extra seen after %s", waitForTool(t, b, "extra"))
	res, err := b.Resources(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res {
		uris = append(uris, r.URI)
	}
	if !slices.Contains(uris, "memo://extra") {
		t.Errorf("resources after the change: %q", uris)
	}
	if n := tsStats(t, url)["subscriptions/listen"]; n != 1 {
		t.Errorf("%d subscriptions/listen requests, want 1", n)
	}
}

// With a caching hint of a minute, the host asking again for the tools
// (Refresh before each model call) and the resources does not list them
// again; a list_changed does.
func TestListTTLHonouredTSServerNext(t *testing.T) {
	url := startTSServerNext(t) + "?ttl=60000"
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "ts", URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	askAgain(t, b, 3)
	st := tsStats(t, url)
	if st["tools/list"] != 1 || st["resources/list"] != 1 {
		t.Errorf("within the TTL: %d tools/list, %d resources/list requests, want 1 each", st["tools/list"], st["resources/list"])
	}
	if _, err := adExec(t, adTool(t, b, "grow"), `{}`); err != nil {
		t.Fatal(err)
	}
	waitForTool(t, b, "extra")
	if n := tsStats(t, url)["tools/list"]; n != 2 {
		t.Errorf("after the change: %d tools/list requests, want 2", n)
	}
}

// askAgain asks n times for the tools (Refresh, as before each model call)
// and the resources, as the host does.
func askAgain(t *testing.T, b *Bridge, n int) {
	t.Helper()
	for range n {
		if _, err := b.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Resources(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// dropListens ends every open subscriptions/listen stream of the fixture.
func dropListens(t *testing.T, endpoint string) {
	t.Helper()
	base, _, _ := strings.Cut(endpoint, "/mcp")
	resp, err := plainHTTP.Post(base+"/drop-listens", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// A listen stream the server (or a proxy) ends is opened again, and a
// change announced after that still reaches the bridge.
func TestListenReopenedTSServerNext(t *testing.T) {
	url := startTSServerNext(t)
	baseline := goleak.IgnoreCurrent()
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "ts", URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		b.Close()
		goleak.VerifyNone(t, baseline)
	}()
	dropListens(t, url)
	deadline := time.Now().Add(listChangeBound)
	for tsStats(t, url)["subscriptions/listen"] < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the listen stream was not opened again within %s", listChangeBound)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got, err := adExec(t, adTool(t, b, "grow"), `{}`); err != nil || got != "grown" {
		t.Fatalf("grow: %q, %v", got, err)
	}
	waitForTool(t, b, "extra")
}

// With ttlMs 0 (the fixture's default), every time the host asks again the
// lists are fetched again.
func TestListTTLZeroTSServerNext(t *testing.T) {
	url := startTSServerNext(t)
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "ts", URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	askAgain(t, b, 3)
	st := tsStats(t, url)
	if st["tools/list"] != 4 || st["resources/list"] != 4 {
		t.Errorf("ttlMs 0: %d tools/list, %d resources/list requests, want 4 each (the connect's and 3 more)", st["tools/list"], st["resources/list"])
	}
}

// liveStdio connects to the test server over stdio with its live tools;
// legacy pins protocol 2025-11-25 (as a command that refused
// server/discover is remembered).
func liveStdio(t *testing.T, legacy bool) *Bridge {
	t.Helper()
	cfg := mcpconfig.Server{Name: "live", Command: testServerPath(t), Args: []string{"-live"}}
	if legacy {
		cfg = asLegacyStdio(t, cfg) // forgotten when the test ends
	} else {
		legacyStdio.Remember(stdioKey(&cfg), false)
	}
	b, err := Connect(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	want := "2026-07-28"
	if legacy {
		want = "2025-11-25"
	}
	if v := b.session().InitializeResult().ProtocolVersion; v != want {
		t.Fatalf("negotiated %s, want %s", v, want)
	}
	return b
}

// On stdio, at both protocol versions, a tool the server adds reaches the
// bridge's tool list within the bound (at 2026-07-28 over
// subscriptions/listen).
func TestListChangedStdio(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		b := liveStdio(t, legacy)
		if got, err := adExec(t, adTool(t, b, "addtool"), `{"name":"fresh"}`); err != nil || got != "added fresh" {
			t.Fatalf("addtool: %q, %v", got, err)
		}
		t.Logf("legacy %v: fresh seen after %s", legacy, waitForTool(t, b, "fresh"))
	}
}

// On stdio at 2026-07-28 the Go SDK server's lists have ttlMs 0: the host
// asking again lists again, and an unchanged list keeps its generation (the
// host's table is not rebuilt). At 2025-11-25 (no caching hints) only a
// list_changed lists again.
func TestListTTLStdio(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		b := liveStdio(t, legacy)
		gen, _ := b.Refresh(context.Background())
		for range 3 {
			if g, err := b.Refresh(context.Background()); err != nil || g != gen {
				t.Fatalf("legacy %v: Refresh: generation %d, %v; want %d", legacy, g, err, gen)
			}
		}
		got, err := adExec(t, adTool(t, b, "listcount"), `{}`)
		want := "5" // the connect's and 4 more
		if legacy {
			want = "1"
		}
		if err != nil || got != want {
			t.Errorf("legacy %v: %s tools/list requests (%v), want %s", legacy, got, err, want)
		}
	}
}

// A listing whose caching hint ran out is fetched again when the host next
// asks, without a list_changed.
func TestListTTLExpiresTSServerNext(t *testing.T) {
	// Long enough that a loaded machine does not let it run out before the
	// first check.
	url := startTSServerNext(t) + "?ttl=2000"
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "ts", URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := tsStats(t, url)["tools/list"]; n != 1 {
		t.Fatalf("%d tools/list requests within the TTL, want 1", n)
	}
	time.Sleep(2100 * time.Millisecond)
	if _, err := b.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Resources(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := tsStats(t, url)
	if st["tools/list"] != 2 || st["resources/list"] != 2 {
		t.Errorf("after the TTL: %d tools/list, %d resources/list requests, want 2 each", st["tools/list"], st["resources/list"])
	}
}

// cacheScope "private": a listing is cached per session (the SDK's cache
// belongs to one ClientSession), never shared with another connection to
// the same server, which may be another user's.
func TestListPrivateNotSharedTSServerNext(t *testing.T) {
	url := startTSServerNext(t) + "?ttl=60000&scope=private"
	for i := range 2 {
		b, err := Connect(context.Background(), mcpconfig.Server{Name: "ts", URL: url})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		b.Close()
		if n := tsStats(t, url)["tools/list"]; n != i+1 {
			t.Errorf("after connection %d: %d tools/list requests, want %d", i+1, n, i+1)
		}
	}
}

// A change made right after the connect is not lost: the SDK's connect
// returns once the server has answered the listen request, so the server
// announces the change (with the TTL of a minute nothing else could bring
// it).
func TestListenChangeRightAfterConnectTSServerNext(t *testing.T) {
	url := startTSServerNext(t) + "?ttl=60000"
	for range 5 {
		b, err := Connect(context.Background(), mcpconfig.Server{Name: "ts", URL: url})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := adExec(t, adTool(t, b, "grow"), `{}`); err != nil {
			t.Fatal(err)
		}
		waitForTool(t, b, "extra")
		b.Close()
	}
}
