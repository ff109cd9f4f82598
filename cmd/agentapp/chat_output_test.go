package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// runChatBin runs the agentapp binary's chat with env added to a clean
// environment and returns stdout, stderr and the exit status.
func runChatBin(t *testing.T, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	data := t.TempDir()
	cmd := exec.Command(agentappBin(t), append([]string{"chat", "--model", "offline"}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + data, "AGENTAPP_DATA_DIR=" + data}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// events decodes stream-json output: every line must be one JSON object
// with a type.
func events(t *testing.T, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("stream-json line is not JSON: %v\n%q\nall output:\n%s", err, line, out)
		}
		if _, ok := ev["type"].(string); !ok {
			t.Fatalf("event without a type: %s", line)
		}
		evs = append(evs, ev)
	}
	return evs
}

// types lists the events' types, a run of tokens as one.
func types(evs []map[string]any) []string {
	var ts []string
	for _, ev := range evs {
		typ := ev["type"].(string)
		if typ == "token" && len(ts) > 0 && ts[len(ts)-1] == "token" {
			continue
		}
		ts = append(ts, typ)
	}
	return ts
}

// TestChatStreamJSONTwoTools: one turn in which the offline model calls
// two tools of an MCP server (one succeeds, one fails) streams, one JSON
// object per line, the session, each step, both tool calls and results,
// the tokens and done; a confirmation refused under -p (nobody can answer
// on a pipe) shows as approval events and exits 4; an error is JSON too.
func TestChatStreamJSONTwoTools(t *testing.T) {
	server := "t=" + mcpTestServerBin(t) + " -mode normal"
	// The test server's tools are not annotated: allow them (a script
	// has nobody to ask), as the README's Permissions section says.
	out, errOut, code := runChatBin(t, nil, "", "-p", "use noise and use fail", "--output-format", "stream-json", "--mcp", server, "--allow", "t:*")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	evs := events(t, out)
	got := strings.Join(types(evs), " ")
	if got != "session step_start tool_call tool_call tool_result tool_result step_start token done" {
		t.Errorf("event types = %s\n%s", got, out)
	}
	results := map[string]map[string]any{}
	for _, ev := range evs {
		if ev["type"] == "tool_result" {
			results[ev["tool"].(string)] = ev
		}
		if ev["type"] == "tool_call" && ev["server"] != "t" {
			t.Errorf("tool_call without the server: %v", ev)
		}
	}
	if results["noise"]["output"] != "still alive" || results["noise"]["error"] != nil {
		t.Errorf("noise result = %v", results["noise"])
	}
	if e, _ := results["fail"]["error"].(string); !strings.Contains(e, "boom: bad input") {
		t.Errorf("fail result = %v", results["fail"])
	}
	if _, ok := results["noise"]["duration_ms"].(float64); !ok {
		t.Errorf("no duration: %v", results["noise"])
	}
	if last := evs[len(evs)-1]; !strings.Contains(last["answer"].(string), "noise") {
		t.Errorf("done = %v", last)
	}

	// Refused confirmation: reported in the events and in the exit status.
	out, errOut, code = runChatBin(t, []string{"AGENT_GUARD_CONFIRM=noise"}, "", "-p", "use noise", "--output-format", "stream-json", "--mcp", server)
	if code != exitRefused {
		t.Errorf("refused confirmation: exit %d, want %d\nstderr:\n%s", code, exitRefused, errOut)
	}
	evs = events(t, out)
	got = strings.Join(types(evs), " ")
	if !strings.Contains(got, "approval_asked approval_answered tool_result") {
		t.Errorf("event types = %s\n%s", got, out)
	}
	for _, ev := range evs {
		if ev["type"] == "approval_answered" && ev["approved"] != false {
			t.Errorf("approval = %v", ev)
		}
		if ev["type"] == "tool_result" && ev["denied"] != true {
			t.Errorf("tool_result of a refused call = %v", ev)
		}
		if ev["type"] == "done" && !strings.Contains(ev["answer"].(string), "I did not run noise") {
			t.Errorf("the answer does not say the call was refused: %v", ev)
		}
	}

	// --json: one object with the refusal in its steps, output as JSON.
	out, _, code = runChatBin(t, []string{"AGENT_GUARD_CONFIRM=noise"}, "", "-p", "use noise", "--json", "--mcp", server)
	var a struct {
		Steps []struct {
			Denied bool           `json:"denied"`
			Output map[string]any `json:"output"`
		} `json:"steps"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &a); err != nil || code != exitRefused || len(a.Steps) != 1 || !a.Steps[0].Denied || a.Steps[0].Output["denied"] != true {
		t.Errorf("--json refused: exit %d, err %v, %s", code, err, out)
	}

	// A failure is JSON in both formats.
	for _, format := range []string{"json", "stream-json"} {
		out, _, code = runChatBin(t, nil, "", "-p", "hi", "--output-format", format, "--session", "no-such-session")
		var obj map[string]any
		line := strings.TrimSpace(out)
		if format == "stream-json" && strings.Contains(line, "\n") {
			line = line[strings.LastIndex(line, "\n")+1:]
		}
		if err := json.Unmarshal([]byte(line), &obj); err != nil || code != 1 || !strings.Contains(obj["error"].(string), "no-such-session") {
			t.Errorf("%s error: exit %d, err %v, stdout %q", format, code, err, out)
		}
	}
}

// TestChatSourcesListed: the knowledge-base documents an answer cites as
// [n] are listed under it (text) and in "sources" (json).
func TestChatSourcesListed(t *testing.T) {
	chatEnv(t)
	data := t.TempDir()
	out, errOut, code := runChatCLI(t, "", "chat", "--data-dir", data, "--model", "offline", "-p", "出差住宿标准是多少？")
	if code != 0 || !strings.Contains(out, "[2]") || !strings.Contains(out, "\nSources:\n  [2] 差旅与住宿标准") || !strings.Contains(out, "(travel.md-") {
		t.Errorf("text: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if strings.Contains(out, "  [1] ") {
		t.Errorf("an uncited hit is listed:\n%s", out)
	}
	out, _, _ = runChatCLI(t, "", "chat", "--data-dir", data, "--model", "offline", "-p", "出差住宿标准是多少？", "--output-format", "json")
	var a struct {
		Sources []struct {
			No    int    `json:"no"`
			DocID string `json:"docId"`
			Title string `json:"title"`
		} `json:"sources"`
	}
	if err := json.Unmarshal([]byte(out), &a); err != nil || len(a.Sources) != 1 || a.Sources[0].No != 2 || !strings.HasPrefix(a.Sources[0].DocID, "travel.md-") {
		t.Errorf("json sources: %v %+v\n%s", err, a.Sources, out)
	}
}
