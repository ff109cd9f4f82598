package mcpconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MaxFileSize bounds a config file that is read for editing; a larger one
// is refused rather than read whole.
const MaxFileSize = 4 << 20

// File is an mcpServers config file opened for editing (agentapp mcp add,
// remove). Everything Set and Remove do not touch is written back as it
// was: other top-level keys (Claude Desktop keeps its settings there),
// other servers, and fields of a server that agentapp does not know, in
// their order. Create it with OpenFile and write it with Save.
type File struct {
	Path string

	exists  bool
	top     []jsonField // top-level members, mcpServers included
	servers []jsonField // the mcpServers members, in file order
}

// OpenFile reads path for editing. A file that does not exist is an empty
// File, which Save creates. A file that is not a JSON object, or whose
// mcpServers is not an object or names a server twice, is an error naming
// the file: editing it could lose what it holds.
func OpenFile(path string) (*File, error) {
	f := &File{Path: path}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return f, nil
	case err != nil:
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read the file: %v", err)}
	case info.Size() > MaxFileSize:
		return nil, &Error{File: path, Msg: fmt.Sprintf("the file is %d bytes, over the %d this command edits; edit it by hand", info.Size(), MaxFileSize)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read the file: %v", err)}
	}
	f.exists = true
	if len(bytes.TrimSpace(data)) == 0 {
		return f, nil
	}
	if err := json.Unmarshal(data, new(any)); err != nil {
		return nil, &Error{File: path, Msg: describeJSONError(data, err) + "; fix it by hand first"}
	}
	top, err := objectFields(data)
	if err != nil {
		return nil, &Error{File: path, Msg: "want a JSON object at the top level, like {\"mcpServers\": {...}}; fix it by hand first"}
	}
	f.top = top.fields
	if raw, ok := top.get("mcpServers"); ok && !isNull(raw) {
		servers, err := objectFields(raw)
		if err != nil {
			return nil, &Error{File: path, Field: "mcpServers", Msg: "want an object mapping server names to their settings; fix it by hand first"}
		}
		if dup := servers.duplicate(); dup != "" {
			return nil, &Error{File: path, Server: dup, Msg: "the server is defined twice in mcpServers; keep one entry by hand first"}
		}
		f.servers = servers.fields
	}
	return f, nil
}

// Exists reports whether the file was there when it was opened.
func (f *File) Exists() bool { return f.exists }

// Names returns the server names in file order.
func (f *File) Names() []string {
	names := make([]string, len(f.servers))
	for i, s := range f.servers {
		names[i] = s.name
	}
	return names
}

// Entry returns the server's entry as written in the file.
func (f *File) Entry(name string) (json.RawMessage, bool) {
	for _, s := range f.servers {
		if s.name == name {
			return s.value, true
		}
	}
	return nil, false
}

// Set adds the server, or replaces its entry where it stands.
func (f *File) Set(name string, entry json.RawMessage) {
	for i, s := range f.servers {
		if s.name == name {
			f.servers[i].value = entry
			return
		}
	}
	f.servers = append(f.servers, jsonField{name: name, value: entry})
}

// SetTop sets a top-level member other than mcpServers (the local scope's
// "project"), or replaces it where it stands.
func (f *File) SetTop(name string, value json.RawMessage) {
	for i, m := range f.top {
		if m.name == name {
			f.top[i].value = value
			return
		}
	}
	f.top = append(f.top, jsonField{name: name, value: value})
}

// Remove drops the server and reports whether it was there.
func (f *File) Remove(name string) bool {
	i := slices.IndexFunc(f.servers, func(s jsonField) bool { return s.name == name })
	if i < 0 {
		return false
	}
	f.servers = slices.Delete(f.servers, i, i+1)
	return true
}

// Bytes renders the file: the top-level members in their order, with
// mcpServers (added last when new) holding the servers, indented by two
// spaces.
func (f *File) Bytes() ([]byte, error) {
	var servers bytes.Buffer
	servers.WriteByte('{')
	for i, s := range f.servers {
		if i > 0 {
			servers.WriteByte(',')
		}
		writeMember(&servers, s.name, s.value)
	}
	servers.WriteByte('}')
	top := slices.Clone(f.top)
	if i := slices.IndexFunc(top, func(m jsonField) bool { return m.name == "mcpServers" }); i >= 0 {
		top[i].value = servers.Bytes()
	} else {
		top = append(top, jsonField{name: "mcpServers", value: servers.Bytes()})
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range top {
		if i > 0 {
			b.WriteByte(',')
		}
		writeMember(&b, m.name, m.value)
	}
	b.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("%s: the new content is not valid JSON: %w", f.Path, err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func writeMember(b *bytes.Buffer, name string, value json.RawMessage) {
	k, _ := json.Marshal(name) // a string always encodes
	b.Write(k)
	b.WriteByte(':')
	var compact bytes.Buffer
	if json.Compact(&compact, value) == nil {
		b.Write(compact.Bytes())
		return
	}
	b.Write(value)
}

// Save writes the file atomically: the content goes to a temporary file in
// the same directory, which then replaces the file, so a reader (a chat
// starting) never sees half a file and a failed write leaves the old one.
// The file is 0600, since entries hold tokens and environment values; a
// directory Save creates is 0700.
func (f *File) Save() error {
	data, err := f.Bytes()
	if err != nil {
		return err
	}
	return WriteFileAtomic(f.Path, data)
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory and a rename, with mode 0600, creating the directory (0700)
// when needed.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Entry describes a server to write with File.Set: a stdio command, or an
// HTTP endpoint.
type Entry struct {
	Command string
	Args    []string
	Env     map[string]string
	// Transport is "http" or "sse" for a URL; empty for stdio.
	Transport string
	URL       string
	Headers   map[string]string
}

// JSON renders the entry in the mcpServers shape.
func (e Entry) JSON() json.RawMessage {
	type stdio struct {
		Command string            `json:"command"`
		Args    []string          `json:"args,omitempty"`
		Env     map[string]string `json:"env,omitempty"`
	}
	type remote struct {
		Type    string            `json:"type"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers,omitempty"`
	}
	var v any = stdio{e.Command, e.Args, e.Env}
	if e.URL != "" {
		v = remote{e.Transport, e.URL, e.Headers}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // strings, lists and maps of strings always encode
	return bytes.TrimSpace(b.Bytes())
}

// CheckEntry checks that raw is a server entry Load accepts, without
// expanding ${VAR}s (they may be set only where the server runs). The
// error names the server and the field.
func CheckEntry(name string, raw json.RawMessage) error {
	if !ValidServerName(name) {
		return fmt.Errorf("%q is not a valid server name; use up to %d letters, digits, '_' and '-', starting with a letter or digit", name, MaxServerName)
	}
	if !json.Valid(raw) {
		return fmt.Errorf("server %q: the entry is not valid JSON", name)
	}
	anything := func(string) (string, bool) { return "x", true }
	if _, _, err := parseServer(name, raw, anything, slog.New(slog.DiscardHandler)); err != nil {
		var ce *Error
		if errors.As(err, &ce) && ce.File == "" {
			// Not in a file yet: the message starts at the server.
			return errors.New(strings.TrimPrefix(ce.Error(), ": "))
		}
		return err
	}
	return nil
}

// HeaderLine splits a "Name: value" header flag.
func HeaderLine(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t") {
		return "", "", fmt.Errorf("header %q: want Name: value, e.g. --header 'Authorization: Bearer ${TOKEN}'", s)
	}
	return name, strings.TrimSpace(value), nil
}
