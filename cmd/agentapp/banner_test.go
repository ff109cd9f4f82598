package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// TestLineLogger: lines written in pieces become one record each, a
// piece without its end waits for it, and a line longer than the bound is
// logged in parts instead of growing the buffer.
func TestLineLogger(t *testing.T) {
	var out bytes.Buffer
	l := &lineLogger{logger: slog.New(slog.NewJSONHandler(&out, nil))}
	for _, p := range []string{"[trace] step 1 ", "think\n[trace] step 1 done\n[trace] par", "tial"} {
		l.Write([]byte(p))
	}
	long := strings.Repeat("x", maxTraceLine+10)
	l.Write([]byte(long))
	var msgs []string
	for line := range strings.Lines(out.String()) {
		var rec struct {
			Msg   string
			Trace bool
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil || !rec.Trace {
			t.Fatalf("record %q: %v", line, err)
		}
		msgs = append(msgs, rec.Msg)
	}
	if len(msgs) != 3 || msgs[0] != "[trace] step 1 think" || msgs[1] != "[trace] step 1 done" || msgs[2] != "[trace] partial"+long {
		t.Errorf("records %.80q", msgs)
	}
	if l.partial != nil {
		t.Errorf("%d bytes held after the cap", len(l.partial))
	}
}
