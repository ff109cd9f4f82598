package mcpclient

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpconfig"
)

// peerBin returns the path of a third-party MCP server installed by
// .ci/install-peers. Without it the test skips, except in CI (CI=true),
// where a missing peer is a failure.
func peerBin(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", ".ci", "peers", "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		msg := "third-party MCP server " + name + " is not installed; run `bash .ci/install-peers` (needs node and npm)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

func connectPeer(t *testing.T, cfg mcpconfig.Server) *Bridge {
	t.Helper()
	b, err := Connect(context.Background(), cfg, WithGracePeriods(2*time.Second, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

func toolNames(b *Bridge) []string {
	var names []string
	for _, tl := range b.Tools() {
		names = append(names, tl.Name)
	}
	return names
}

func wantTools(t *testing.T, b *Bridge, want ...string) {
	t.Helper()
	names := toolNames(b)
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("server %s lacks tool %s; it has %v", b.Name(), w, names)
		}
	}
	for _, tl := range b.Tools() {
		if tl.Origin != b.Name() || !tl.Validate || len(tl.InputSchema) == 0 || tl.Description == "" {
			t.Errorf("tool %s: origin %q validate %v schema %d bytes description %q", tl.Name, tl.Origin, tl.Validate, len(tl.InputSchema), tl.Description)
		}
	}
}

func TestPeerMemory(t *testing.T) {
	bin := peerBin(t, "mcp-server-memory")
	b := connectPeer(t, mcpconfig.Server{
		Name: "memory", Command: bin,
		Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")},
	})
	wantTools(t, b, "create_entities", "create_relations", "add_observations", "delete_entities",
		"delete_observations", "delete_relations", "read_graph", "search_nodes", "open_nodes")
	if n := len(b.Tools()); n != 9 {
		t.Errorf("memory server: %d tools, want 9: %v", n, toolNames(b))
	}
	got, err := adExec(t, adTool(t, b, "create_entities"),
		`{"entities":[{"name":"Ann","entityType":"person","observations":["likes tea"]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	// The server answers with structuredContent and the same JSON as text:
	// the model sees the server's own bytes.
	if !strings.HasPrefix(got, "{") || !strings.Contains(got, `"name":"Ann"`) || !strings.Contains(got, `"likes tea"`) {
		t.Errorf("create_entities: the model sees %s", got)
	}
	got, err = adExec(t, adTool(t, b, "search_nodes"), `{"query":"tea"}`)
	if err != nil || !strings.Contains(got, "Ann") {
		t.Errorf("search_nodes: %s, %v", got, err)
	}
}

func TestPeerFilesystem(t *testing.T) {
	bin := peerBin(t, "mcp-server-filesystem")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("hello from the sandbox"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := connectPeer(t, mcpconfig.Server{Name: "fs", Command: bin, Args: []string{dir}})
	wantTools(t, b, "read_text_file", "write_file", "list_directory", "list_allowed_directories", "directory_tree")
	if n := len(b.Tools()); n < 12 {
		t.Errorf("filesystem server: only %d tools: %v", n, toolNames(b))
	}
	got, err := adExec(t, adTool(t, b, "read_text_file"), `{"path":"`+filepath.Join(dir, "note.txt")+`"}`)
	if err != nil || !strings.Contains(got, "hello from the sandbox") {
		t.Errorf("read inside the allowed directory: %q, %v", got, err)
	}
	outside := filepath.Join(filepath.Dir(dir), "elsewhere.txt")
	_, err = adExec(t, adTool(t, b, "read_text_file"), `{"path":"`+outside+`"}`)
	wantCallErr(t, err, KindToolError, "")
	if msg := err.Error(); !strings.HasPrefix(msg, "tool read_text_file returned an error: ") ||
		!strings.Contains(strings.ToLower(msg), "access denied") || !strings.HasSuffix(msg, "; fix the arguments and retry") {
		t.Errorf("read outside the allowed directory: the model sees %q", msg)
	}
}

func TestPeerEverything(t *testing.T) {
	bin := peerBin(t, "mcp-server-everything")
	b := connectPeer(t, mcpconfig.Server{Name: "everything", Command: bin, Args: []string{"stdio"}})
	wantTools(t, b, "echo", "get-sum", "get-tiny-image", "get-structured-content", "get-resource-links", "gzip-file-as-resource")
	got, err := adExec(t, adTool(t, b, "get-tiny-image"), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`\[image: image/png, [1-9][0-9]* bytes\]`).MatchString(got) {
		t.Errorf("get-tiny-image: the model sees %q; want the image described", got)
	}
	got, err = adExec(t, adTool(t, b, "get-structured-content"), `{"location":"Chicago"}`)
	if err != nil || !strings.HasPrefix(got, "{") || !strings.Contains(got, `"temperature"`) {
		t.Errorf("get-structured-content: %q, %v", got, err)
	}
	got, err = adExec(t, adTool(t, b, "get-sum"), `{"a":2,"b":3}`)
	if err != nil || !strings.Contains(got, "5") {
		t.Errorf("get-sum: %q, %v", got, err)
	}
	got, err = adExec(t, adTool(t, b, "get-resource-links"), `{"count":2}`)
	if err != nil || strings.Count(got, "[resource link: ") != 2 {
		t.Errorf("get-resource-links: %q, %v", got, err)
	}
	// Never call gzip-file-as-resource without a data: URI: by default it
	// downloads from the internet.
}
