package mcpconfig

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ScopedServer is a configured server and where it is configured.
type ScopedServer struct {
	Server Server
	Scope  Scope
	// File is the config file that holds it.
	File string
	// Entry is its entry as written, for the approval of project servers.
	Entry json.RawMessage
	// Disabled: the entry says "disabled": true (Server holds the name
	// only).
	Disabled bool
	// Err is why the entry cannot be used (a wrong field, an unset
	// variable); Server holds the name only.
	Err error
}

// ScopesOptions says where LoadScopes looks.
type ScopesOptions struct {
	// Dir is the project directory (the working directory); its
	// ProjectFile is the project scope.
	Dir string
	// ConfigFile is --config; "" means DefaultFile in Dir when it exists.
	ConfigFile string
	// DefaultFile is the file read from Dir without --config
	// (agentapp.json); "" means none.
	DefaultFile string
	// NoUser and NoProject leave those scopes out.
	NoUser, NoProject bool
	// Getenv finds the user file (XDG_CONFIG_HOME, HOME); nil means
	// os.Getenv.
	Getenv func(string) string
	// Load is passed to Load for each file; its OnDisabled is replaced.
	Load *LoadOptions
	// SkipBroken: a file of the user, project or local scope (or the
	// default file) that exists but does not load (invalid JSON, not an
	// object) is left out, with a warning on Load.Logger, and listed in
	// Resolved.Skipped, so that one bad file does not stop everything.
	// False makes it an error, as for a strict start. A file named by
	// ConfigFile is an error either way: the user asked for it.
	SkipBroken bool
}

// Resolved is every scope's servers after precedence: Servers are the ones
// in force (sorted by name), Shadowed the ones a scope of higher precedence
// replaced.
type Resolved struct {
	Servers  []ScopedServer
	Shadowed []ScopedServer
	// Files are the files read, lowest precedence first.
	Files []ConfigSource
	// Skipped are the files left out because they do not load (see
	// ScopesOptions.SkipBroken), each an *Error naming the file and, for
	// invalid JSON, the line and column.
	Skipped []*Error
	// Permissions are the permission rules of the files read, lowest
	// precedence first (one entry per file that has any).
	Permissions []ScopedRules
	// Hooks are the hooks of the files read, lowest precedence first (one
	// entry per file that has any).
	Hooks []ScopedHooks
}

// ConfigSource is one file LoadScopes read, or would read: Exists is false
// for a scope without its file.
type ConfigSource struct {
	Scope  Scope
	Path   string
	Exists bool
}

