package mcpconfig

import (
	"encoding/json"
	"fmt"

	"github.com/agentapp/agentapp/hooks"
)

// ScopedHooks are the hooks of one config file.
type ScopedHooks struct {
	Scope Scope
	File  string
	Hooks hooks.Config
	// Entry is the "hooks" object as written: a project's hooks are
	// approved by its digest, so a changed command is asked about again.
	Entry json.RawMessage
}

// hooks reads a file's "hooks" object, Claude Code's shape (see
// hooks.Parse). A wrong shape is an error naming the file: a hook silently
// dropped could be one that blocks.
func (f *File) hooks(scope Scope) (ScopedHooks, error) {
	out := ScopedHooks{Scope: scope, File: f.Path}
	for _, m := range f.top {
		if m.name == "hooks" {
			out.Entry = m.value
		}
	}
	if out.Entry == nil || isNull(out.Entry) {
		out.Entry = nil
		return out, nil
	}
	c, err := hooks.Parse(out.Entry, fmt.Sprintf("%s (%s scope)", f.Path, scope))
	if err != nil {
		return out, &Error{File: f.Path, Field: "hooks", Msg: err.Error()}
	}
	out.Hooks = c
	return out, nil
}
