package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/mcpclient"
)

func everythingBin(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", ".ci", "peers", "node_modules", ".bin", "mcp-server-everything"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("server-everything is not installed; run bash .ci/install-peers")
		}
		t.Skip("server-everything is not installed; run bash .ci/install-peers (needs node and npm)")
	}
	return p
}

// The client half through agentapp mcp, against server-everything over
// stdio and streamable HTTP: the server's sampling, elicitation and roots
// requests get the answers the flags ask for, progress reaches stderr,
// and the prompts are listed and got.
func TestMCPClientSideEverything(t *testing.T) {
	bin := everythingBin(t)
	t.Setenv("OPENAI_API_KEY", "") // sampling allow answers with the offline model
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			server := []string{"--", bin}
			if transport == "http" {
				server = []string{"--server", testkit.StartHTTPPeer(t, "listening on port", bin, "streamableHttp") + "/mcp"}
			}
			run := func(args ...string) (string, string, int) {
				t.Helper()
				return runChatCLI(t, "", append(append([]string{"mcp"}, args...), server...)...)
			}
			// Sampling: denied by default, answered by the model with allow.
			out, stderr, code := run("call", "trigger-sampling-request", `{"prompt":"hello"}`)
			if code != 1 || !strings.Contains(out, "denies sampling") {
				t.Errorf("default sampling: exit %d\n%s\n%s", code, out, stderr)
			}
			out, stderr, code = run("call", "trigger-sampling-request", `{"prompt":"hello"}`, "--sampling", "allow")
			if code != 0 || !strings.Contains(out, `\"model\": \"offline-demo\"`) {
				t.Errorf("sampling allow: exit %d\n%s\n%s", code, out, stderr)
			}
			// ask needs someone at a terminal to approve.
			out, stderr, code = run("call", "trigger-sampling-request", `{"prompt":"hello"}`, "--sampling", "ask")
			if code != 1 || !strings.Contains(out, "stdin is not a terminal") || !strings.Contains(stderr, "nobody could approve: refused") {
				t.Errorf("sampling ask off a terminal: exit %d\n%s\n%s", code, out, stderr)
			}
			// Elicitation: declined off a terminal and with decline; the
			// defaults cannot answer a form whose required field has none.
			for _, flags := range [][]string{nil, {"--elicit", "decline"}, {"--elicit", "defaults"}} {
				out, stderr, code = run(append([]string{"call", "trigger-elicitation-request"}, flags...)...)
				if code != 0 || !strings.Contains(out, "User declined") {
					t.Errorf("elicit %v: exit %d\n%s\n%s", flags, code, out, stderr)
				}
			}
			if !strings.Contains(stderr, "required fields name have no defaults") {
				t.Errorf("--elicit defaults does not say why it declined:\n%s", stderr)
			}
			// Roots: --root, else the working directory.
			dir := t.TempDir()
			out, stderr, code = run("call", "get-roots-list", "--root", dir)
			if code != 0 || !strings.Contains(out, "file://"+filepath.ToSlash(dir)) {
				t.Errorf("--root: exit %d\n%s\n%s", code, out, stderr)
			}
			wd, _ := os.Getwd()
			if out, _, _ = run("call", "get-roots-list"); !strings.Contains(out, "file://"+filepath.ToSlash(wd)) {
				t.Errorf("default roots do not name the working directory %s:\n%s", wd, out)
			}
			// Progress on stderr.
			_, stderr, code = run("call", "trigger-long-running-operation", `{"duration":0.3,"steps":3}`)
			if code != 0 || !strings.Contains(stderr, "trigger-long-running-operation 3/3") {
				t.Errorf("progress: exit %d\n%s", code, stderr)
			}
			// Prompts.
			out, stderr, code = run("prompts")
			if code != 0 || !strings.Contains(out, `"name": "args-prompt"`) || !strings.Contains(out, `"name": "simple-prompt"`) {
				t.Errorf("prompts: exit %d\n%s\n%s", code, out, stderr)
			}
			out, stderr, code = run("prompt", "args-prompt", `{"city":"Paris"}`)
			if code != 0 || !strings.Contains(out, "What's weather in Paris?") {
				t.Errorf("prompt: exit %d\n%s\n%s", code, out, stderr)
			}
			if _, stderr, code = run("prompt", "args-prompt", `{"city":1}`); code != 2 || !strings.Contains(stderr, "prompt arguments are strings") {
				t.Errorf("a number argument: exit %d\n%s", code, stderr)
			}
		})
	}
}

func TestMCPClientSideUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "tools", "--sampling", "sometimes", "--", "true"}, "--sampling \"sometimes\": want deny, ask or allow"},
		{[]string{"mcp", "tools", "--elicit", "maybe", "--", "true"}, "--elicit \"maybe\": want ask, defaults or decline"},
		{[]string{"mcp", "tools", "--mcp-log-level", "loud", "--", "true"}, "--mcp-log-level \"loud\": want one of debug, info"},
		{[]string{"chat", "--mcp-log-level", "loud"}, "--mcp-log-level \"loud\""},
	} {
		_, stderr, code := runChatCLI(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %s", c.args, code, stderr)
		}
	}
}

// Server log messages reach stderr from the chosen level on, one line
// naming the server, at most serverLogsPerSecond a second; the trace gets
// every one.
func TestServerLogPrinter(t *testing.T) {
	var out, tr strings.Builder
	p := &serverLogPrinter{w: &out, min: "warning", traceTo: &tr}
	p.print(mcpclient.ServerLog{Server: "everything", Level: "info", Text: "chatter"})
	p.print(mcpclient.ServerLog{Server: "everything", Level: "error", Logger: "db", Text: "disk full"})
	if got := out.String(); got != "agentapp: MCP server everything/db (error): disk full\n" {
		t.Errorf("stderr %q", got)
	}
	if !strings.Contains(tr.String(), "[trace] mcp log everything info: chatter") || !strings.Contains(tr.String(), "[trace] mcp log everything error: disk full") {
		t.Errorf("trace %q", tr.String())
	}
	for i := 0; i < 3*serverLogsPerSecond; i++ {
		p.print(mcpclient.ServerLog{Server: "s", Level: "alert", Text: "flood"})
	}
	if n := strings.Count(out.String(), "flood"); n != serverLogsPerSecond-1 {
		t.Errorf("%d flood lines shown in one second, want %d", n, serverLogsPerSecond-1)
	}
	p.window = p.window.Add(-2 * time.Second) // the next window
	p.print(mcpclient.ServerLog{Server: "s", Level: "alert", Text: "later"})
	if !strings.Contains(out.String(), "… and 41 more log messages from MCP servers not shown") {
		t.Errorf("no count of the dropped lines:\n%s", out.String())
	}
	var trace strings.Builder
	traceProgress(&trace)(mcpclient.Progress{Server: "everything", Tool: "op\x1b[2J", Progress: 3, Total: 5})
	if got := trace.String(); got != "[trace] mcp progress everything op\\x1b[2J 3/5\n" {
		t.Errorf("progress trace line %q", got)
	}
}