// LoadScopes reads the user file, the project's .mcp.json, the project's
// local file and the config file, and resolves names by precedence: file
// (--config, or agentapp.json) over local over project over user, as Claude
// Code lets a project's server replace a user's of the same name and the
// user's private (local) one replace both. A scope whose file does not
// exist adds nothing; a file that exists and does not load is an error
// naming it, or skipped under SkipBroken.
func LoadScopes(opts ScopesOptions) (*Resolved, error) {
	res := &Resolved{}
	var files []ConfigSource
	if !opts.NoUser {
		p, err := UserFile(opts.Getenv)
		if err == nil {
			files = append(files, ConfigSource{Scope: ScopeUser, Path: p})
		}
	}
	if !opts.NoProject {
		files = append(files, ConfigSource{Scope: ScopeProject, Path: filepath.Join(opts.Dir, ProjectFile)})
		// The local scope is the user's servers of this project, so it
		// goes with the project scope (and with the user's directory).
		if !opts.NoUser {
			if p, err := LocalFile(opts.Dir, opts.Getenv); err == nil {
				files = append(files, ConfigSource{Scope: ScopeLocal, Path: p})
			}
		}
	}
	switch {
	case opts.ConfigFile != "":
		files = append(files, ConfigSource{Scope: ScopeFile, Path: opts.ConfigFile, Exists: true})
	case opts.DefaultFile != "":
		files = append(files, ConfigSource{Scope: ScopeFile, Path: filepath.Join(opts.Dir, opts.DefaultFile)})
	}
	byName := map[string]int{}
	var logger *slog.Logger
	if opts.Load != nil {
		logger = opts.Load.Logger
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	for i := range files {
		sf := &files[i]
		named := sf.Exists // --config: the user asked for this file
		if !sf.Exists {
			if _, err := os.Stat(sf.Path); err != nil {
				if errors.Is(err, os.ErrNotExist) {
					continue
				}
				return nil, &Error{File: sf.Path, Msg: fmt.Sprintf("cannot read the file: %v", err)}
			}
			sf.Exists = true
		}
		servers, rules, hks, err := loadScopeFile(*sf, opts.Load)
		if err != nil {
			var ce *Error
			if !opts.SkipBroken || named || !errors.As(err, &ce) || mentionsPermissions(sf.Path) {
				return nil, err
			}
			logger.Warn(fmt.Sprintf("MCP config file of the %s scope does not load and is skipped (its servers are not started; the other files are used): %v", sf.Scope, err))
			res.Skipped = append(res.Skipped, ce)
			continue
		}
		if len(rules.Rules) > 0 {
			res.Permissions = append(res.Permissions, rules)
		}
		if hks.Hooks.Len() > 0 {
			res.Hooks = append(res.Hooks, hks)
		}
		for _, s := range servers {
			if j, ok := byName[s.Server.Name]; ok {
				res.Shadowed = append(res.Shadowed, res.Servers[j])
				res.Servers[j] = s
				continue
			}
			byName[s.Server.Name] = len(res.Servers)
			res.Servers = append(res.Servers, s)
		}
	}
	res.Files = files
	slices.SortFunc(res.Servers, func(a, b ScopedServer) int { return strings.Compare(a.Server.Name, b.Server.Name) })
	return res, nil
}

// mentionsPermissions reports whether the file at path seems to hold
// permission rules or hooks. A broken file is skipped only when it does
// not: its rules may deny tools and its hooks block calls, and skipping
// them would loosen the policy without the user knowing.
func mentionsPermissions(path string) bool {
	data, err := os.ReadFile(path)
	return err != nil || bytes.Contains(data, []byte(`"permissions"`)) || bytes.Contains(data, []byte(`"hooks"`))
}

// loadScopeFile loads one file, disabled entries included, each with its
// entry as written, its permission rules and its hooks.
func loadScopeFile(sf ConfigSource, base *LoadOptions) ([]ScopedServer, ScopedRules, ScopedHooks, error) {
	var o LoadOptions
	if base != nil {
		o = *base
	}
	var disabled []string
	o.OnDisabled = func(name string) { disabled = append(disabled, name) }
	var invalid []ScopedServer
	o.OnInvalid = func(name string, err *Error) {
		invalid = append(invalid, ScopedServer{Server: Server{Name: name}, Scope: sf.Scope, File: sf.Path, Err: err})
	}
	servers, err := Load(sf.Path, &o)
	if err != nil {
		return nil, ScopedRules{}, ScopedHooks{}, err
	}
	f, err := OpenFile(sf.Path)
	if err != nil {
		return nil, ScopedRules{}, ScopedHooks{}, err
	}
	rules, err := f.permissions(sf.Scope)
	if err != nil {
		return nil, ScopedRules{}, ScopedHooks{}, err
	}
	hks, err := f.hooks(sf.Scope)
	if err != nil {
		return nil, ScopedRules{}, ScopedHooks{}, err
	}
	var out []ScopedServer
	for _, s := range servers {
		e, _ := f.Entry(s.Name)
		out = append(out, ScopedServer{Server: s, Scope: sf.Scope, File: sf.Path, Entry: e})
	}
	for _, s := range invalid {
		s.Entry, _ = f.Entry(s.Server.Name)
		out = append(out, s)
	}
	for _, name := range disabled {
		e, _ := f.Entry(name)
		out = append(out, ScopedServer{Server: Server{Name: name}, Scope: sf.Scope, File: sf.Path, Entry: e, Disabled: true})
	}
	return out, rules, hks, nil
}

// Approvals are the project servers the user allowed to run, kept in a
// file of the data directory (not in the project, which anyone can
// change): a project's .mcp.json runs commands, so a server from it runs
// only after the user said yes once. An approval holds a digest of the
// entry, so a changed entry (a new command, say) is asked about again.
type Approvals struct {
	path string
	// Projects maps a project directory to its approved servers' digests.
	Projects map[string]map[string]string `json:"projects"`
	// Refused maps a project directory to the digests of the servers the
	// user said no to, so the chat does not ask at every start; a changed
	// entry is asked about again.
	Refused map[string]map[string]string `json:"declined,omitempty"`
}

// OpenApprovals reads the approvals kept in path; a missing file holds
// none.
func OpenApprovals(path string) (*Approvals, error) {
	a := &Approvals{path: path, Projects: map[string]map[string]string{}, Refused: map[string]map[string]string{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return a, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the project approvals: %w", err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s is over %d bytes; remove it to ask about every project server again", path, MaxFileSize)
	}
	if err := json.Unmarshal(data, a); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%v); remove it to ask about every project server again", path, err)
	}
	if a.Projects == nil {
		a.Projects = map[string]map[string]string{}
	}
	if a.Refused == nil {
		a.Refused = map[string]map[string]string{}
	}
	return a, nil
}

