package mcpconfig

import (
	"encoding/json"
	"math"
	"time"
)

// The values of Server.Tasks: when a tool call runs as an MCP task (the
// server answers at once with a task the client polls; see mcpclient).
const (
	// TasksAuto (also ""): a tool that requires a task runs as one, and so
	// does a tool that merely allows it, when the server says it runs tool
	// calls as tasks. Such tools announce themselves as long-running, so
	// the per-call timeout would cut them short.
	TasksAuto = "auto"
	// TasksRequired: only tools that cannot run otherwise run as tasks;
	// the others are plain calls under the per-call timeout.
	TasksRequired = "required"
	// TasksNever: no call runs as a task; a tool that requires one fails
	// with an error saying so.
	TasksNever = "never"
)

// DefaultTaskTimeout bounds a task when the config sets no taskTimeout.
const DefaultTaskTimeout = 30 * time.Minute

// MaxTaskTimeout is the largest taskTimeout accepted.
const MaxTaskTimeout = 7 * 24 * time.Hour

// ValidTasks reports whether s is a value of Server.Tasks ("" is TasksAuto).
func ValidTasks(s string) bool {
	return s == "" || s == TasksAuto || s == TasksRequired || s == TasksNever
}

// parseTasks reads "tasks" and "taskTimeout" (seconds) of one entry.
func parseTasks(obj jsonFields, cfg *Server, str func(string) (string, bool, error), fail func(field, format string, args ...any) error) error {
	mode, _, err := str("tasks")
	if err != nil {
		return err
	}
	if !ValidTasks(mode) {
		return fail("tasks", "want \"auto\" (the default: tools that require or allow tasks run as tasks), \"required\" (only tools that require them) or \"never\", got %q", mode)
	}
	cfg.Tasks = mode
	if v, ok := obj.get("taskTimeout"); ok && !isNull(v) {
		var sec float64
		if json.Unmarshal(v, &sec) != nil {
			return fail("taskTimeout", "want a number of seconds a task may run, like 1800")
		}
		if !(sec > 0) || math.IsInf(sec, 0) || sec > MaxTaskTimeout.Seconds() {
			return fail("taskTimeout", "want a number of seconds greater than 0 and at most %v (7 days), got %v", MaxTaskTimeout.Seconds(), sec)
		}
		cfg.TaskTimeout = time.Duration(sec * float64(time.Second))
	}
	return nil
}
