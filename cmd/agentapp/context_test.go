package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOfflineUsageIsEstimated: the offline model reports no usage, so -p
// with json and stream-json carries the host's estimate, marked so, never 0.
func TestOfflineUsageIsEstimated(t *testing.T) {
	out, errOut, code := runChatBin(t, nil, "", "-p", "where is order A-1024?", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var a struct {
		Usage struct {
			InputTokens, OutputTokens int
			Estimated                 bool
			Calls                     []json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	if !a.Usage.Estimated || a.Usage.InputTokens <= 0 || a.Usage.OutputTokens <= 0 || len(a.Usage.Calls) != 2 {
		t.Errorf("json usage %+v; want two estimated calls with tokens\n%s", a.Usage, out)
	}
	out, errOut, code = runChatBin(t, nil, "", "-p", "where is order A-1024?", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	evs := events(t, out)
	done := evs[len(evs)-1]
	u, _ := done["usage"].(map[string]any)
	if done["type"] != "done" || u == nil || u["estimated"] != true || u["inputTokens"].(float64) <= 0 {
		t.Errorf("stream-json done event %v; want estimated usage", done)
	}
}

// TestContextWindowFlag: a window too small to be real is a usage error
// naming the model's known one; a request that cannot fit names the
// largest part and how to change the window; the variable is read too.
func TestContextWindowFlag(t *testing.T) {
	_, errOut, code := runChatBin(t, nil, "", "-p", "hi", "--context-window", "100")
	if code != 2 || !strings.Contains(errOut, "--context-window 100: want at least 1024 tokens, or 0 for the model's known window (32768 for offline-demo)") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	_, errOut, code = runChatBin(t, []string{envContextWindow + "=lots"}, "", "-p", "hi")
	if code != 2 || !strings.Contains(errOut, `$OPENAI_CONTEXT_WINDOW="lots" is not a number of tokens`) {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	for _, args := range [][]string{{"--context-window", "1024"}, {}} {
		var env []string
		if len(args) == 0 {
			env = []string{envContextWindow + "=1024"}
		}
		_, errOut, code = runChatBin(t, env, "", append([]string{"-p", "where is order A-1024?"}, args...)...)
		if code != 1 || !strings.Contains(errOut, "does not fit the model's context window of 1024 tokens") ||
			!strings.Contains(errOut, "the largest part is the tool definitions") || !strings.Contains(errOut, "set it with --context-window or $OPENAI_CONTEXT_WINDOW") {
			t.Errorf("%v %v: exit %d\n%s", args, env, code, errOut)
		}
	}
}
