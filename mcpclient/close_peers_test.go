package mcpclient

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpclient/supervise"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEverythingClosesOnEOF (issue 44, point 10): server-everything,
// started as `node …/dist/index.js stdio` as a user writes it, exits once
// its stdin is closed, so Close takes well under the EOF grace period and
// logs no SIGTERM or kill warning. A close sequence that signalled first,
// or waited out the grace, would add its 2 s to every `agentapp mcp call`.
func TestEverythingClosesOnEOF(t *testing.T) {
	bin := peerBin(t, "mcp-server-everything")
	entry, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	const bound = supervise.DefaultEOFGrace * 3 / 4
	var worst time.Duration
	for i := range 3 {
		var logs bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		cfg := mcpconfig.Server{Name: "everything", Command: "node", Args: []string{entry, "stdio"}}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		b, err := Connect(ctx, cfg, WithLogger(logger))
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		if _, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}); err != nil {
			t.Errorf("echo: %v", err)
		}
		cancel()
		start := time.Now()
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		d := time.Since(start)
		worst = max(worst, d)
		t.Logf("close %d took %v", i, d)
		if d > bound {
			t.Errorf("Close took %v, want under %v: the server was not let exit on stdin EOF", d, bound)
		}
		for _, w := range []string{"SIGTERM", "killing", "level=WARN"} {
			if bytes.Contains(logs.Bytes(), []byte(w)) {
				t.Errorf("Close logged %q:\n%s", w, logs.Bytes())
			}
		}
	}
	t.Logf("worst close of 3: %v (bound %v)", worst, bound)
}
