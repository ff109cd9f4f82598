package mcpconfig

import (
	"testing"
	"time"
)

func TestLoadConfigTasks(t *testing.T) {
	opts := &LoadOptions{LookupEnv: lookupIn(nil)}
	got, err := parseConfig("agentapp.json", []byte(`{"mcpServers": {
		"a": {"command": "x"},
		"b": {"command": "x", "tasks": "never", "taskTimeout": 90},
		"c": {"url": "https://h/mcp", "tasks": "required", "taskTimeout": 0.5}}}`), opts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		mode    string
		timeout time.Duration
	}{"a": {"", 0}, "b": {TasksNever, 90 * time.Second}, "c": {TasksRequired, 500 * time.Millisecond}}
	for _, s := range got {
		if w := want[s.Name]; s.Tasks != w.mode || s.TaskTimeout != w.timeout {
			t.Errorf("%s: tasks %q taskTimeout %v, want %q %v", s.Name, s.Tasks, s.TaskTimeout, w.mode, w.timeout)
		}
	}
	for name, c := range map[string]struct {
		json string
		want []string
	}{
		"unknown mode":     {`{"mcpServers": {"a": {"command": "x", "tasks": "sometimes"}}}`, []string{`field "tasks"`, `"auto"`, `"sometimes"`}},
		"mode not string":  {`{"mcpServers": {"a": {"command": "x", "tasks": true}}}`, []string{`field "tasks"`, "want a string"}},
		"timeout negative": {`{"mcpServers": {"a": {"command": "x", "taskTimeout": -1}}}`, []string{`field "taskTimeout"`, "greater than 0"}},
		"timeout too long": {`{"mcpServers": {"a": {"command": "x", "taskTimeout": 700000}}}`, []string{`field "taskTimeout"`, "7 days"}},
		"timeout string":   {`{"mcpServers": {"a": {"command": "x", "taskTimeout": "30m"}}}`, []string{`field "taskTimeout"`, "number of seconds"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseConfig("agentapp.json", []byte(c.json), opts)
			if err == nil {
				t.Fatal("no error")
			}
			wantErr(t, err, c.want...)
		})
	}
}
