package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestCLIHandlerFormat(t *testing.T) {
	var buf bytes.Buffer
	log := cliLogger(&buf, slog.LevelInfo)
	log.Info("knowledge base seeded", "documents", 4)
	log.With("server", "files").Warn("skipped a line", "line", "not json")
	log.Debug("hidden")
	want := "agentapp: knowledge base seeded (documents 4)\n" +
		"agentapp: warning: skipped a line (server files, line \"not json\")\n"
	if buf.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
}

// TestCLIHandlerEscapes: a record's message and values are escaped, so a
// value quoting a server (a skipped line, a tool name) cannot put a
// control character or an escape sequence on the terminal.
func TestCLIHandlerEscapes(t *testing.T) {
	var buf bytes.Buffer
	log := cliLogger(&buf, slog.LevelInfo)
	log.Warn("skipped \x1b[2J", "line", "\x1b[31mred", "name", "a\u202eb", "plain", "ok")
	want := `agentapp: warning: skipped \x1b[2J (line \x1b[31mred, name a\u202eb, plain ok)` + "\n"
	if buf.String() != want {
		t.Fatalf("got:\n%q\nwant:\n%q", buf.String(), want)
	}
}

// TestCLIHandlerReadsAsASentence: the attributes never come out as
// key=value; an error or reason follows the message after a colon.
func TestCLIHandlerReadsAsASentence(t *testing.T) {
	var buf bytes.Buffer
	log := cliLogger(&buf, slog.LevelInfo)
	log.Info("mcp: server restarted", "server", "index-2", "tools", 9)
	log.Warn("mcp: server stopped; it is restarted on the next call", "server", "files", "reason", "exit status 1")
	want := "agentapp: mcp: server restarted (server index-2, tools 9)\n" +
		"agentapp: warning: mcp: server stopped; it is restarted on the next call (server files): exit status 1\n"
	if buf.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
}

// TestLogFormatJSON: --log-format json makes the records JSON objects, one
// per line; an unknown format is a usage error.
func TestLogFormatJSON(t *testing.T) {
	chatEnv(t)
	data := t.TempDir()
	_, errOut, code := runChatCLI(t, "", "--log-format", "json", "chat", "--data-dir", data, "--model", "offline", "-p", "hi")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rec map[string]any
	var found bool
	for _, line := range strings.Split(errOut, "\n") {
		if strings.HasPrefix(line, "{") {
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("not JSON: %q", line)
			}
			if rec["msg"] == "knowledge base seeded with the demo FAQ" && rec["documents"] == float64(4) {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no JSON record of the seeding:\n%s", errOut)
	}
	// serve's banner too is one record, its rows as fields.
	_, errOut, code = runChatCLI(t, "", "--log-format", "json", "serve", "--data-dir", data)
	if code != 0 {
		t.Fatalf("serve: exit %d: %s", code, errOut)
	}
	var banner bool
	for line := range strings.Lines(errOut) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("serve wrote a line that is not JSON: %q", line)
		}
		banner = banner || (strings.Contains(rec["msg"].(string), "MCP server on stdio") && rec["tools"] != nil && rec["data_dir"] == data)
	}
	if !banner {
		t.Errorf("serve wrote no banner record:\n%s", errOut)
	}
	if _, errOut, code := runChatCLI(t, "", "--log-format", "xml", "chat", "-p", "hi"); code != 2 || !strings.Contains(errOut, "use text or json") {
		t.Errorf("--log-format xml: exit %d, %s", code, errOut)
	}
}
