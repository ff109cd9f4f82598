package main

import (
	"bytes"
	"log/slog"
	"testing"
)

func TestCLIHandlerFormat(t *testing.T) {
	var buf bytes.Buffer
	log := cliLogger(&buf, slog.LevelInfo)
	log.Info("knowledge base seeded", "documents", 4)
	log.With("server", "files").Warn("skipped a line", "line", "not json")
	log.Debug("hidden")
	want := "agentapp: knowledge base seeded documents=4\n" +
		"agentapp: warning: skipped a line server=files line=\"not json\"\n"
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
	want := `agentapp: warning: skipped \x1b[2J line="\x1b[31mred" name="a\u202eb" plain=ok` + "\n"
	if buf.String() != want {
		t.Fatalf("got:\n%q\nwant:\n%q", buf.String(), want)
	}
}
