package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/internal/testkit"
)

// The personal numbers of the test document, and what the PII guard makes
// of them.
const (
	piiPhone       = "13812345678"
	piiPhoneMasked = "138****5678"
	piiCard        = "6222021234567890123"
	piiCardMasked  = "6222***********0123"
)

// TestServePIIGuard runs `agentapp serve` as Claude Desktop does, with the
// variables of the "env" block of its config, on a data dir holding a
// document with a phone number and a card number, and checks what leaves
// the server: tool output (searchKnowledge, createTicket) and the document
// itself (resources/list, resources/read).
func TestServePIIGuard(t *testing.T) {
	bin := agentappBin(t)
	data := t.TempDir()
	doc := filepath.Join(t.TempDir(), "contact.md")
	text := "# 售后联系方式 " + piiPhone + "\n\n售后客服电话 " + piiPhone + "，退款到账卡号 " + piiCard + "。\n"
	if err := os.WriteFile(doc, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runChatCLI(t, "", "--data-dir", data, "kb", "ingest", doc); code != 0 {
		t.Fatalf("ingest: exit %d, %s", code, errOut)
	}

	t.Run("on", func(t *testing.T) {
		s := startServe(t, bin, data, "AGENT_GUARD_PII=1")
		out := s.exercise()
		for _, part := range []string{"searchKnowledge", "createTicket", "resources/list", "resources/read"} {
			got := out[part]
			if strings.Contains(got, piiPhone) || strings.Contains(got, piiCard) {
				t.Errorf("%s: raw number with AGENT_GUARD_PII=1:\n%s", part, got)
			}
			if !strings.Contains(got, piiPhoneMasked) {
				t.Errorf("%s: no %s with AGENT_GUARD_PII=1:\n%s", part, piiPhoneMasked, got)
			}
		}
		for _, part := range []string{"searchKnowledge", "resources/read"} {
			if !strings.Contains(out[part], piiCardMasked) {
				t.Errorf("%s: no %s with AGENT_GUARD_PII=1:\n%s", part, piiCardMasked, out[part])
			}
		}
		stderr := s.close()
		if !strings.Contains(stderr, "guard:     PII (AGENT_GUARD_PII)") {
			t.Errorf("the banner does not say the PII guard is on:\n%s", stderr)
		}
		if strings.Contains(stderr, "warning") {
			t.Errorf("unexpected warning:\n%s", stderr)
		}
	})

	t.Run("off", func(t *testing.T) {
		s := startServe(t, bin, data)
		out := s.exercise()
		for _, part := range []string{"searchKnowledge", "createTicket", "resources/list", "resources/read"} {
			if !strings.Contains(out[part], piiPhone) {
				t.Errorf("%s: without AGENT_GUARD_PII the number should be as ingested:\n%s", part, out[part])
			}
		}
		var read struct {
			Contents []struct{ Text string } `json:"contents"`
		}
		if err := json.Unmarshal([]byte(out["resources/read"]), &read); err != nil || len(read.Contents) != 1 || read.Contents[0].Text != text {
			t.Errorf("resources/read without AGENT_GUARD_PII is not the document as ingested (%v):\n%s", err, out["resources/read"])
		}
		if stderr := s.close(); strings.Contains(stderr, "guard:") {
			t.Errorf("the banner mentions PII with the guard off:\n%s", stderr)
		}
	})

	// The other guards protect the chat from MCP servers' tools; serve says
	// once that it ignores them, and a value it does not use (even a bad
	// one) does not stop it.
	t.Run("chat-only guards", func(t *testing.T) {
		s := startServe(t, bin, data, "AGENT_GUARD_ALLOWLIST=getOrderStatus", "AGENT_GUARD_INPUT=maybe", "AGENT_GUARD_CONFIRM=")
		if out := s.exercise(); !strings.Contains(out["searchKnowledge"], piiPhone) {
			t.Errorf("searchKnowledge with only chat-side guards set should be unmasked:\n%s", out["searchKnowledge"])
		}
		stderr := s.close()
		want := "agentapp: warning: serve ignores AGENT_GUARD_ALLOWLIST, AGENT_GUARD_INPUT: "
		if n := strings.Count(stderr, "warning"); n != 1 || !strings.Contains(stderr, want) {
			t.Errorf("want one warning starting %q, got:\n%s", want, stderr)
		}
	})

	t.Run("bad value", func(t *testing.T) {
		fresh := filepath.Join(t.TempDir(), "data")
		cmd := exec.Command(bin, "serve")
		cmd.Env = serveEnv(fresh, "AGENT_GUARD_PII=maybe")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Stdin = strings.NewReader("")
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("want exit code 2, got %v; stderr:\n%s", err, stderr.String())
		}
		if !strings.Contains(stderr.String(), `AGENT_GUARD_PII="maybe"`) || !strings.Contains(stderr.String(), "want 1 or true") ||
			strings.Contains(stderr.String(), "MCP server on") || stdout.Len() != 0 {
			t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
		}
		if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the data dir was created before the bad switch was refused (stat: %v)", err)
		}
	})
}

