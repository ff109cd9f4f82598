package supervise

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agentapp/agentapp/internal/lineread"
	"github.com/agentapp/agentapp/internal/testkit"
)

func TestFrameFilter(t *testing.T) {
	big := strings.Repeat("x", 200)
	input := strings.Join([]string{
		`> npm warn: something`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		``,
		`{"result":{"text":"` + big + `"},"jsonrpc":"2.0","id":7}`,                        // id at the end, as the TypeScript SDK writes it
		`{"jsonrpc":"2.0","id":"abc","result":{"text":"` + big + `"}}`,                    // id first
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"d":"` + big + `"}}`, // nobody waits for it
		`{"result":{"text":"` + big + `"}}`,                                               // no id to answer
		`{"jsonrpc":"2.0","id":2,"result":{}}` + "\r",
	}, "\n") + "\n"
	logger, logs := testkit.NewLogger()
	f := NewFrameFilter("srv", io.NopCloser(strings.NewReader(input)), 100, logger)
	defer f.Close()
	var got []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		got = append(got, sc.Text())
	}
	want := []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"server srv sent a response of 246 bytes, over the 100-byte limit; it was refused (ask for less data, e.g. a smaller page or range)"}}`,
		`{"jsonrpc":"2.0","id":"abc","error":{"code":-32603,"message":"server srv sent a response of 250 bytes, over the 100-byte limit; it was refused (ask for less data, e.g. a smaller page or range)"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("frames passed on:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	out := logs.String()
	if !strings.Contains(out, `line="> npm warn: something"`) || strings.Count(out, "larger than the limit") != 4 {
		t.Errorf("log:\n%s", out)
	}
}

func TestStderrRing(t *testing.T) {
	var r StderrRing
	if got := r.Tail(0); len(got) != 0 {
		t.Fatalf("empty ring: %q", got)
	}
	for i := range stderrKeepLines + 7 {
		r.add(strings.Repeat("l", i%3+1) + string(rune('A'+i%26)))
	}
	all := r.Tail(0)
	if len(all) != stderrKeepLines {
		t.Fatalf("kept %d lines, want %d", len(all), stderrKeepLines)
	}
	if last := r.Tail(2); len(last) != 2 || last[1] != all[len(all)-1] {
		t.Errorf("tail(2) = %q", last)
	}
	// Line 7 (index 7) is the oldest kept: 'A'+7 = 'H', 7%3+1 = 2 l's.
	if all[0] != "llH" {
		t.Errorf("oldest kept line %q, want llH", all[0])
	}
}

// TestFrameFilterEscapesLoggedLines: a skipped stdout line and the start of
// an oversized one are logged by textsafe's rule, so a server cannot put a
// terminal escape or a bidirectional override into the user's log. A JSON
// handler is used because it leaves such characters as they are, so only
// the filter's own escaping is tested.
func TestFrameFilterEscapesLoggedLines(t *testing.T) {
	input := "banner \u202e\x1b[31mred\n" + `{"jsonrpc":"2.0","id":3,"result":"` + "\u2066" + strings.Repeat("y", 200) + "\"}\n"
	var logs bytes.Buffer
	f := NewFrameFilter("srv", io.NopCloser(strings.NewReader(input)), 100, slog.New(slog.NewJSONHandler(&logs, nil)))
	// The filter logs before it closes its frames, so once Read reports
	// the end the log is complete and no longer written.
	if _, err := io.ReadAll(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var got []map[string]any
	dec := json.NewDecoder(&logs)
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	if len(got) != 2 {
		t.Fatalf("log records = %v, want 2", got)
	}
	if line, want := got[0]["line"], `banner \u202e\x1b[31mred`; line != want {
		t.Errorf("skipped line logged as %q, want %q", line, want)
	}
	start, _ := got[1]["start"].(string)
	if want := `{"jsonrpc":"2.0","id":3,"result":"\u2066yyy`; !strings.HasPrefix(start, want) || !strings.Contains(start, " total)") {
		t.Errorf("oversized line's start logged as %q, want it to begin %q and end with the cut note", start, want)
	}
}

// BenchmarkFrameFilterLine is the filter's work for one line a server
// writes on stdout: read it and check that it is a JSON-RPC message.
func BenchmarkFrameFilterLine(b *testing.B) {
	line := `{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"{\"echo\":\"where is A-1024?\"}"}],"structuredContent":{"echo":"where is A-1024?"}}}`
	var data []byte
	for range 64 {
		data = append(data, line+"\n"...)
	}
	f := &FrameFilter{server: "bench", maxFrame: MaxFrameSize, logger: slog.New(slog.DiscardHandler)}
	lr := lineread.NewReader(bufio.NewReaderSize(&testkit.RepeatReader{Data: data}, 64<<10), f.maxFrame, idWindow)
	b.ReportAllocs()
	for b.Loop() {
		got, err := lr.ReadLine()
		if err != nil {
			b.Fatal(err)
		}
		if fr := f.accept(lr, got); len(fr.Raw) != len(line)+1 {
			b.Fatalf("%q", fr)
		}
	}
}

// TestFrameFilterDecodes: the filter passes on only lines whose every
// message is JSON-RPC 2.0, with the messages decoded, so a JSON log record
// on stdout is skipped like any other stray line instead of ending the
// session in the SDK's decoder.
func TestFrameFilterDecodes(t *testing.T) {
	input := strings.Join([]string{
		`{"level":30,"msg":"listening"}`,
		`{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`,
		`[{"jsonrpc":"2.0","method":"notifications/message","params":{}},{"level":"info"}]`,
		`[{"jsonrpc":"2.0","method":"notifications/message","params":{"a":1}},{"jsonrpc":"2.0","id":"p","method":"ping"}]`,
		`{"jsonrpc":"2.0","id":2.5,"result":{}}`,
		"[" + strings.Repeat(`{"jsonrpc":"2.0","method":"n"},`, maxBatchMessages) + `{"jsonrpc":"2.0","method":"n"}]`,
		"[" + strings.TrimSuffix(strings.Repeat(`{"jsonrpc":"2.0","method":"m"},`, maxBatchMessages), ",") + "]",
	}, "\n") + "\n"
	logger, logs := testkit.NewLogger()
	f := NewFrameFilter("srv", io.NopCloser(strings.NewReader(input)), 0, logger)
	defer f.Close()
	var got []string
	for {
		fr, err := f.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fr.Msgs {
			data, err := jsonrpc.EncodeMessage(m)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(data))
		}
	}
	want := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"a":1}}`,
		`{"jsonrpc":"2.0","id":"p","method":"ping"}`,
	}
	for range maxBatchMessages { // the batch at the limit; the one over it is skipped
		want = append(want, `{"jsonrpc":"2.0","method":"m"}`)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages passed on (-want +got):\n%s", diff)
	}
	for _, skipped := range []string{`{\"level\":30`, `{\"level\":\"info\"}`, `\"id\":2.5`} {
		if !strings.Contains(logs.String(), skipped) {
			t.Errorf("skipped line with %s not logged:\n%s", skipped, logs.String())
		}
	}
}

func TestIsErrorLine(t *testing.T) {
	for line, want := range map[string]bool{
		"Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'x'": true,
		"FATAL: DATABASE_URL is not set":                        true,
		"panic: runtime error: index out of range":              true,
		"fatal error: all goroutines are asleep":                true,
		"ValueError: bad":                                       true,
		"[ERROR] no key":                                        true,
		"    at packageResolve (node:internal)":                 false,
		"Traceback (most recent call last):":                    false,
		"error_log enabled":                                     false,
		"server listening on stdio":                             false,
	} {
		if got := isErrorLine(line); got != want {
			t.Errorf("isErrorLine(%q) = %v, want %v", line, got, want)
		}
	}
}
