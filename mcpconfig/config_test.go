package mcpconfig

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/google/go-cmp/cmp"
)

func TestLoadConfigClaudeDesktopFile(t *testing.T) {
	got, err := Load(filepath.Join("testdata", "config", "claude_desktop_config.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Server{
		{Name: "fetch", Command: "uvx", Args: []string{"mcp-server-fetch"}},
		{Name: "filesystem", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/alice/Desktop", "/Users/alice/Downloads"}},
		{Name: "memory", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"},
			Env: map[string]string{"MEMORY_FILE_PATH": "/Users/alice/.claude/memory.json"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}

func TestLoadConfigExpansionHTTPAndOurFields(t *testing.T) {
	env := lookupIn(map[string]string{
		"SHOP_DATA": "/srv/shop",
		"USER_NAME": "Ann",
		"MCP_HOST":  "mcp.example.com",
		"MCP_TOKEN": "s3cret",
		"TRACE":     "", // set but empty: the default applies, as in the shell
	})
	got, err := Load(filepath.Join("testdata", "config", "agentapp.json"), &LoadOptions{LookupEnv: env})
	if err != nil {
		t.Fatal(err)
	}
	want := []Server{
		{Name: "cursor-style", URL: "http://127.0.0.1:8931/mcp"},
		{Name: "remote", URL: "https://mcp.example.com/mcp", Transport: TransportHTTP,
			Headers:       map[string]string{"Authorization": "Bearer s3cret", "X-Client": "agentapp"},
			ExcludedTools: []string{"deleteEverything"}},
		{Name: "shop", Command: "agentapp", Args: []string{"serve", "--data-dir", "/srv/shop"},
			Env:          map[string]string{"AGENT_TRACE": "0", "GREETING": "hello Ann!"},
			Dir:          "/srv/shop",
			CallTimeout:  2500 * time.Millisecond,
			AllowedTools: []string{"getOrderStatus", "searchKnowledge"},
			ToolPrefix:   "shop_"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}

// lookupIn is a LookupEnv over m.
func lookupIn(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// TestLoadConfigDefaultLookupIsProcessEnvironment: without a LookupEnv,
// ${VAR} comes from the process environment, as documented.
func TestLoadConfigDefaultLookupIsProcessEnvironment(t *testing.T) {
	t.Setenv("AGENTAPP_TEST_MCP_HOST", "mcp.example.com")
	got, err := parseConfig("agentapp.json", []byte(`{"mcpServers": {"r": {"url": "https://${AGENTAPP_TEST_MCP_HOST}/mcp"}}}`), &LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].URL != "https://mcp.example.com/mcp" {
		t.Errorf("servers %+v, want the URL expanded from the process environment", got)
	}
}

func TestLoadConfigUnsetVariable(t *testing.T) {
	_, err := parseConfig("agentapp.json", []byte(`{"mcpServers": {"remote": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${MCP_TOKEN}"}}}}`),
		&LoadOptions{LookupEnv: lookupIn(nil)})
	wantErr(t, err, "agentapp.json", "remote", "headers.Authorization", "MCP_TOKEN is not set", "${MCP_TOKEN:-default}")
}

func TestExpand(t *testing.T) {
	env := map[string]string{"A": "1", "EMPTY": "", "B_2": "two"}
	x := expander{server: "s", lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	for in, want := range map[string]string{
		"plain":                      "plain",
		"$A stays":                   "$A stays",
		"${A}":                       "1",
		"x${A}y${B_2}z":              "x1ytwoz",
		"${MISSING:-fallback}":       "fallback",
		"${EMPTY:-fallback}":         "fallback",
		"${EMPTY}":                   "",
		"${A:-unused}":               "1",
		"${MISSING:-}":               "",
		"${MISSING:-a b/c:d}":        "a b/c:d",
		"cost $5 and ${A} more ${A}": "cost $5 and 1 more 1",
	} {
		got, err := x.expand("f", in)
		if err != nil {
			t.Errorf("expand(%q): %v", in, err)
			continue
		}
		if got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
	for in, msg := range map[string]string{
		"${MISSING}":   "MISSING is not set",
		"${A":          "unterminated",
		"${}":          "invalid variable name",
		"${1X}":        "invalid variable name",
		"${A-B}":       "invalid variable name",
		"ok ${BAD X}":  "invalid variable name",
		"${A}${NOPE}x": "NOPE is not set",
	} {
		_, err := x.expand("f", in)
		wantErr(t, err, `server "s"`, `field "f"`, msg)
	}
}

func TestLoadConfigInvalid(t *testing.T) {
	opts := &LoadOptions{LookupEnv: lookupIn(map[string]string{"HOME": "/home/a"})}
	cases := []struct {
		name, json string
		want       []string // substrings of the error
	}{
		{"syntax", "{\n  \"mcpServers\": {,}\n}", []string{"agentapp.json", "invalid JSON at line 2"}},
		{"top not object", `["mcpServers"]`, []string{"agentapp.json", "top level"}},
		{"mcpServers not object", `{"mcpServers": []}`, []string{`field "mcpServers"`, "want an object"}},
		{"server not object", `{"mcpServers": {"files": "npx"}}`, []string{`server "files"`, `"command"`}},
		{"duplicate server", `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`, []string{`server "a"`, "defined twice"}},
		{"duplicate field", `{"mcpServers": {"a": {"command": "x", "command": "y"}}}`, []string{`server "a"`, `field "command"`, "twice"}},
		{"empty name", `{"mcpServers": {" ": {"command": "x"}}}`, []string{"empty name"}},
		{"neither command nor url", `{"mcpServers": {"files": {"args": ["a"]}}}`, []string{`server "files"`, `field "command"`, "missing"}},
		{"command not string", `{"mcpServers": {"files": {"command": ["npx"]}}}`, []string{`server "files"`, `field "command"`, "want a string"}},
		{"empty command", `{"mcpServers": {"files": {"command": "  "}}}`, []string{`field "command"`, "missing"}},
		{"args not list", `{"mcpServers": {"files": {"command": "npx", "args": "-y x"}}}`, []string{`agentapp.json: server "files": field "args": want a list of strings`}},
		{"args with number", `{"mcpServers": {"files": {"command": "npx", "args": ["-p", 8080]}}}`, []string{`field "args"`, "want a list of strings"}},
		{"env not object", `{"mcpServers": {"files": {"command": "npx", "env": ["A=1"]}}}`, []string{`field "env"`, "values are strings"}},
		{"env number value", `{"mcpServers": {"files": {"command": "npx", "env": {"PORT": 8080}}}}`, []string{`field "env"`, "values are strings"}},
		{"cwd not string", `{"mcpServers": {"files": {"command": "npx", "cwd": 1}}}`, []string{`field "cwd"`, "want a string"}},
		{"type unknown", `{"mcpServers": {"r": {"type": "websocket", "url": "https://h"}}}`, []string{`server "r"`, `field "type"`, `"websocket"`}},
		{"sse without url", `{"mcpServers": {"r": {"type": "sse"}}}`, []string{`field "url"`, "missing"}},
		{"oauth on stdio", `{"mcpServers": {"r": {"command": "x", "oauth": {"clientId": "c"}}}}`, []string{`field "oauth"`, "stdio"}},
		{"oauth not object", `{"mcpServers": {"r": {"url": "https://h", "oauth": "c"}}}`, []string{`field "oauth"`, "object"}},
		{"oauth unknown field", `{"mcpServers": {"r": {"url": "https://h", "oauth": {"client_id": "c"}}}}`, []string{`field "oauth.client_id"`, "clientId"}},
		{"oauth secret without id", `{"mcpServers": {"r": {"url": "https://h", "oauth": {"clientSecret": "s"}}}}`, []string{`field "oauth.clientSecret"`, "clientId"}},
		{"oauth metadata url http", `{"mcpServers": {"r": {"url": "https://h", "oauth": {"clientMetadataUrl": "http://a/c.json"}}}}`, []string{`field "oauth.clientMetadataUrl"`, "https"}},
		{"oauth port", `{"mcpServers": {"r": {"url": "https://h", "oauth": {"callbackPort": 70000}}}}`, []string{`field "oauth.callbackPort"`, "65535"}},
		{"oauth scope with space", `{"mcpServers": {"r": {"url": "https://h", "oauth": {"scopes": ["a b"]}}}}`, []string{`field "oauth.scopes"`, "not a scope"}},
		{"type not string", `{"mcpServers": {"r": {"type": 1, "url": "https://h"}}}`, []string{`field "type"`, "want a string"}},
		{"http without url", `{"mcpServers": {"r": {"type": "http"}}}`, []string{`server "r"`, `field "url"`, "missing"}},
		{"stdio with url", `{"mcpServers": {"r": {"type": "stdio", "command": "x", "url": "https://h"}}}`, []string{`field "url"`, "stdio"}},
		{"both command and url", `{"mcpServers": {"r": {"command": "x", "url": "https://h"}}}`, []string{`server "r"`, `field "command"`, "not both"}},
		{"url not http", `{"mcpServers": {"r": {"url": "ftp://h/mcp"}}}`, []string{`field "url"`, "not an http"}},
		{"url without host", `{"mcpServers": {"r": {"url": "https:///mcp"}}}`, []string{`field "url"`, "not an http"}},
		{"url not string", `{"mcpServers": {"r": {"url": 5}}}`, []string{`field "url"`, "want a string"}},
		{"url unset var", `{"mcpServers": {"r": {"url": "https://${NOPE}/mcp"}}}`, []string{`server "r"`, `field "url"`, "NOPE is not set"}},
		{"headers not object", `{"mcpServers": {"r": {"url": "https://h", "headers": "Bearer x"}}}`, []string{`field "headers"`, "values are strings"}},
		{"headers on stdio", `{"mcpServers": {"r": {"command": "x", "headers": {"A": "b"}}}}`, []string{`field "headers"`, "only HTTP"}},
		{"args on http", `{"mcpServers": {"r": {"url": "https://h", "args": ["a"]}}}`, []string{`field "args"`, "only stdio"}},
		{"env on http", `{"mcpServers": {"r": {"url": "https://h", "env": {"A": "b"}}}}`, []string{`field "env"`, "only stdio"}},
		{"cwd on http", `{"mcpServers": {"r": {"url": "https://h", "cwd": "/"}}}`, []string{`field "cwd"`, "only stdio"}},
		{"command unset var", `{"mcpServers": {"f": {"command": "${BIN}"}}}`, []string{`server "f"`, `field "command"`, "BIN is not set"}},
		{"command empty after expansion", `{"mcpServers": {"f": {"command": "${BIN:-}"}}}`, []string{`field "command"`, "empty after"}},
		{"args unset var", `{"mcpServers": {"f": {"command": "x", "args": ["a", "${DIR}"]}}}`, []string{`field "args[1]"`, "DIR is not set"}},
		{"env unset var", `{"mcpServers": {"f": {"command": "x", "env": {"K": "${KEY}"}}}}`, []string{`field "env.K"`, "KEY is not set"}},
		{"cwd unset var", `{"mcpServers": {"f": {"command": "x", "cwd": "${WORK}"}}}`, []string{`field "cwd"`, "WORK is not set"}},
		{"disabled not bool", `{"mcpServers": {"f": {"command": "x", "disabled": "yes"}}}`, []string{`field "disabled"`, "true or false"}},
		{"timeout string", `{"mcpServers": {"f": {"command": "x", "timeout": "30s"}}}`, []string{`field "timeout"`, "number of seconds"}},
		{"timeout zero", `{"mcpServers": {"f": {"command": "x", "timeout": 0}}}`, []string{`field "timeout"`, "greater than 0"}},
		{"timeout negative", `{"mcpServers": {"f": {"command": "x", "timeout": -5}}}`, []string{`field "timeout"`, "greater than 0"}},
		{"timeout huge", `{"mcpServers": {"f": {"command": "x", "timeout": 1e9}}}`, []string{`field "timeout"`, "at most a day"}},
		{"allowedTools not list", `{"mcpServers": {"f": {"command": "x", "allowedTools": "read_file"}}}`, []string{`field "allowedTools"`, "list of strings"}},
		{"allowedTools empty entry", `{"mcpServers": {"f": {"command": "x", "allowedTools": ["a", ""]}}}`, []string{`field "allowedTools"`, "entry 2 is empty"}},
		{"excludedTools not list", `{"mcpServers": {"f": {"command": "x", "excludedTools": {"a": true}}}}`, []string{`field "excludedTools"`, "list of strings"}},
		{"toolPrefix not string", `{"mcpServers": {"f": {"command": "x", "toolPrefix": 1}}}`, []string{`field "toolPrefix"`, "want a string"}},
		{"toolPrefix bad char", `{"mcpServers": {"f": {"command": "x", "toolPrefix": "fs."}}}`, []string{`server "f"`, `field "toolPrefix"`, "'.'", "letters, digits"}},
		{"toolPrefix space", `{"mcpServers": {"f": {"command": "x", "toolPrefix": "my fs"}}}`, []string{`field "toolPrefix"`, "' '"}},
		{"toolPrefix too long", `{"mcpServers": {"f": {"command": "x", "toolPrefix": "` + strings.Repeat("p", 33) + `"}}}`, []string{`field "toolPrefix"`, "longer than 32"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseConfig("agentapp.json", []byte(c.json), opts)
			if err == nil {
				t.Fatalf("no error; got %+v", got)
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.File != "agentapp.json" {
				t.Errorf("error %T %v is not a *Error naming the file", err, err)
			}
			wantErr(t, err, c.want...)
		})
	}
}

func TestLoadConfigTolerates(t *testing.T) {
	var logs bytes.Buffer
	global := testkit.RecordDefaultLogger(t)
	opts := &LoadOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil)), LookupEnv: lookupIn(nil)}

	got, err := parseConfig("cline.json", []byte(`{
		"mcpServers": {
			"files": {"command": "npx", "args": null, "autoApprove": ["read_file"], "transportType": "stdio"},
			"off": {"disabled": true, "command": ["not", "checked"]},
			"on": {"disabled": false, "type": "streamable-http", "url": "http://localhost:3000/mcp"}
		},
		"theme": "dark"
	}`), opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []Server{
		{Name: "files", Command: "npx"},
		{Name: "on", URL: "http://localhost:3000/mcp", Transport: TransportHTTP},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	for _, s := range []string{"field=autoApprove", "field=transportType", "server=files"} {
		if !strings.Contains(logs.String(), s) {
			t.Errorf("log %q does not mention %s", logs.String(), s)
		}
	}

	// A file without mcpServers (a fresh Claude Desktop install) has no
	// servers and is not an error.
	logs.Reset()
	got, err = parseConfig("claude.json", []byte(`{"globalShortcut": ""}`), opts)
	if err != nil || len(got) != 0 {
		t.Errorf("no mcpServers: got %v, %v; want no servers and no error", got, err)
	}
	if !strings.Contains(logs.String(), "no servers configured") || !strings.Contains(logs.String(), "file=claude.json") {
		t.Errorf("log %q does not warn that claude.json configures no servers", logs.String())
	}
	if global.String() != "" {
		t.Errorf("the default logger received %q; the warnings belong to the logger given", global.String())
	}
}

// TestLoadConfigNilLoggerDiscards: without a logger the warnings go
// nowhere, not to the default logger.
func TestLoadConfigNilLoggerDiscards(t *testing.T) {
	global := testkit.RecordDefaultLogger(t)
	for _, opts := range []*LoadOptions{nil, {}} {
		if _, err := parseConfig("cline.json", []byte(`{"mcpServers": {"files": {"command": "npx", "autoApprove": []}}}`), opts); err != nil {
			t.Fatal(err)
		}
		if _, err := parseConfig("claude.json", []byte(`{}`), opts); err != nil {
			t.Fatal(err)
		}
	}
	if global.String() != "" {
		t.Errorf("the default logger received %q, want nothing", global.String())
	}
}

func TestLoadConfigMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.json"), nil)
	wantErr(t, err, "nope.json", "not found", "--config")
}

func TestParseCommandLine(t *testing.T) {
	cases := []struct {
		in   string
		want Server
	}{
		{"agentapp serve", Server{Name: "agentapp", Command: "agentapp", Args: []string{"serve"}}},
		{"  /tmp/build/agentapp   serve  ", Server{Name: "agentapp", Command: "/tmp/build/agentapp", Args: []string{"serve"}}},
		{"npx -y @modelcontextprotocol/server-memory@latest", Server{Name: "server-memory", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory@latest"}}},
		{"uvx mcp-server-fetch", Server{Name: "mcp-server-fetch", Command: "uvx", Args: []string{"mcp-server-fetch"}}},
		{"python3 -u ./servers/weather.py --port 0", Server{Name: "weather", Command: "python3", Args: []string{"-u", "./servers/weather.py", "--port", "0"}}},
		{"node", Server{Name: "node", Command: "node"}},
		{"node /opt/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio",
			Server{Name: "server-everything", Command: "node", Args: []string{"/opt/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"}}},
		{"node ~/src/weather-mcp/build/esm/main.mjs", Server{Name: "weather-mcp", Command: "node", Args: []string{"~/src/weather-mcp/build/esm/main.mjs"}}},
		{"python3 -m server", Server{Name: "server", Command: "python3", Args: []string{"-m", "server"}}},
		{"node dist/index.js", Server{Name: "index", Command: "node", Args: []string{"dist/index.js"}}},
		{`C:\tools\fs-server.exe`, Server{Name: "fs-server", Command: `C:\tools\fs-server.exe`}},
	}
	for _, c := range cases {
		got, named, err := ParseCommandLine(c.in, nil)
		if named {
			t.Errorf("ParseCommandLine(%q) says the server is named", c.in)
		}
		if err != nil {
			t.Errorf("ParseCommandLine(%q): %v", c.in, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("ParseCommandLine(%q) (-want +got):\n%s", c.in, diff)
		}
	}
	for _, in := range []string{"", "   ", "\t\n"} {
		_, _, err := ParseCommandLine(in, nil)
		wantErr(t, err, "--mcp", "e.g.")
	}
}

// TestCommandNamePackageJSON: a generic entry script is named after the
// "name" of its package's package.json (without the npm scope), which may
// differ from the folder's name.
func TestCommandNamePackageJSON(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "checkout")
	if err := os.MkdirAll(filepath.Join(dir, "dist"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "dist", "index.js")
	if got := CommandName("node", []string{script}); got != "checkout" {
		t.Errorf("without a package.json: %q, want the folder above dist", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name": "@acme/orders-mcp", "version": "1.0.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := CommandName("node", []string{script}); got != "orders-mcp" {
		t.Errorf("with a package.json: %q, want its name without the scope", got)
	}
}

// TestParseCommandLineQuoting: --mcp splits like a shell, expands only
// environment variables and only through the lookup it is given, and
// refuses what would need a shell to run.
func TestParseCommandLineQuoting(t *testing.T) {
	env := map[string]string{"HOME": "/Users/ann", "DIR": "my servers", "EMPTY": ""}
	lookup := func(n string) (string, bool) { v, ok := env[n]; return v, ok }
	const appSupport = "/Users/ann/Library/Application Support/x/server.js"
	cases := []struct {
		in    string
		want  Server
		named bool
	}{
		{`node "$HOME/Library/Application Support/x/server.js"`, Server{Name: "server", Command: "node", Args: []string{appSupport}}, false},
		{`node '/Users/ann/Library/Application Support/x/server.js' --stdio`, Server{Name: "server", Command: "node", Args: []string{appSupport, "--stdio"}}, false},
		{`node /Users/ann/Library/Application\ Support/x/server.js`, Server{Name: "server", Command: "node", Args: []string{appSupport}}, false},
		{`"/opt/my tools/srv" a"b c"d 'it''s' "say \"hi\""`, Server{Name: "srv", Command: "/opt/my tools/srv", Args: []string{"ab cd", "its", `say "hi"`}}, false},
		{`srv ${HOME}/x "$DIR" $DIR`, Server{Name: "srv", Command: "srv", Args: []string{"/Users/ann/x", "my servers", "my", "servers"}}, false},
		{`srv ${UNSET:-/tmp} ${EMPTY:-dflt} "${EMPTY}"`, Server{Name: "srv", Command: "srv", Args: []string{"/tmp", "dflt", ""}}, false},
		{`srv '$HOME' \$HOME ~/x`, Server{Name: "srv", Command: "srv", Args: []string{"$HOME", "$HOME", "/Users/ann/x"}}, false},
		{`srv *.go '[ab]' ?`, Server{Name: "srv", Command: "srv", Args: []string{"*.go", "[ab]", "?"}}, false},
		{`C:\tools\fs-server.exe --root "C:\My Files"`, Server{Name: "fs-server", Command: `C:\tools\fs-server.exe`, Args: []string{"--root", `C:\My Files`}}, false},
		{`files=npx -y @modelcontextprotocol/server-filesystem /tmp`, Server{Name: "files", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"}}, true},
		{`mine="/tmp/a dir/agentapp" serve`, Server{Name: "mine", Command: "/tmp/a dir/agentapp", Args: []string{"serve"}}, true},
		{`My_Server-2=srv`, Server{Name: "My_Server-2", Command: "srv"}, true},
		{`/opt/a=b/srv x=y`, Server{Name: "srv", Command: "/opt/a=b/srv", Args: []string{"x=y"}}, false},
	}
	for _, c := range cases {
		got, named, err := ParseCommandLine(c.in, lookup)
		if err != nil {
			t.Errorf("ParseCommandLine(%q): %v", c.in, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("ParseCommandLine(%q) (-want +got):\n%s", c.in, diff)
		}
		if named != c.named {
			t.Errorf("ParseCommandLine(%q) named = %v, want %v", c.in, named, c.named)
		}
	}

	errs := []struct {
		in   string
		subs []string
	}{
		{`srv $(id)`, []string{"command substitution $(...) is not run", "without a shell"}},
		{"srv `id`", []string{"command substitution `...` is not run"}},
		{`srv "$(id)"`, []string{"command substitution"}},
		{`srv <(id)`, []string{"process substitution"}},
		{`srv $((1+2))`, []string{"arithmetic"}},
		{`srv ${#HOME}`, []string{"not supported", "${NAME:-default}"}},
		{`srv $1`, []string{"$1 is not an environment variable"}},
		{`srv $UNSET`, []string{"UNSET is not set", "${UNSET:-default}"}},
		{`srv "${UNSET}"`, []string{"UNSET is not set"}},
		{`node "/my servers/x.js`, []string{"closing quote", "quote arguments"}},
		{`node 'x.js`, []string{"closing quote"}},
		{`srv; rm -rf /`, []string{"not a valid word"}},
		{`srv | tee log`, []string{"not a valid word"}},
		{`DEBUG=1 node x.js`, []string{"DEBUG=1 looks like an environment variable assignment", `"env"`, "export DEBUG"}},
		{`my.srv=node x.js`, []string{`"my.srv" is not a valid server name`, "letters, digits"}},
		{`-x=node`, []string{"not a valid server name"}},
		{`files= npx x`, []string{"files= names the server but no command follows"}},
		{`'   '`, []string{"--mcp needs a command line"}},
	}
	for _, c := range errs {
		_, _, err := ParseCommandLine(c.in, lookup)
		wantErr(t, err, c.subs...)
	}

	// A nil lookup expands nothing: the process environment is not read.
	t.Setenv("AGENTAPP_TEST_SET", "x")
	_, _, err := ParseCommandLine("srv $AGENTAPP_TEST_SET", nil)
	wantErr(t, err, "AGENTAPP_TEST_SET is not set")
}

func TestUniqueName(t *testing.T) {
	taken := map[string]bool{"agentapp": true, "agentapp-2": true}
	if got := UniqueName("agentapp", func(n string) bool { return taken[n] }); got != "agentapp-3" {
		t.Errorf("UniqueName = %q, want agentapp-3", got)
	}
	if got := UniqueName("files", func(n string) bool { return taken[n] }); got != "files" {
		t.Errorf("UniqueName = %q, want files", got)
	}
}

func wantErr(t *testing.T, err error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("no error, want one mentioning %q", subs)
		return
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
}

// TestLoadConfigSSEAndOAuth: "type": "sse" selects the legacy transport, a
// bare url leaves the choice to the client, and the oauth object is read
// whole, with ${VAR} expansion in its strings.
func TestLoadConfigSSEAndOAuth(t *testing.T) {
	got, err := parseConfig("remote.json", []byte(`{"mcpServers": {
		"legacy": {"type": "sse", "url": "http://127.0.0.1:3001/sse"},
		"bare": {"url": "https://mcp.example.com/mcp"},
		"saas": {"type": "http", "url": "https://mcp.example.com/mcp", "oauth": {
			"clientId": "agentapp-cli", "clientSecret": "${SECRET}",
			"clientMetadataUrl": "https://agentapp.example/client.json",
			"scopes": ["tickets:read", "tickets:write"], "callbackPort": 8765}},
		"spaced": {"url": "https://h/mcp", "oauth": {"scopes": "read write"}}
	}}`), &LoadOptions{LookupEnv: lookupIn(map[string]string{"SECRET": "shh"})})
	if err != nil {
		t.Fatal(err)
	}
	want := []Server{
		{Name: "bare", URL: "https://mcp.example.com/mcp"},
		{Name: "legacy", URL: "http://127.0.0.1:3001/sse", Transport: TransportSSE},
		{Name: "saas", URL: "https://mcp.example.com/mcp", Transport: TransportHTTP, OAuth: &OAuth{
			ClientID: "agentapp-cli", ClientSecret: "shh", ClientMetadataURL: "https://agentapp.example/client.json",
			Scopes: []string{"tickets:read", "tickets:write"}, CallbackPort: 8765}},
		{Name: "spaced", URL: "https://h/mcp", OAuth: &OAuth{Scopes: []string{"read", "write"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}
