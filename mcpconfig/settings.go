package mcpconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// Settings are agentapp's own top-level keys of an mcpServers file, next
// to "mcpServers": what applies to all servers at once.
type Settings struct {
	// ToolSearch is "auto", "on", "off", or "" when the file does not
	// say: whether the servers' tools are deferred behind searchTools.
	ToolSearch string
}

// LoadSettings reads the top-level settings of the config file at path.
// A file that does not exist has none; a setting of the wrong kind is an
// *Error naming the file and the key.
func LoadSettings(path string) (Settings, error) {
	var s Settings
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, &Error{File: path, Msg: fmt.Sprintf("cannot read the file: %v", err)}
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return s, nil // Load reports what is wrong with the file
	}
	if v, ok := top["toolSearch"]; ok && !isNull(v) {
		if json.Unmarshal(v, &s.ToolSearch) != nil || (s.ToolSearch != "auto" && s.ToolSearch != "on" && s.ToolSearch != "off") {
			return Settings{}, &Error{File: path, Field: "toolSearch", Msg: fmt.Sprintf(`want "auto" (defer the MCP tools behind searchTools when they are many or large), "on" or "off", got %s`, v)}
		}
	}
	return s, nil
}
