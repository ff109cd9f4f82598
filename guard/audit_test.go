package guard

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
)

// readAudit parses every line of an audit log, failing on any line that is
// not a JSON object with a time and an event.
func readAudit(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open audit log: %v", err)
	}
	defer f.Close()
	var lines []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("audit line %q is not JSON: %v", sc.Text(), err)
		}
		ts, _ := m["time"].(string)
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
			t.Errorf("audit line %q has no RFC 3339 time: %v", sc.Text(), err)
		}
		if m["event"] == "" || m["event"] == nil {
			t.Errorf("audit line %q has no event", sc.Text())
		}
		lines = append(lines, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestAuditAppendsJSONLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "audit.log")
	a := NewAudit(path, nil)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the log exists before any event: %v", err)
	}
	a.Record(Event{Event: EventAllowlistDenied, Tool: "t", Server: "s", Reason: "r <&>"})
	a.Record(Event{Event: EventIngestRejected, Document: "d.md", Chunk: 2, Pattern: "system-tag"})
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	// A second Audit on the same file appends, never truncates.
	b := NewAudit(path, nil)
	b.Record(Event{Event: EventConfirm, Decision: "approved"})
	b.Close()

	lines := readAudit(t, path)
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want 3", len(lines))
	}
	if lines[0]["tool"] != "t" || lines[0]["server"] != "s" || lines[0]["reason"] != "r <&>" {
		t.Errorf("line 1 = %v", lines[0])
	}
	if lines[1]["chunk"] != float64(2) || lines[1]["document"] != "d.md" {
		t.Errorf("line 2 = %v", lines[1])
	}
	if _, ok := lines[1]["tool"]; ok {
		t.Errorf("line 2 has an empty tool field: %v", lines[1])
	}
	if lines[2]["decision"] != "approved" {
		t.Errorf("line 3 = %v", lines[2])
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("audit log mode = %v, want 0600", perm)
		}
	}
}

func TestAuditSurvivesIOErrors(t *testing.T) {
	dir := t.TempDir()
	// The path's parent is a regular file, so the log can never be opened.
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	a := NewAudit(filepath.Join(blocker, "audit.log"), slog.New(slog.NewTextHandler(&logs, nil)))
	for range 5 {
		a.Record(Event{Event: EventInputRejected})
	}
	if n := strings.Count(logs.String(), "audit log failed"); n != 1 {
		t.Errorf("logged %d warnings, want exactly 1:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), blocker) {
		t.Errorf("warning does not name the path:\n%s", logs.String())
	}
}

// TestAuditNilLoggerDiscards: with no logger, a failing audit log says
// nothing, neither on stderr nor on the default logger. The test swaps
// os.Stderr and the default logger, so it must not run in parallel.
func TestAuditNilLoggerDiscards(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	global := testkit.RecordDefaultLogger(t)
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	oldStderr := os.Stderr
	os.Stderr = stderr
	t.Cleanup(func() { os.Stderr = oldStderr })

	NewAudit(filepath.Join(blocker, "audit.log"), nil).Record(Event{Event: EventInputRejected})

	os.Stderr = oldStderr
	if b, _ := os.ReadFile(stderr.Name()); len(b) > 0 || global.String() != "" {
		t.Errorf("a nil logger wrote %q on stderr and %q on the default logger, want nothing", b, global.String())
	}
}

func TestAuditNilAndEmptyPathRecordNothing(t *testing.T) {
	var a *Audit
	a.Record(Event{Event: EventConfirm}) // must not panic
	if err := a.Close(); err != nil {
		t.Error(err)
	}
	NewAudit("", nil).Record(Event{Event: EventConfirm})
}

func TestAuditConcurrentLinesStayWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	a := NewAudit(path, nil)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.Record(Event{Event: EventInjectionDenied, Tool: strings.Repeat("x", i*20)})
		}()
	}
	wg.Wait()
	a.Close()
	if n := len(readAudit(t, path)); n != 50 {
		t.Errorf("got %d lines, want 50", n)
	}
}

// TestAuditTightensAnExistingLogsMode: a log that already exists readable
// by others (made by hand or an older version) is made owner-only when it
// is opened, since it records what users asked for.
func TestAuditTightensAnExistingLogsMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil { // past the umask
		t.Fatal(err)
	}
	a := NewAudit(path, nil)
	a.Record(Event{Event: EventInputRejected})
	a.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("audit log mode = %o after use, want 600", perm)
	}
}

// memSink is an AuditSink in memory; fail makes every write fail.
type memSink struct {
	mu      sync.Mutex
	fail    error
	records []string
	events  []string
}

func (m *memSink) AppendAudit(ctx context.Context, at time.Time, event string, record []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := ctx.Deadline(); !ok {
		return errors.New("no deadline: a stalled database would hold the call up")
	}
	if m.fail != nil {
		return m.fail
	}
	m.events = append(m.events, event)
	m.records = append(m.records, string(record))
	return nil
}

// TestAuditToSink: with a sink, each event is one JSON record there (no
// newline, time in UTC), no file is written, and a failing sink is
// reported once and never stops the caller.
func TestAuditToSink(t *testing.T) {
	sink := &memSink{}
	var logs bytes.Buffer
	a := NewAuditTo(sink, "PostgreSQL table audit_log", slog.New(slog.NewTextHandler(&logs, nil)))
	if a.Path() != "PostgreSQL table audit_log" {
		t.Errorf("Path = %q", a.Path())
	}
	a.Record(Event{Event: EventConfirm, Tool: "createTicket", Decision: "refused", Time: time.Date(2026, 12, 1, 17, 0, 0, 0, time.FixedZone("CST", 8*3600))})
	if len(sink.records) != 1 || sink.events[0] != EventConfirm {
		t.Fatalf("records = %q", sink.records)
	}
	var got Event
	if err := json.Unmarshal([]byte(sink.records[0]), &got); err != nil || strings.HasSuffix(sink.records[0], "\n") {
		t.Fatalf("record %q is not one JSON object: %v", sink.records[0], err)
	}
	if got.Tool != "createTicket" || got.Decision != "refused" || got.Time.Location() != time.UTC || got.Time.Hour() != 9 {
		t.Errorf("record = %+v", got)
	}
	sink.fail = errors.New("the database is unavailable")
	for range 3 {
		a.Record(Event{Event: EventInputRejected})
	}
	if n := strings.Count(logs.String(), "audit log failed"); n != 1 || !strings.Contains(logs.String(), "the database is unavailable") {
		t.Errorf("logged %d warnings, want 1 naming the cause:\n%s", n, logs.String())
	}
}
