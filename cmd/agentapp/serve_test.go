package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestServeSubprocess runs the real binary the way an MCP client does.
func TestServeSubprocess(t *testing.T) {
	bin := agentappBin(t)

	t.Run("stdio", func(t *testing.T) { testServeStdio(t, bin) })
	t.Run("http", func(t *testing.T) { testServeHTTP(t, bin) })
	t.Run("non-loopback without token", func(t *testing.T) {
		cmd := exec.Command(bin, "serve", "--http", "0.0.0.0:0")
		cmd.Env = append(os.Environ(), "AGENTAPP_DATA_DIR="+t.TempDir(), "AGENTAPP_SERVER_TOKEN=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("want exit code 1, got %v", err)
		}
		if !strings.Contains(stderr.String(), "refusing to serve on 0.0.0.0:0 without a bearer token") || stdout.Len() != 0 {
			t.Fatalf("stdout %q, stderr %q", stdout.String(), stderr.String())
		}
	})
}

func testServeStdio(t *testing.T, bin string) {
	dataDir := t.TempDir()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "AGENTAPP_DATA_DIR="+dataDir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	defer func() {
		if !exited {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	stdout := bufio.NewReader(stdoutPipe)
	var lines []string
	exchange := func(req string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(stdin, req+"\n"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(req, `"id"`) {
			return nil // a notification has no answer
		}
		line, err := stdout.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the answer to %s: %v; stderr:\n%s", req, err, stderr.String())
		}
		lines = append(lines, line)
		var msg map[string]any
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("stdout line is not JSON: %q", line)
		}
		return msg
	}

	init := exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"subprocess-test","version":"1"}}}`)
	if info, _ := init["result"].(map[string]any)["serverInfo"].(map[string]any); info["name"] != "agentapp" || info["version"] != binaryBuildInfo(t, agentappBin(t)).Short() {
		t.Fatalf("initialize: %v", init)
	}
	exchange(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	list := exchange(`{"jsonrpc":"2.0","id":"two","method":"tools/list"}`)
	if tools, _ := list["result"].(map[string]any)["tools"].([]any); len(tools) != 5 {
		t.Fatalf("tools/list: %v", list)
	}
	call := exchange(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-2048"}}}`)
	if sc, _ := call["result"].(map[string]any)["structuredContent"].(map[string]any); sc["status"] != "仓库打包中" {
		t.Fatalf("tools/call: %v", call)
	}
	read := exchange(`{"jsonrpc":"2.0","id":4,"method":"resources/list"}`)
	if rs, _ := read["result"].(map[string]any)["resources"].([]any); len(rs) == 0 {
		t.Fatalf("resources/list: %v", read)
	}
	bad := exchange(`{"jsonrpc":"2.0","id":5,"method":"no/such/method"}`)
	if bad["error"] == nil {
		t.Fatalf("unknown method: %v", bad)
	}

	// EOF on stdin ends the server cleanly.
	stdin.Close()
	rest, err := io.ReadAll(stdout)
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	exited = true
	if err != nil {
		t.Fatalf("exit after stdin EOF: %v (want 0); stderr:\n%s", err, stderr.String())
	}
	for _, l := range strings.SplitAfter(string(rest), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	// Every stdout line is a JSON-RPC 2.0 message: stdout belongs to the
	// protocol.
	for _, l := range lines {
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &msg); err != nil || msg.JSONRPC != "2.0" || !strings.HasSuffix(l, "\n") ||
			(msg.Method == "" && (msg.ID == nil || (msg.Result == nil) == (msg.Error == nil))) {
			t.Errorf("stdout line is not a JSON-RPC 2.0 message: %q", l)
		}
	}
	banner := stderr.String()
	for _, want := range []string{"MCP server on stdio", "getOrderStatus, createTicket, searchKnowledge", "docs://kb/{docId}", dataDir} {
		if !strings.Contains(banner, want) {
			t.Errorf("stderr banner lacks %q:\n%s", want, banner)
		}
	}
}

func testServeHTTP(t *testing.T, bin string) {
	if runtime.GOOS == "windows" {
		t.Skip("the graceful-shutdown check sends SIGTERM, which Windows processes cannot receive")
	}
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "AGENTAPP_DATA_DIR="+t.TempDir(), "AGENTAPP_SERVER_TOKEN=tok-123")
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	defer func() {
		if !exited {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()

	// The banner names the actual address of the ephemeral port.
	stderr := bufio.NewReader(stderrPipe)
	addrRE := regexp.MustCompile(`MCP server on (http://127\.0\.0\.1:[1-9][0-9]*/mcp)`)
	var url string
	var banner strings.Builder
	for url == "" {
		line, err := stderr.ReadString('\n')
		banner.WriteString(line)
		if err != nil {
			t.Fatalf("no address in the banner: %v\n%s", err, banner.String())
		}
		if m := addrRE.FindStringSubmatch(line); m != nil {
			url = m[1]
		}
	}

	post := func(token string) int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	if code := post(""); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", code)
	}
	if code := post("tok-123"); code != http.StatusOK {
		t.Errorf("with the token from AGENTAPP_SERVER_TOKEN: %d, want 200", code)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stderr)
	err = cmd.Wait()
	exited = true
	if err != nil {
		t.Fatalf("exit after SIGTERM: %v (want 0); stderr:\n%s%s", err, banner.String(), rest)
	}
	if !strings.Contains(string(rest), "stopped") || stdout.Len() != 0 {
		t.Errorf("stdout %q; stderr after SIGTERM %q", stdout.String(), rest)
	}
}
