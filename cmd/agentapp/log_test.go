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
