package mcpconfig

import (
	"crypto/sha256"
	"encoding/hex"
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
	// ScopeLocal is the user's private servers of one project, kept in the
	// user's config directory (LocalFile), not in the project: a server
	// with the user's own token that nobody else should get. It is what
	// `mcp add` writes without --scope, as Claude Code's local scope is.
	ScopeLocal Scope = "local"
	// ScopeFile is a file named on the command line (--config), or
	// agentapp.json in the working directory.
	ScopeFile Scope = "file"
)

// Scopes are the scopes a user can write with `mcp add --scope`, lowest
// precedence first: local over project over user.
var Scopes = []Scope{ScopeUser, ScopeProject, ScopeLocal}

// ProjectFile is the project scope's file name, in the working directory.
const ProjectFile = ".mcp.json"

// ParseScope checks a --scope value.
func ParseScope(s string) (Scope, error) {
	switch sc := Scope(strings.ToLower(strings.TrimSpace(s))); sc {
	case ScopeUser, ScopeProject, ScopeLocal:
		return sc, nil
	}
	return "", fmt.Errorf("unknown scope %q; use local (yours, for this project only), project (%s in this directory, shared with the project) or user (yours, for every project)", s, ProjectFile)
}

// configDir returns $XDG_CONFIG_HOME/agentapp, or ~/.config/agentapp.
func configDir(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "agentapp"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("cannot find the user config directory: neither XDG_CONFIG_HOME nor HOME is set")
	}
	return filepath.Join(home, ".config", "agentapp"), nil
}

// ProjectKey is the absolute, symlink-free path of a project directory:
// the key of its local scope and of its approvals.
func ProjectKey(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// LocalFile returns the local scope's file of the project in dir:
// projects/NAME-HASH/mcp.json in the user's config directory, where NAME is
// the project directory's base name (for a person looking) and HASH a
// digest of its absolute path (the key). The file is an ordinary
// mcpServers file whose "project" member names the directory.
func LocalFile(dir string, getenv func(string) string) (string, error) {
	base, err := configDir(getenv)
	if err != nil {
		return "", err
	}
	key := ProjectKey(dir)
	sum := sha256.Sum256([]byte(key))
	name := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, filepath.Base(key))
	if len(name) > 40 {
		name = name[:40]
	}
	return filepath.Join(base, "projects", name+"-"+hex.EncodeToString(sum[:6]), "mcp.json"), nil
}

// UserFile returns the user scope's file: $XDG_CONFIG_HOME/agentapp/mcp.json,
// or ~/.config/agentapp/mcp.json when XDG_CONFIG_HOME is unset or not an
// absolute path (as the XDG base directory rules say to ignore it then).
// getenv is where the variables are read; nil means os.Getenv.
func UserFile(getenv func(string) string) (string, error) {
	dir, err := configDir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "mcp.json"), nil
}

// ScopeFilePath returns the file of scope: UserFile for user, ProjectFile
// in dir for project, LocalFile of dir for local.
func ScopeFilePath(scope Scope, dir string, getenv func(string) string) (string, error) {
	switch scope {
	case ScopeUser:
		return UserFile(getenv)
	case ScopeProject:
		return filepath.Join(dir, ProjectFile), nil
	case ScopeLocal:
		return LocalFile(dir, getenv)
	}
	return "", fmt.Errorf("scope %q has no file of its own", scope)
}
