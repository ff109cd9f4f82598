package mcpconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentapp/agentapp/internal/editdist"
	"mvdan.cc/sh/v3/shell"
	"mvdan.cc/sh/v3/syntax"
)

// Error is a problem in an mcpServers config file. It names the file,
// and when known the server and the field, so the user can go straight to
// the line to fix.
type Error struct {
	File   string
	Server string
	Field  string
	Msg    string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Server != "" {
		fmt.Fprintf(&b, ": server %q", e.Server)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": field %q", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// knownFields are the per-server fields Load understands: the ones
// Claude Desktop and Cursor write, plus agentapp's own.
var knownFields = []string{
	"command", "args", "env", "cwd",
	"type", "url", "headers", "oauth",
	"disabled", "timeout", "allowedTools", "excludedTools", "toolPrefix",
	// The client half: what the server may ask of us.
	"sampling", "roots",
	// Long-running calls (tasks.go).
	"tasks", "taskTimeout",
	// The cap on one tool result the model sees, in tokens.
	"maxOutputTokens",
}

// MaxOutputTokensLimit bounds maxOutputTokens: a cap above it is no cap
// for any model's window, so it is more likely a typo.
const MaxOutputTokensLimit = 2_000_000

// MaxToolPrefix bounds toolPrefix, so that prefixed names stay within the
// 64 characters model providers accept for a function name.
const MaxToolPrefix = 32

// Load reads a config file in the mcpServers shape that Claude Desktop
// and Cursor use:
//
//	{"mcpServers": {
//	  "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}"],
//	            "env": {"DEBUG": "${DEBUG:-0}"}, "cwd": "/tmp"},
//	  "remote": {"type": "http", "url": "https://example.com/mcp",
//	             "headers": {"Authorization": "Bearer ${TOKEN}"}}
//	}}
//
// Other top-level keys (Claude Desktop keeps its own settings there) are
// ignored, so an existing Claude Desktop file loads unchanged. An unknown
// field inside a server entry is ignored with a warning on opts.Logger,
// because other clients add fields of their own (a file shared with them
// must keep working) but a misspelt field should not pass unnoticed.
//
// ${VAR} and ${VAR:-default} are expanded through opts.LookupEnv in
// command, args, env values, cwd, url and header values; an unset variable
// without a default is an error naming it. agentapp adds these fields: disabled (bool;
// the entry is dropped), timeout (seconds per tool call, > 0), allowedTools
// and excludedTools (lists of tool names as the server sends them) and
// toolPrefix (letters, digits, '_' and '-').
//
// The servers are returned sorted by name, so the tool table and the
// banner do not depend on the order of keys in the file. Every error is a
// *Error naming the file, the server and the field. A nil opts means
// the defaults of LoadOptions.
func Load(path string, opts *LoadOptions) ([]Server, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &Error{File: path, Msg: "file not found (check the --config path)"}
		}
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read the file: %v", err)}
	}
	return parseConfig(path, data, opts)
}

// LoadOptions tunes Load.
type LoadOptions struct {
	// Logger receives the warnings about a file without mcpServers and
	// about fields Load does not know. Nil discards them.
	Logger *slog.Logger
	// LookupEnv is where ${VAR} in the file is looked up. Nil means
	// os.LookupEnv: the variables in these files are written for the
	// environment the MCP clients run in (Claude Desktop's and Cursor's
	// files expand ${HOME} and the like), so the process environment is the
	// only default under which a shared file means what it says. Pass a
	// function to expand from anything else, or to expand nothing.
	LookupEnv func(string) (string, bool)
	// OnDisabled, when set, is called with the name of each entry that has
	// "disabled": true (Load leaves those out), so that a client can list
	// them as disabled rather than forget them.
	OnDisabled func(name string)
	// OnInvalid, when set, is called with each entry that has an error
	// (a wrong field, an unset variable), which is then left out instead
	// of failing the whole load: a client can start the other servers
	// and list this one as failed with its reason.
	OnInvalid func(name string, err *Error)
}

