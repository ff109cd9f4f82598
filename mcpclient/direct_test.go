package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentapp/agentapp/mcpconfig"
)

// directCallsSent returns how many calls b's live stdio connection sent on
// the direct path.
func directCallsSent(t *testing.T, b *Bridge) int64 {
	t.Helper()
	c := b.current()
	if c == nil || c.direct == nil {
		return 0
	}
	return c.direct.Sent()
}

// directCase is one call made through both paths.
type directCase struct {
	tool, args string
}

// compareDirect connects cfg twice, once on the direct path and once on
// the SDK's, makes the same calls through both, and requires the same
// outcome from each: the adapted tool's output byte for byte (or the same
// error message), and the same decoded result from Bridge.CallTool.
func compareDirect(t *testing.T, cfg mcpconfig.Server, cases []directCase, opts ...ConnectOption) {
	t.Helper()
	connect := func(extra ...ConnectOption) *Bridge {
		b, err := Connect(context.Background(), cfg, append(append([]ConnectOption{WithGracePeriods(2*time.Second, 2*time.Second)}, opts...), extra...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		return b
	}
	direct, plain := connect(), connect(withSDKToolCalls())
	if direct.current().direct == nil {
		t.Fatal("the stdio bridge has no direct path")
	}
	if plain.current().direct != nil {
		t.Fatal("withSDKToolCalls left the direct path on")
	}
	for _, tc := range cases {
		remote, ok := direct.RemoteName(tc.tool)
		if !ok {
			remote = tc.tool // a tool the server does not offer: its JSON-RPC error
		}
		var args json.RawMessage
		if tc.args != "" {
			args = json.RawMessage(tc.args)
		}
		p := func() *mcp.CallToolParams { return &mcp.CallToolParams{Name: remote, Arguments: args} }
		gotRes, gotErr := direct.CallTool(context.Background(), p())
		wantRes, wantErr := plain.CallTool(context.Background(), p())
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Errorf("%s %s: CallTool error %v, on the SDK's path %v", tc.tool, tc.args, gotErr, wantErr)
		}
		if d := diffToolResults(gotRes, wantRes); d != "" {
			t.Errorf("%s %s: CallTool result differs from the SDK's path (-SDK +direct):\n%s", tc.tool, tc.args, d)
		}
		if !ok {
			continue
		}
		gotOut, gotMsg := adapted(direct, tc.tool, args)
		wantOut, wantMsg := adapted(plain, tc.tool, args)
		if gotOut != wantOut || gotMsg != wantMsg {
			t.Errorf("%s %s: the model sees\n%q (error %q)\non the direct path and\n%q (error %q)\non the SDK's", tc.tool, tc.args, gotOut, gotMsg, wantOut, wantMsg)
		}
	}
	if n := directCallsSent(t, direct); n < int64(len(cases)) {
		t.Errorf("%d calls on the direct path, want at least %d", n, len(cases))
	}
	if n := directCallsSent(t, plain); n != 0 {
		t.Errorf("%d calls on the direct path of the SDK-path bridge", n)
	}
}

// adapted runs the adapted tool and returns the bytes the model sees, or
// the error message.
func adapted(b *Bridge, name string, args json.RawMessage) (string, string) {
	for _, tl := range b.Tools() {
		if tl.Name != name {
			continue
		}
		out, err := tl.Execute(context.Background(), args)
		if err != nil {
			return "", err.Error()
		}
		raw, ok := out.(json.RawMessage)
		if !ok {
			b, _ := json.Marshal(out)
			return string(b), ""
		}
		return string(raw), ""
	}
	return "", "no tool " + name
}

func TestDirectMatchesSDKPathTestServer(t *testing.T) {
	compareDirect(t, asLegacyStdio(t, mcpconfig.Server{Name: "ts", Command: testServerPath(t)}), []directCase{
		{"echo", `{"text":"where is A-1024? \u00e9 已发货 \"quoted\" <tag> &amp;"}`},
		{"echo", `{"text":""}`},
		{"echo", `{}`}, // the server's JSON-RPC error: the argument is missing
		{"noise", `{}`},
		{"big", `{"n":200000}`},
		{"env", `{"name":"PATH"}`},
		{"fail", `{}`},
		{"fail", ``},
		{"no-such-tool", `{}`},
	})
}

func TestDirectMatchesSDKPathRawServer(t *testing.T) {
	// Hand-written answers, among them a legacy toolResult, which the
	// capture layer lifts into _meta on the SDK's path.
	compareDirect(t, mcpconfig.Server{Name: "raw", Command: testServerPath(t), Args: []string{"-mode", "raw"}}, []directCase{
		{"a", `{}`},
		{"legacy", `{}`},
		// A result asking for input goes to the SDK's path, which runs
		// the multi-round-trip loop (here: gives up on load shedding).
		{"input", `{}`},
	})
}

func TestDirectMatchesSDKPathEverything(t *testing.T) {
	bin := peerBin(t, "mcp-server-everything")
	compareDirect(t, mcpconfig.Server{Name: "everything", Command: bin, Args: []string{"stdio"}}, []directCase{
		{"echo", `{"message":"hi"}`},
		{"echo", `{"message":"ünïcödé \n 😀"}`},
		{"echo", `{}`}, // refused: the message is required
		{"get-sum", `{"a":2,"b":3}`},
		{"get-sum", `{"a":"x"}`},
		{"get-tiny-image", `{}`},
		{"get-structured-content", `{"location":"Chicago"}`},
		{"get-resource-links", `{"count":3}`},
		{"get-annotated-message", `{"messageType":"error","includeImage":true}`},
		{"get-annotated-message", `{"messageType":"success"}`},
		{"get-annotated-message", `{"messageType":"debug","includeImage":false}`},
		{"get-resource-reference", `{"resourceType":"Text","resourceId":1}`},
		{"get-resource-reference", `{"resourceType":"Blob","resourceId":2}`},
		{"no-such-tool", `{}`},
	})
}

// TestDirectCallFailsWithTheConnection: a server that exits while a direct
// call waits fails the call promptly with the SDK path's error class, and
// the next call goes to the restarted server, on the direct path again.
func TestDirectCallFailsWithTheConnection(t *testing.T) {
	for _, sdk := range []bool{false, true} {
		opts := []ConnectOption{WithGracePeriods(time.Second, time.Second)}
		if sdk {
			opts = append(opts, withSDKToolCalls())
		}
		b, err := Connect(context.Background(), asLegacyStdio(t, mcpconfig.Server{Name: "crash", Command: testServerPath(t), Args: []string{"-crash-every", "2"}}), opts...)
		if err != nil {
			t.Fatal(err)
		}
		echo := adTool(t, b, "echo")
		if _, err := echo.Execute(context.Background(), json.RawMessage(`{"text":"1"}`)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = echo.Execute(context.Background(), json.RawMessage(`{"text":"2"}`))
		var exit *serverExitError
		if !errors.As(err, &exit) || !strings.Contains(err.Error(), "exited (exit status 7)") {
			t.Errorf("sdk path %v: the call the crash cut short: %v; want a *serverExitError naming status 7", sdk, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("sdk path %v: the failed call took %s", sdk, d)
		}
		if _, err := echo.Execute(context.Background(), json.RawMessage(`{"text":"3"}`)); err != nil {
			t.Errorf("sdk path %v: the call after the restart: %v", sdk, err)
		}
		if n := directCallsSent(t, b); (n > 0) == sdk {
			t.Errorf("sdk path %v: %d direct calls on the restarted connection", sdk, n)
		}
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	}
}

// TestDirectCallCancelledByClose: Close cancels a direct call in flight
// (the server's tool sees the cancellation) and does not hang.
func TestDirectCallCancelledByClose(t *testing.T) {
	b, err := Connect(context.Background(), asLegacyStdio(t, mcpconfig.Server{Name: "ts", Command: testServerPath(t)}), WithGracePeriods(time.Second, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.CallTool(context.Background(), &mcp.CallToolParams{Name: "sleep"})
		done <- err
	}()
	for end := time.Now().Add(10 * time.Second); directCallsSent(t, b) == 0 && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if tail := b.stderrTail(); len(tail) > 0 && strings.Contains(strings.Join(tail, "\n"), "sleep started") {
			break
		}
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, errBridgeClosed) {
			t.Errorf("the call cut short by Close: %v; want the bridge-closed error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the direct call still waits after Close")
	}
}

// TestDirectCallCancelSendsNotification: a direct call whose context ends
// sends notifications/cancelled with its string id, and the server's tool
// is cancelled (its stderr says so).
func TestDirectCallCancelSendsNotification(t *testing.T) {
	b, err := Connect(context.Background(), asLegacyStdio(t, mcpconfig.Server{Name: "ts", Command: testServerPath(t)}), WithGracePeriods(time.Second, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = b.CallTool(ctx, &mcp.CallToolParams{Name: "sleep"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the cancelled call: %v", err)
	}
	if directCallsSent(t, b) == 0 {
		t.Fatal("the call did not take the direct path")
	}
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(strings.Join(b.stderrTail(), "\n"), "sleep cancelled") {
			return
		}
	}
	t.Errorf("the server never saw the cancellation; its stderr: %q", b.stderrTail())
}

// diffToolResults compares two decoded results; "" means equal.
func diffToolResults(got, want *mcp.CallToolResult) string {
	if reflect.DeepEqual(got, want) {
		return "" // cmp.Diff takes minutes on deeply nested arrays
	}
	if d := cmp.Diff(want, got, cmpopts.IgnoreUnexported(mcp.CallToolResult{})); d != "" {
		return d
	}
	if want != nil && got.NeedsInput() != want.NeedsInput() {
		return "NeedsInput differs"
	}
	return ""
}

// At protocol 2026-07-28 the direct path carries the session's _meta (the
// meta tool shows what the server received: the same on both paths) and
// decodes the same results; so does the tasks extension's call on it.
func TestDirectMatchesSDKPathTestServerNext(t *testing.T) {
	cases := []directCase{
		{"meta", `{}`},
		{"echo", `{"text":"where is A-1024? \u00e9 已发货 \"quoted\" <tag> &amp;"}`},
		{"echo", `{}`},
		{"noise", `{}`},
		{"big", `{"n":200000}`},
		{"fail", `{}`},
		{"no-such-tool", `{}`},
	}
	for _, args := range [][]string{{"-live"}, {"-live", "-ext-tasks"}} {
		cfg := mcpconfig.Server{Name: "ts", Command: testServerPath(t), Args: args}
		b, err := Connect(context.Background(), cfg, WithServerLogs("info", func(ServerLog) {}))
		if err != nil {
			t.Fatal(err)
		}
		v := b.session().InitializeResult().ProtocolVersion
		ext := b.extTasksOn()
		b.Close()
		if v != "2026-07-28" || ext != slices.Contains(args, "-ext-tasks") {
			t.Fatalf("%q: negotiated %s, tasks extension %v", args, v, ext)
		}
		compareDirect(t, cfg, cases, WithServerLogs("info", func(ServerLog) {}))
	}
}
