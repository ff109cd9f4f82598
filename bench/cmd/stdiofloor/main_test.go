package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The test binary is also the server capture talks to: with
// STDIOFLOOR_TEST_ARGS set it runs stdiofloor with those arguments.
func TestMain(m *testing.M) {
	if a := os.Getenv("STDIOFLOOR_TEST_ARGS"); a != "" {
		if err := run(strings.Fields(a), os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const result = `{"content":[{"type":"text","text":"{\"orderId\":\"A-1024\",\"status\":\"已发货\"}"}],"structuredContent":{"orderId":"A-1024","status":"已发货"}}`

// countingWriter records each write.
type countingWriter struct{ writes []string }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func TestServeAnswers(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"anything","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":4,"method":"resources/list"}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[1,2]}`,
		``,
		`{not json`,
	}, "\n") + "\n"
	var w countingWriter
	if err := serve(strings.NewReader(in), &w, []byte(result)); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"stdiofloor","version":"1.0.0"}}}`,
		`{"jsonrpc":"2.0","id":"a","result":` + result + `}`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}`,
		`{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"method not found: resources/list"}}`,
		`{"jsonrpc":"2.0","id":5,"result":` + result + `}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid character 'n' looking for beginning of object key string"}}`,
	}
	got := strings.Split(strings.TrimSuffix(strings.Join(w.writes, ""), "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("answers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Everything arrived in one read, so it goes out in one write.
	if len(w.writes) != 1 {
		t.Errorf("%d writes for one read's requests, want 1", len(w.writes))
	}
}

func TestServeRefusesAnEndlessLine(t *testing.T) {
	in := bytes.Repeat([]byte("x"), maxLine+10)
	err := serve(bytes.NewReader(in), &countingWriter{}, []byte(result))
	if err == nil || !strings.Contains(err.Error(), "over") {
		t.Fatalf("serve of a %d-byte line: %v, want an error naming the limit", len(in), err)
	}
}

func TestServeRefusesABadResultFile(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"error.json":     `{"content":[{"type":"text","text":"no"}],"isError":true}`,
		"notjson.json":   `{"content":`,
		"nocontent.json": `{"structuredContent":{}}`,
	} {
		f := filepath.Join(dir, name)
		os.WriteFile(f, []byte(body), 0o644)
		if err := run([]string{"serve", "--result", f}, strings.NewReader(""), &countingWriter{}); err == nil {
			t.Errorf("serve --result %s: no error", name)
		}
	}
}

// TestCaptureRoundTrip captures a result from a stdiofloor serving a file
// and gets the file's bytes back; a server whose tool fails is refused.
func TestCaptureRoundTrip(t *testing.T) {
	dir := t.TempDir()
	ok, bad := filepath.Join(dir, "ok.json"), filepath.Join(dir, "bad.json")
	os.WriteFile(ok, []byte(result+"\n"), 0o644)
	os.WriteFile(bad, []byte(`{"content":[{"type":"text","text":"boom"}],"isError":true}`), 0o644)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	t.Setenv("STDIOFLOOR_TEST_ARGS", "serve --result "+ok)
	got, err := capture(ctx, []string{self}, "getOrderStatus", []byte(`{"orderId":"A-1024"}`))
	if err != nil || string(got) != result {
		t.Fatalf("capture: %s, %v; want %s", got, err, result)
	}

	// The server refuses its result file and exits at once: capture says
	// the output ended instead of waiting.
	t.Setenv("STDIOFLOOR_TEST_ARGS", "serve --result "+bad)
	if _, err := capture(ctx, []string{self}, "getOrderStatus", nil); err == nil || !strings.Contains(err.Error(), "ended") {
		t.Fatalf("capture from a server that exits: %v", err)
	}
}

// TestCaptureGivesUp bounds the wait for a server that never answers.
func TestCaptureGivesUp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := capture(ctx, []string{"sleep", "60"}, "x", nil)
	if err == nil || !strings.Contains(err.Error(), "no answer") {
		t.Fatalf("capture from a silent server: %v", err)
	}
}