// parseConfig is Load on bytes.
func parseConfig(file string, data []byte, opts *LoadOptions) ([]Server, error) {
	var o LoadOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	fail := func(server, field, format string, args ...any) error {
		return &Error{File: file, Server: server, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if err := json.Unmarshal(data, new(any)); err != nil {
		return nil, fail("", "", "%s", describeJSONError(data, err))
	}
	top, err := objectFields(data)
	if err != nil {
		return nil, fail("", "", "want a JSON object at the top level, like {\"mcpServers\": {...}}")
	}
	raw, ok := top.get("mcpServers")
	if !ok || isNull(raw) {
		o.Logger.Warn("MCP config file has no \"mcpServers\" object; no servers configured", "file", file)
		return nil, nil
	}
	servers, err := objectFields(raw)
	if err != nil {
		return nil, fail("", "mcpServers", "want an object mapping server names to their settings")
	}
	if dup := servers.duplicate(); dup != "" {
		return nil, fail(dup, "", "the server is defined twice in mcpServers; keep one entry")
	}

	var out []Server
	for _, f := range servers.fields {
		if strings.TrimSpace(f.name) == "" {
			return nil, fail("", "mcpServers", "a server has an empty name; give it a name")
		}
		cfg, enabled, err := parseServer(f.name, f.value, o.LookupEnv, o.Logger.With("file", file))
		if err != nil {
			var ce *Error
			if errors.As(err, &ce) {
				ce.File = file
			} else {
				ce = &Error{File: file, Server: f.name, Msg: err.Error()}
			}
			if o.OnInvalid != nil {
				o.OnInvalid(f.name, ce)
				continue
			}
			return nil, ce
		}
		if enabled {
			out = append(out, cfg)
		} else if o.OnDisabled != nil {
			o.OnDisabled(f.name)
		}
	}
	slices.SortFunc(out, func(a, b Server) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// parseServer reads one entry of mcpServers. enabled is false for an entry
// with "disabled": true, which is otherwise not checked, so a user can park
// a half-written entry.
func parseServer(name string, raw json.RawMessage, lookup func(string) (string, bool), logger *slog.Logger) (cfg Server, enabled bool, err error) {
	fail := func(field, format string, args ...any) error {
		return &Error{Server: name, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	obj, err := objectFields(raw)
	if err != nil {
		return cfg, false, fail("", "want an object with \"command\" (stdio) or \"url\" (HTTP)")
	}
	if dup := obj.duplicate(); dup != "" {
		return cfg, false, fail(dup, "the field is given twice; keep one")
	}
	if v, ok := obj.get("disabled"); ok && !isNull(v) {
		var d bool
		if json.Unmarshal(v, &d) != nil {
			return cfg, false, fail("disabled", "want true or false")
		}
		if d {
			return cfg, false, nil
		}
	}
	var unknown []string
	for _, f := range obj.fields {
		if !slices.Contains(knownFields, f.name) {
			unknown = append(unknown, f.name)
			if near := Nearest(f.name, knownFields); near != "" {
				logger.Warn(fmt.Sprintf("MCP config: ignoring unknown field %q of server %q; did you mean %q?", f.name, name, near), "server", name, "field", f.name)
				continue
			}
			logger.Warn("MCP config: ignoring unknown field", "server", name, "field", f.name,
				"known", strings.Join(knownFields, ", "))
		}
	}
	// didYouMean is added to a missing field's error when an unknown
	// field is a misspelling of it ("comand").
	didYouMean := func(field string) string {
		for _, u := range unknown {
			if Nearest(u, knownFields) == field {
				return fmt.Sprintf(" (the entry has %q: did you mean %q?)", u, field)
			}
		}
		return ""
	}

	cfg.Name = name
	ex := expander{server: name, lookup: lookup}

	str := func(field string) (string, bool, error) {
		v, ok := obj.get(field)
		if !ok || isNull(v) {
			return "", false, nil
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "", false, fail(field, "want a string")
		}
		return s, true, nil
	}
	strList := func(field string) ([]string, bool, error) {
		v, ok := obj.get(field)
		if !ok || isNull(v) {
			return nil, false, nil
		}
		var l []string
		if json.Unmarshal(v, &l) != nil {
			return nil, false, fail(field, "want a list of strings")
		}
		return l, true, nil
	}
	strMap := func(field string) (map[string]string, bool, error) {
		v, ok := obj.get(field)
		if !ok || isNull(v) {
			return nil, false, nil
		}
		var m map[string]string
		if json.Unmarshal(v, &m) != nil {
			return nil, false, fail(field, "want an object whose values are strings, like {\"KEY\": \"value\"}")
		}
		return m, true, nil
	}

	kind, hasType, err := str("type")
	if err != nil {
		return cfg, false, err
	}
	switch kind {
	case "", "stdio":
	case "http", "streamable-http", "streamableHttp":
		cfg.Transport = TransportHTTP
	case "sse":
		cfg.Transport = TransportSSE
	default:
		return cfg, false, fail("type", "unknown type %q; want \"stdio\", \"http\" (\"streamable-http\" is accepted too) or \"sse\"", kind)
	}

	command, hasCommand, err := str("command")
	if err != nil {
		return cfg, false, err
	}
	args, hasArgs, err := strList("args")
	if err != nil {
		return cfg, false, err
	}
	env, hasEnv, err := strMap("env")
	if err != nil {
		return cfg, false, err
	}
	cwd, hasCwd, err := str("cwd")
	if err != nil {
		return cfg, false, err
	}
	rawURL, hasURL, err := str("url")
	if err != nil {
		return cfg, false, err
	}
	headers, hasHeaders, err := strMap("headers")
	if err != nil {
		return cfg, false, err
	}

	isHTTP := hasURL || (hasType && kind != "stdio")
	if isHTTP {
		switch {
		case hasType && kind == "stdio":
			return cfg, false, fail("url", "a stdio server has no url; remove it or set \"type\": \"http\"")
		case !hasURL:
			return cfg, false, fail("url", "missing; an HTTP server needs \"url\": \"https://host/mcp\"")
		case hasCommand:
			return cfg, false, fail("command", "a server has either \"command\" (stdio) or \"url\" (HTTP), not both")
		case hasArgs:
			return cfg, false, fail("args", "only stdio servers take args; this one has a url")
		case hasEnv:
			return cfg, false, fail("env", "only stdio servers take env; send values to an HTTP server in \"headers\"")
		case hasCwd:
			return cfg, false, fail("cwd", "only stdio servers take cwd; this one has a url")
		}
		u, err := ex.expand("url", rawURL)
		if err != nil {
			return cfg, false, err
		}
		pu, perr := url.Parse(u)
		if perr != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return cfg, false, fail("url", "%q is not an http:// or https:// URL", u)
		}
		cfg.URL = u
		if cfg.Headers, err = ex.expandMap("headers", headers); err != nil {
			return cfg, false, err
		}
		if v, ok := obj.get("oauth"); ok && !isNull(v) {
			if cfg.OAuth, err = parseOAuth(v, ex, fail); err != nil {
				return cfg, false, err
			}
		}
	} else {
		if hasHeaders {
			return cfg, false, fail("headers", "only HTTP servers take headers; this one is a stdio command")
		}
		if _, ok := obj.get("oauth"); ok {
			return cfg, false, fail("oauth", "only HTTP servers log in with OAuth; this one is a stdio command")
		}
		if !hasCommand || strings.TrimSpace(command) == "" {
			return cfg, false, fail("command", "missing; a stdio server needs \"command\" (and usually \"args\"), an HTTP server needs \"url\"%s", didYouMean("command")+didYouMean("url"))
		}
		if cfg.Command, err = ex.expand("command", command); err != nil {
			return cfg, false, err
		}
		if strings.TrimSpace(cfg.Command) == "" {
			return cfg, false, fail("command", "is empty after ${...} expansion")
		}
		for i, a := range args {
			v, err := ex.expand(fmt.Sprintf("args[%d]", i), a)
			if err != nil {
				return cfg, false, err
			}
			cfg.Args = append(cfg.Args, v)
		}
		if cfg.Env, err = ex.expandMap("env", env); err != nil {
			return cfg, false, err
		}
		if cfg.Dir, err = ex.expand("cwd", cwd); err != nil {
			return cfg, false, err
		}
	}

	if v, ok := obj.get("timeout"); ok && !isNull(v) {
		var sec float64
		if json.Unmarshal(v, &sec) != nil {
			return cfg, false, fail("timeout", "want a number of seconds per tool call, like 60")
		}
		if !(sec > 0) || math.IsInf(sec, 0) || sec > 24*60*60 {
			return cfg, false, fail("timeout", "want a number of seconds greater than 0 (and at most a day), got %v", sec)
		}
		cfg.CallTimeout = time.Duration(sec * float64(time.Second))
	}
	if v, ok := obj.get("maxOutputTokens"); ok && !isNull(v) {
		var n float64
		if json.Unmarshal(v, &n) != nil || n != math.Trunc(n) || n < 1 || n > MaxOutputTokensLimit {
			return cfg, false, fail("maxOutputTokens", "want a whole number of tokens from 1 to %d (a tool result larger than this is cut and the rest kept for the model to read), got %s", MaxOutputTokensLimit, v)
		}
		cfg.MaxOutputTokens = int(n)
	}
	for _, field := range []string{"allowedTools", "excludedTools"} {
		l, _, err := strList(field)
		if err != nil {
			return cfg, false, err
		}
		for i, n := range l {
			if strings.TrimSpace(n) == "" {
				return cfg, false, fail(field, "entry %d is empty; list tool names as the server sends them", i+1)
			}
		}
		if field == "allowedTools" {
			cfg.AllowedTools = l
		} else {
			cfg.ExcludedTools = l
		}
	}
	prefix, _, err := str("toolPrefix")
	if err != nil {
		return cfg, false, err
	}
	if err := checkToolPrefix(prefix); err != nil {
		return cfg, false, fail("toolPrefix", "%v", err)
	}
	cfg.ToolPrefix = prefix

	if cfg.Sampling, _, err = str("sampling"); err != nil {
		return cfg, false, err
	}
	if !ValidSampling(cfg.Sampling) {
		return cfg, false, fail("sampling", "want \"ask\" (the default: the user approves each request), \"allow\" or \"deny\", got %q", cfg.Sampling)
	}
	if err := parseTasks(obj, &cfg, str, fail); err != nil {
		return cfg, false, err
	}
	roots, hasRoots, err := strList("roots")
	if err != nil {
		return cfg, false, err
	}
	if hasRoots {
		cfg.Roots = []string{} // given, even if empty: no roots at all
		for i, r := range roots {
			v, err := ex.expand(fmt.Sprintf("roots[%d]", i), r)
			if err != nil {
				return cfg, false, err
			}
			if strings.TrimSpace(v) == "" {
				return cfg, false, fail("roots", "entry %d is empty; list directories", i+1)
			}
			cfg.Roots = append(cfg.Roots, v)
		}
	}

	if err := cfg.Validate(); err != nil {
		return cfg, false, fail("", "%v", err)
	}
	return cfg, true, nil
}

// checkToolPrefix accepts the characters every model provider allows in a
// function name.
func checkToolPrefix(p string) error {
	if len(p) > MaxToolPrefix {
		return fmt.Errorf("%q is longer than %d characters", p, MaxToolPrefix)
	}
	for _, r := range p {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Errorf("%q contains %q; use only letters, digits, '_' and '-', like \"files_\"", p, r)
		}
	}
	return nil
}

// expander expands ${VAR} and ${VAR:-default} in the fields of one server.
type expander struct {
	server string
	lookup func(string) (string, bool)
}

func (x expander) expandMap(field string, m map[string]string) (map[string]string, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		e, err := x.expand(field+"."+k, v)
		if err != nil {
			return nil, err
		}
		out[k] = e
	}
	return out, nil
}

// expand replaces each ${NAME} with the variable's value and each
// ${NAME:-default} with the value, or default when the variable is unset or
// empty (as in the shell). A '$' not followed by '{' is kept as is.
func (x expander) expand(field, s string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	fail := func(format string, args ...any) error {
		return &Error{Server: x.server, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		rest := s[i+2:]
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return "", fail("unterminated \"${\" in %q; write ${NAME} or ${NAME:-default}", s)
		}
		expr := rest[:end]
		name, def, hasDef := strings.Cut(expr, ":-")
		if !validVarName(name) {
			return "", fail("invalid variable name %q in \"${%s}\"; names are letters, digits and '_', not starting with a digit", name, expr)
		}
		v, ok := x.lookup(name)
		switch {
		case hasDef && v == "":
			v = def
		case !ok:
			return "", fail("environment variable %s is not set; set it, or write ${%s:-default} to give a default", name, name)
		}
		b.WriteString(v)
		s = rest[end+1:]
	}
}

func validVarName(n string) bool {
	if n == "" {
		return false
	}
	for i, r := range n {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// ParseCommandLine turns the value of one --mcp flag into a stdio server
// config. The value is split into words with the quoting rules of a POSIX
// shell, so a path with spaces (every macOS "Application Support" path)
// can be given in quotes or with backslashes:
//
//	node "$HOME/Library/Application Support/x/server.js" --stdio
//
// No shell is run. $NAME, ${NAME} and ${NAME:-default} are expanded
// through lookupEnv, because a value the user single-quoted reaches
// agentapp with "$HOME" still in it and should mean what it means in an
// mcpServers file; a variable that is unset and has no default is an
// error naming it, rather than a silently empty argument. A nil lookupEnv
// means no variable is set. Command substitution ($(...) and backquotes),
// process substitution, arithmetic and the other parameter expansions are
// refused, since running them would need a shell. Globs are kept as they
// are, and a leading ~ is the HOME that lookupEnv gives. Unlike in a
// shell, a backslash before a character that means nothing special to a
// shell is kept, so that a Windows path like C:\tools\server.exe works
// unquoted.
//
// A first word of the form NAME=COMMAND names the server, as in
// "files=npx -y @modelcontextprotocol/server-filesystem /tmp"; named
// reports that it did, so that the caller can refuse two servers with the
// same chosen name instead of renaming one. NAME is letters, digits, '_'
// and '-' (see ValidServerName). An environment-style assignment such as
// "DEBUG=1 node x.js" is refused with a pointer to the config file's env
// field: without a shell it would not set anything, and guessing which
// words are assignments would make the server name depend on case. Without
// a NAME the server is named after what it runs (see CommandName).
func ParseCommandLine(s string, lookupEnv func(string) (string, bool)) (cfg Server, named bool, err error) {
	if lookupEnv == nil {
		lookupEnv = func(string) (string, bool) { return "", false }
	}
	src := keepPlainBackslashes(s)
	var words []*syntax.Word
	for w, err := range syntax.NewParser().WordsSeq(strings.NewReader(src)) {
		if err != nil {
			return Server{}, false, fmt.Errorf("--mcp %q: %v; quote arguments with spaces like a shell would, e.g. --mcp 'node \"$HOME/my servers/x.js\"'", s, err)
		}
		words = append(words, w)
	}
	for _, w := range words {
		if err := checkWord(w, lookupEnv); err != nil {
			return Server{}, false, fmt.Errorf("--mcp %q: %v", s, err)
		}
	}
	fields, err := shell.Fields(src, func(n string) string {
		v, _ := lookupEnv(n)
		return v
	})
	if err != nil {
		return Server{}, false, fmt.Errorf("--mcp %q: %v", s, err)
	}
	if len(fields) == 0 || strings.TrimSpace(fields[0]) == "" {
		return Server{}, false, errors.New(`--mcp needs a command line that starts an MCP server on stdio, e.g. --mcp "npx -y @modelcontextprotocol/server-memory" or --mcp "agentapp serve"`)
	}
	name, command, err := splitName(fields[0])
	if err != nil {
		return Server{}, false, fmt.Errorf("--mcp %q: %v", s, err)
	}
	if strings.TrimSpace(command) == "" {
		return Server{}, false, fmt.Errorf("--mcp %q: %s= names the server but no command follows; write %s=COMMAND ARGS..., e.g. --mcp \"%s=agentapp serve\"", s, name, name, name)
	}
	args := fields[1:]
	if len(args) == 0 {
		args = nil
	}
	named = name != ""
	if !named {
		name = CommandName(command, args)
	}
	return Server{Name: name, Command: command, Args: args}, named, nil
}

// shellSpecial are the characters a backslash escapes in --mcp: those
// that mean something to a shell outside quotes.
const shellSpecial = " \t\n\\'\"$`;&|<>()*?[]#~{}!"

// keepPlainBackslashes doubles each backslash outside quotes that is not
// followed by a character in shellSpecial, so that the shell parser keeps
// it instead of dropping it. Inside double quotes POSIX already keeps such
// a backslash, and inside single quotes every backslash is literal.
func keepPlainBackslashes(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	var quote byte // 0, '\'' or '"'
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case c == '\\':
			next := i+1 < len(s)
			if quote == 0 && (!next || !strings.ContainsRune(shellSpecial, rune(s[i+1]))) {
				b.WriteByte('\\')
			} else if next {
				b.WriteByte(c)
				i++
				c = s[i]
			}
		case quote == '"':
			if c == '"' {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		}
		b.WriteByte(c)
	}
	return b.String()
}

// MaxServerName bounds a server name given with NAME= in --mcp.
const MaxServerName = 64

// ValidServerName reports whether name may be given to a server with
// NAME= in --mcp: 1 to MaxServerName ASCII letters, digits, '_' and '-',
// starting with a letter or digit. These are the characters of a
// toolPrefix, so a name can be used as one, and a name never needs quoting
// in "agentapp mcp tools --server NAME" or "/mcp restart NAME".
func ValidServerName(name string) bool {
	return len(name) <= MaxServerName && ValidToolName(name) && name[0] != '-' && name[0] != '_'
}

// splitName splits NAME=COMMAND. A word whose part before '=' contains a
// path separator is a command (/opt/a=b/server); one that looks like an
// environment variable assignment is refused.
func splitName(word string) (name, command string, err error) {
	before, after, ok := strings.Cut(word, "=")
	if !ok || strings.ContainsAny(before, `/\`) {
		return "", word, nil
	}
	if envStyle(before) {
		return "", "", fmt.Errorf("%s=%s looks like an environment variable assignment, which --mcp cannot make (it runs no shell); export %s before starting agentapp, or use a config file with \"env\": {\"%s\": \"...\"}. To name the server, use a name with a lowercase letter, e.g. files=COMMAND", before, after, before, before)
	}
	if !ValidServerName(before) {
		return "", "", fmt.Errorf("%q is not a valid server name; use 1 to %d letters, digits, '_' and '-', starting with a letter or digit, e.g. files=COMMAND", before, MaxServerName)
	}
	return before, after, nil
}

// envStyle reports whether s is written like an environment variable
// name: upper-case letters, digits and '_'.
func envStyle(s string) bool {
	if !validVarName(s) {
		return false
	}
	return strings.ToUpper(s) == s
}

// checkWord refuses the parts of a shell word that only a shell could
// expand, and $NAME or ${NAME} whose variable is not set.
func checkWord(w *syntax.Word, lookupEnv func(string) (string, bool)) error {
	var err error
	syntax.Walk(w, func(n syntax.Node) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.CmdSubst:
			form := "$(...)"
			if n.Backquotes {
				form = "`...`"
			}
			err = fmt.Errorf("command substitution %s is not run: --mcp starts the command without a shell; put the command's output in the command line yourself", form)
		case *syntax.ProcSubst:
			err = errors.New("process substitution <(...) is not run: --mcp starts the command without a shell")
		case *syntax.ArithmExp:
			err = errors.New("arithmetic $((...)) is not expanded: --mcp starts the command without a shell; write the number")
		case *syntax.ParamExp:
			err = checkParam(n, lookupEnv)
		}
		return err == nil
	})
	return err
}

// checkParam accepts the expansions an mcpServers file has: $NAME,
// ${NAME} and ${NAME:-default} (and ${NAME-default}).
func checkParam(p *syntax.ParamExp, lookupEnv func(string) (string, bool)) error {
	const only = "only $NAME, ${NAME} and ${NAME:-default} are expanded"
	if p.Param == nil || !validVarName(p.Param.Value) {
		name := "$"
		if p.Param != nil {
			name += p.Param.Value
		}
		return fmt.Errorf("%s is not an environment variable (there are no shell arguments here); %s, or quote a literal $ as '$'", name, only)
	}
	name := p.Param.Value
	hasDefault := p.Exp != nil && (p.Exp.Op == syntax.DefaultUnset || p.Exp.Op == syntax.DefaultUnsetOrNull)
	other := p.Flags != nil || p.Excl || p.Length || p.Width || p.IsSet ||
		p.Split != syntax.OptUnset || p.GlobSubst != syntax.OptUnset || p.RcExpand != syntax.OptUnset ||
		p.NestedParam != nil || p.Index != nil || len(p.Modifiers) > 0 || p.Slice != nil ||
		p.Repl != nil || p.Names != 0
	if other || (p.Exp != nil && !hasDefault) {
		return fmt.Errorf("${%s...} uses a shell expansion that is not supported; %s", name, only)
	}
	if _, ok := lookupEnv(name); !ok && !hasDefault {
		return fmt.Errorf("environment variable %s is not set; set it, or write ${%s:-default} to give a default", name, name)
	}
	return nil
}

// launchers are commands that run another program named by their first
// non-flag argument; a server started through them is named after that
// program, because "npx" tells a user nothing in a banner.
var launchers = map[string]bool{
	"npx": true, "bunx": true, "uvx": true, "pipx": true, "node": true, "deno": true, "bun": true,
	"python": true, "python3": true, "uv": true,
}

// CommandName derives a server name from a command line: the base name of
// the command without extension, or for launchers like npx, uvx, node or
// python the base name of the package or script they run, without a
// version suffix (so "npx -y @modelcontextprotocol/server-memory@latest" is
// "server-memory").
func CommandName(command string, args []string) string {
	base := trimExt(filepath.Base(filepath.ToSlash(command)))
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	if launchers[strings.ToLower(base)] {
		for _, a := range args {
			if strings.HasPrefix(a, "-") || a == "run" || a == "x" {
				continue
			}
			a = strings.TrimRight(a, `/\`)
			if n := entryPackage(a); n != "" {
				return n
			}
			if i := strings.LastIndexAny(a, `/\`); i >= 0 {
				a = a[i+1:]
			}
			if i := strings.LastIndex(a, "@"); i > 0 {
				a = a[:i]
			}
			if a = trimExt(a); a != "" {
				return a
			}
			break
		}
	}
	if base == "" || base == "." {
		return "mcp"
	}
	return base
}

// entryNames are the file names a package's entry script usually has: they
// say nothing about the server ("index" in a banner), its package does.
var entryNames = map[string]bool{"index": true, "main": true, "cli": true, "__main__": true}

// buildDirs are the folders a package keeps its built or source entry in,
// between the package's folder and the script.
var buildDirs = map[string]bool{"dist": true, "build": true, "lib": true, "out": true, "bin": true, "src": true, "esm": true, "cjs": true}

// maxPackageJSON bounds what entryPackage reads of a package.json.
const maxPackageJSON = 256 << 10

// entryPackage names the package a script with a generic name belongs to
// ("…/server-everything/dist/index.js" is "server-everything"): the "name"
// of the package.json in the folder above the build folders, without an npm
// scope, or else that folder's name. It returns "" for a script with a name
// of its own, or one given without a folder.
func entryPackage(script string) string {
	parts := strings.FieldsFunc(filepath.ToSlash(script), func(r rune) bool { return r == '/' || r == '\\' })
	if len(parts) < 2 || !entryNames[strings.ToLower(trimExt(parts[len(parts)-1]))] {
		return ""
	}
	i := len(parts) - 2
	for i > 0 && buildDirs[strings.ToLower(parts[i])] {
		i--
	}
	dir := parts[i]
	if dir == "." || dir == ".." || buildDirs[strings.ToLower(dir)] {
		return ""
	}
	pkgDir := filepath.Dir(script)
	for range len(parts) - 2 - i {
		pkgDir = filepath.Dir(pkgDir)
	}
	if f, err := os.Open(filepath.Join(pkgDir, "package.json")); err == nil {
		var pkg struct {
			Name string `json:"name"`
		}
		err := json.NewDecoder(io.LimitReader(f, maxPackageJSON)).Decode(&pkg)
		f.Close()
		name := pkg.Name[strings.LastIndex(pkg.Name, "/")+1:] // without the @scope/
		if err == nil && ValidServerName(name) {
			return name
		}
	}
	if !ValidServerName(dir) {
		return ""
	}
	return dir
}

func trimExt(s string) string {
	for _, ext := range []string{".exe", ".cmd", ".bat", ".js", ".mjs", ".cjs", ".ts", ".py"} {
		if len(s) > len(ext) && strings.EqualFold(s[len(s)-len(ext):], ext) {
			return s[:len(s)-len(ext)]
		}
	}
	return s
}

// UniqueName returns name, or name-2, name-3 … the first that is not taken,
// so two --mcp flags running the same command (or a flag and a config
// entry) get distinct names in warnings and tool origins.
func UniqueName(name string, taken func(string) bool) string {
	if !taken(name) {
		return name
	}
	for i := 2; ; i++ {
		n := name + "-" + strconv.Itoa(i)
		if !taken(n) {
			return n
		}
	}
}

// Nearest returns the word of known that name is most likely a misspelling
// of: the same but for case, or within two edits (one for a name of three
// letters or fewer); "" when none is that close.
func Nearest(name string, known []string) string {
	best, bestD := "", 3
	if len([]rune(name)) <= 3 {
		bestD = 2
	}
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return k
		}
		if d := editdist.Distance(strings.ToLower(name), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// jsonFields is a JSON object's members in file order, duplicates kept.
type jsonFields struct {
	fields []jsonField
}

type jsonField struct {
	name  string
	value json.RawMessage
}

func (o jsonFields) get(name string) (json.RawMessage, bool) {
	for _, f := range o.fields {
		if f.name == name {
			return f.value, true
		}
	}
	return nil, false
}

// duplicate returns the first name that occurs twice, or "".
func (o jsonFields) duplicate() string {
	seen := make(map[string]bool, len(o.fields))
	for _, f := range o.fields {
		if seen[f.name] {
			return f.name
		}
		seen[f.name] = true
	}
	return ""
}

// objectFields splits a JSON object into its members, keeping their order
// and any duplicate names (encoding/json would silently keep the last).
func objectFields(raw json.RawMessage) (jsonFields, error) {
	var o jsonFields
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return o, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return o, errors.New("not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return o, err
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return o, err
		}
		o.fields = append(o.fields, jsonField{name: name, value: v})
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return o, err
	}
	return o, nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// describeJSONError says where a syntax error is, as line and column.
func describeJSONError(data []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	off := int64(-1)
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return fmt.Sprintf("invalid JSON: %v", err)
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(data[:off], '\n')
	return fmt.Sprintf("invalid JSON at line %d, column %d: %v", line, col, err)
}