// serveEnv is a minimal environment, so that the developer's AGENT_GUARD_*
// variables do not leak into the server.
func serveEnv(data string, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + data, "AGENTAPP_DATA_DIR=" + data}, extra...)
}

// serveProcess is `agentapp serve` on stdio, driven one request at a time.
type serveProcess struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *testkit.SyncBuffer
	id     int
}

func startServe(t *testing.T, bin, data string, env ...string) *serveProcess {
	t.Helper()
	s := &serveProcess{t: t, stderr: &testkit.SyncBuffer{}}
	s.cmd = exec.Command(bin, "serve")
	s.cmd.Env = serveEnv(data, env...)
	s.cmd.Stderr = s.stderr
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.stdout = bufio.NewReader(out)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			_ = s.cmd.Process.Kill()
			_ = s.cmd.Wait()
		}
	})
	return s
}

// request sends one request and returns the raw result of its answer.
func (s *serveProcess) request(method, params string) string {
	s.t.Helper()
	s.id++
	if _, err := fmt.Fprintf(s.stdin, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", s.id, method, params); err != nil {
		s.t.Fatalf("writing %s: %v; stderr:\n%s", method, err, s.stderr.String())
	}
	for {
		line, err := s.stdout.ReadString('\n')
		if err != nil {
			s.t.Fatalf("reading the answer to %s: %v; stderr:\n%s", method, err, s.stderr.String())
		}
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			s.t.Fatalf("stdout line is not JSON: %q", line)
		}
		if msg.ID == nil || *msg.ID != s.id {
			continue // a notification
		}
		if msg.Error != nil {
			s.t.Fatalf("%s %s: %s", method, params, msg.Error)
		}
		return string(msg.Result)
	}
}

// exercise initializes a session and returns, by name, the raw results of
// the calls that can carry the document's text. The results are JSON, so
// the Chinese text and digits appear as written.
func (s *serveProcess) exercise() map[string]string {
	s.t.Helper()
	s.request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pii-test","version":"1"}}`)
	if _, err := io.WriteString(s.stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		s.t.Fatal(err)
	}
	out := map[string]string{
		"searchKnowledge": s.request("tools/call", `{"name":"searchKnowledge","arguments":{"query":"售后客服电话"}}`),
		"createTicket":    s.request("tools/call", `{"name":"createTicket","arguments":{"subject":"请回电","description":"客户电话 `+piiPhone+`"}}`),
		"resources/list":  s.request("resources/list", `{}`),
	}
	var list struct {
		Resources []map[string]any `json:"resources"`
	}
	if err := json.Unmarshal([]byte(out["resources/list"]), &list); err != nil {
		s.t.Fatal(err)
	}
	for _, r := range list.Resources {
		if name, _ := r["name"].(string); strings.HasPrefix(name, "contact.md-") {
			// Keep only this document's entry (title, description …), so
			// the checks are about it.
			b, _ := json.Marshal(r)
			out["resources/list"] = string(b)
			out["resources/read"] = s.request("resources/read", fmt.Sprintf(`{"uri":%q}`, r["uri"]))
		}
	}
	if out["resources/read"] == "" {
		s.t.Fatalf("contact.md is not in resources/list: %s", out["resources/list"])
	}
	for name, res := range out {
		if strings.Contains(res, `"isError":true`) {
			s.t.Fatalf("%s failed: %s", name, res)
		}
	}
	return out
}

// close ends the session with EOF on stdin, as a client does, and returns
// what the server wrote on stderr.
func (s *serveProcess) close() string {
	s.t.Helper()
	s.stdin.Close()
	_, _ = io.Copy(io.Discard, s.stdout)
	if err := s.cmd.Wait(); err != nil {
		s.t.Errorf("exit after stdin EOF: %v (want 0); stderr:\n%s", err, s.stderr.String())
	}
	return s.stderr.String()
}