// digest is the approval's fingerprint of an entry: its compact form,
// hashed.
func digest(entry json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, entry) != nil {
		b.Reset()
		b.Write(entry)
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:])
}

// ResetProject forgets every approval and every refusal of the project in
// dir, so the chat asks about each of its servers again; it returns how
// many it forgot.
func (a *Approvals) ResetProject(dir string) int {
	n := len(a.Projects[dir]) + len(a.Refused[dir])
	delete(a.Projects, dir)
	delete(a.Refused, dir)
	return n
}

// Approved reports whether the server of the project in dir was approved
// with this entry.
func (a *Approvals) Approved(dir, name string, entry json.RawMessage) bool {
	return a.Projects[dir][name] == digest(entry)
}

// Approve records the approval, replacing a decline; Save keeps it.
func (a *Approvals) Approve(dir, name string, entry json.RawMessage) {
	if a.Projects[dir] == nil {
		a.Projects[dir] = map[string]string{}
	}
	a.Projects[dir][name] = digest(entry)
	forget(a.Refused, dir, name)
}

// Declined reports whether the user said no to the server of the project
// in dir with this entry.
func (a *Approvals) Declined(dir, name string, entry json.RawMessage) bool {
	return a.Refused[dir][name] == digest(entry)
}

// Decline records that the user said no, replacing an approval; Save
// keeps it.
func (a *Approvals) Decline(dir, name string, entry json.RawMessage) {
	if a.Refused[dir] == nil {
		a.Refused[dir] = map[string]string{}
	}
	a.Refused[dir][name] = digest(entry)
	forget(a.Projects, dir, name)
}

// forget deletes m[dir][name], and m[dir] when it is left empty; it
// reports whether there was an entry.
func forget(m map[string]map[string]string, dir, name string) bool {
	if _, ok := m[dir][name]; !ok {
		return false
	}
	delete(m[dir], name)
	if len(m[dir]) == 0 {
		delete(m, dir)
	}
	return true
}

// Revoke forgets the approval of a server; it reports whether there was
// one.
func (a *Approvals) Revoke(dir, name string) bool {
	declined := forget(a.Refused, dir, name)
	return forget(a.Projects, dir, name) || declined
}

// Save writes the approvals atomically, 0600.
func (a *Approvals) Save() error {
	data, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(a.path, append(data, '\n'))
}
