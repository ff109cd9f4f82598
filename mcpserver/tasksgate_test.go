package mcpserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/mcpserver"
)

// TestTasksMethodsAt2026: at protocol 2026-07-28 the task methods are the
// extension's: without it declared, tasks/get and tasks/cancel answer
// -32021 naming it; tasks/list and tasks/result do not exist (-32601).
func TestTasksMethodsAt2026(t *testing.T) {
	ts := httptest.NewServer(newHTTPHandler(t, mcpserver.New(newDomain(t).options()), nil))
	defer ts.Close()
	call := func(method string, ext bool) (code int, data string) {
		caps := `{}`
		if ext {
			caps = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"taskId":"no-such-task","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
		req, _ := http.NewRequest(http.MethodPost, ts.URL+mcpserver.HTTPPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var got struct {
			Error struct {
				Code int             `json:"code"`
				Data json.RawMessage `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: %s", method, raw)
		}
		return got.Error.Code, string(got.Error.Data)
	}
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		if code, data := call(m, false); code != -32021 || !strings.Contains(data, "io.modelcontextprotocol/tasks") {
			t.Errorf("%s without the extension: %d %s, want -32021 naming it", m, code, data)
		}
		if code, _ := call(m, true); code == -32021 || code == -32601 {
			t.Errorf("%s with the extension: %d, want the task's own error", m, code)
		}
	}
	for _, m := range []string{"tasks/list", "tasks/result"} {
		if code, _ := call(m, true); code != -32601 {
			t.Errorf("%s: %d, want -32601", m, code)
		}
	}
}
