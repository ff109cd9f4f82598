package mcpconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Scope says which config file a server comes from, and so who shares it.
type Scope string

// The scopes, lowest precedence first: a server of a scope later in this
// list replaces a server of the same name from an earlier one.
const (
	// ScopeUser is the user's own file, for every project:
	// $XDG_CONFIG_HOME/agentapp/mcp.json (~/.config/agentapp/mcp.json).
	ScopeUser Scope = "user"
	// ScopeProject is .mcp.json in the working directory, the file a
	// project shares with everyone who works on it (Claude Code reads the
	// same file). Its servers run only once the user approved them.
	ScopeProject Scope = "project"
	// ScopeFile is a file named on the command line (--config), or
	// agentapp.json in the working directory.
	ScopeFile Scope = "file"
)

// Scopes are the scopes a user can write with `mcp add --scope`.
var Scopes = []Scope{ScopeUser, ScopeProject}

// ProjectFile is the project scope's file name, in the working directory.
const ProjectFile = ".mcp.json"

// ParseScope checks a --scope value.
func ParseScope(s string) (Scope, error) {
	switch sc := Scope(strings.ToLower(strings.TrimSpace(s))); sc {
	case ScopeUser, ScopeProject:
		return sc, nil
	}
	return "", fmt.Errorf("unknown scope %q; use user (your own servers, for every project) or project (%s in this directory, shared with the project)", s, ProjectFile)
}

// UserFile returns the user scope's file: $XDG_CONFIG_HOME/agentapp/mcp.json,
// or ~/.config/agentapp/mcp.json when XDG_CONFIG_HOME is unset or not an
// absolute path (as the XDG base directory rules say to ignore it then).
// getenv is where the variables are read; nil means os.Getenv.
func UserFile(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "agentapp", "mcp.json"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("cannot find the user config directory: neither XDG_CONFIG_HOME nor HOME is set")
	}
	return filepath.Join(home, ".config", "agentapp", "mcp.json"), nil
}

// ScopeFilePath returns the file of scope: UserFile for user, ProjectFile
// in dir for project.
func ScopeFilePath(scope Scope, dir string, getenv func(string) string) (string, error) {
	switch scope {
	case ScopeUser:
		return UserFile(getenv)
	case ScopeProject:
		return filepath.Join(dir, ProjectFile), nil
	}
	return "", fmt.Errorf("scope %q has no file of its own", scope)
}
