package toolsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentapp/agentapp/agent"
)

func TestSplitAndStem(t *testing.T) {
	for in, want := range map[string]string{
		"read_text_file": "read text file", "get-env": "get env", "readFile": "read File",
		"github__create_issue": "github  create issue", "HTTPServer": "HTTPServer", "v2Tool": "v2 Tool",
	} {
		if got := splitName(in); got != want {
			t.Errorf("splitName(%q) = %q, want %q", in, got, want)
		}
	}
	for _, group := range [][]string{{"file", "files", "filed"}, {"create", "created", "creating", "creates"}, {"search", "searches", "searching", "searched"}, {"run", "running"}, {"directory", "directories"},
		{"create", "creation"}, {"locate", "location", "locations"}, {"relation", "related", "relations"}, {"modify", "modified", "modifies"}} {
		for _, w := range group[1:] {
			if stem(w) != stem(group[0]) {
				t.Errorf("stem(%q) = %q, stem(%q) = %q; want equal", w, stem(w), group[0], stem(group[0]))
			}
		}
	}
}

func TestEntryOf(t *testing.T) {
	e := EntryOf(&agent.Tool{Name: "x", Origin: "srv", InputSchema: json.RawMessage(`{"type":"object","properties":{"b":{},"a":{}}}`)})
	if e.Server != "srv" || strings.Join(e.Params, ",") != "a,b" {
		t.Errorf("EntryOf = %+v", e)
	}
	if e := EntryOf(&agent.Tool{Name: "y", InputSchema: json.RawMessage(`not json`)}); len(e.Params) != 0 {
		t.Errorf("params from an invalid schema: %v", e.Params)
	}
}

func smallIndex(t testing.TB) *Index {
	ix, err := NewIndex([]Entry{
		{Server: "fs", Name: "read_file", Description: "Read a file from disk."},
		{Server: "gh", Name: "read_file", Description: "Read a file from a repository."},
		{Server: "fs", Name: "write_file", Description: "Write a file.", Params: []string{"path", "content"}},
		{Server: "chat", Name: "send", Title: "Send a message", Description: "发送一条消息到频道。"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestSearchExactAndAmbiguous(t *testing.T) {
	ix := smallIndex(t)
	hits := ix.Search("read_file", 5)
	if len(hits) < 2 || !hits[0].Exact || !hits[1].Exact || hits[0].Server != "fs" || hits[1].Server != "gh" {
		t.Errorf("a name on two servers: %+v", hits)
	}
	for _, q := range []string{"gh__read_file", "gh:read_file", "GH/READ_FILE", "gh.read_file"} {
		if hits := ix.Search(q, 5); len(hits) == 0 || hits[0].Server != "gh" || !hits[0].Exact || (len(hits) > 1 && hits[1].Exact) {
			t.Errorf("%q: %+v", q, hits)
		}
	}
	// A name inside a sentence outranks word overlap.
	if hits := ix.Search("please call write_file to read the file", 5); hits[0].Name != "write_file" {
		t.Errorf("name in a sentence: %+v", hits[0])
	}
	// Chinese against a Chinese description, and through the glossary.
	if hits := ix.Search("发消息", 5); len(hits) == 0 || hits[0].Name != "send" {
		t.Errorf("发消息: %+v", hits)
	}
	if hits := ix.Search("写入文件", 5); len(hits) == 0 || hits[0].Name != "write_file" {
		t.Errorf("写入文件: %+v", hits)
	}
	// Parameter names count.
	if hits := ix.Search("content", 5); len(hits) == 0 || hits[0].Name != "write_file" {
		t.Errorf("by parameter: %+v", hits)
	}
}

func TestSearchHostile(t *testing.T) {
	ix := smallIndex(t)
	for _, q := range []string{"", "   ", "\x00\x01", "。？！", "`'\"", "the of a"} {
		if hits := ix.Search(q, 5); len(hits) != 0 {
			t.Errorf("Search(%q) = %+v, want nothing", q, hits)
		}
	}
	if hits := ix.Search("read", 0); hits != nil {
		t.Error("n = 0")
	}
	// Invalid UTF-8, control characters and a huge query neither panic
	// nor lose the words they carry.
	for _, q := range []string{"\xffread\xfe file\x1b[0m", strings.Repeat("字", 5000) + " read file", "read file " + strings.Repeat("x ", 100000)} {
		hits := ix.Search(q, 5)
		if len(q) < MaxQueryBytes*2 && (len(hits) == 0 || hits[0].Name != "read_file") {
			t.Errorf("Search(%.40q…) = %+v", q, hits)
		}
	}
	var empty Index
	if hits := empty.Search("x", 5); hits != nil {
		t.Error("the zero Index must find nothing")
	}
}

func TestIndexCapAnd10kTools(t *testing.T) {
	if _, err := NewIndex(make([]Entry, MaxEntries+1)); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("over the cap: %v", err)
	}
	entries := make([]Entry, 10_000)
	for i := range entries {
		entries[i] = Entry{Server: fmt.Sprintf("s%d", i/100), Name: fmt.Sprintf("tool_%d", i), Description: fmt.Sprintf("Does task number %d with widgets.", i)}
	}
	entries[7777].Description = "Uploads a photo to the gallery."
	ix, err := NewIndex(entries)
	if err != nil {
		t.Fatal(err)
	}
	if hits := ix.Search("s77__tool_7777", 3); len(hits) == 0 || hits[0].Name != "tool_7777" {
		t.Errorf("exact among 10,000: %+v", hits)
	}
	if hits := ix.Search("upload a photo", 3); len(hits) == 0 || hits[0].Name != "tool_7777" {
		t.Errorf("ranked among 10,000: %+v", hits)
	}
	if hits := ix.Search("widgets", 5); len(hits) != 5 {
		t.Errorf("%d hits, want the 5 asked for", len(hits))
	}
}

func TestSearchTool(t *testing.T) {
	ix := smallIndex(t)
	var got [][]Entry
	tool := NewSearchTool(&ToolOptions{MaxResults: 2, Index: func() *Index { return ix }, OnLoad: func(_ context.Context, f []Entry) { got = append(got, f) }})
	run := func(args string) (string, error) {
		if err := tool.CheckArgs(json.RawMessage(args)); err != nil {
			return "", err
		}
		out, err := tool.Execute(context.Background(), json.RawMessage(args))
		s, _ := out.(string)
		return s, err
	}
	if _, err := run(`{"query":""}`); err == nil {
		t.Error("an empty query passed the schema")
	}
	if _, err := run(`{"query":"  "}`); err == nil || !strings.Contains(err.Error(), "query is empty") {
		t.Errorf("a blank query: %v", err)
	}
	out, err := run(`{"query":"quantum chromodynamics"}`)
	if err != nil || !strings.HasPrefix(out, "No tool matches") || len(got) != 0 {
		t.Errorf("no match: %q %v, loaded %v", out, err, got)
	}
	out, err = run(`{"query":"write_file"}`)
	if err != nil || !strings.Contains(out, "- write_file (fs): Write a file.\n") || len(got) != 1 || got[0][0].Name != "write_file" || len(got[0]) != 1 {
		t.Errorf("found: %q %v, loaded %v", out, err, got)
	}
	none := NewSearchTool(nil)
	if out, err := none.Execute(context.Background(), json.RawMessage(`{"query":"x"}`)); err != nil || !strings.Contains(out.(string), "no deferred tools") {
		t.Errorf("without an index: %v %v", out, err)
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine("First sentence. Second one.\nMore"); got != "First sentence." {
		t.Errorf("oneLine = %q", got)
	}
	if got := oneLine("bad\x1b[2J\xff" + strings.Repeat("x", 500)); strings.ContainsAny(got, "\x1b") || !utf8.ValidString(got) || utf8.RuneCountInString(got) > maxSummaryRunes {
		t.Errorf("oneLine of hostile text = %q", got)
	}
}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		mode                  Mode
		tokens, count, window int
		want                  bool
		reason                string
	}{
		{ModeAuto, 5000, 10, 128_000, false, "fit"},
		{ModeAuto, 13_000, 10, 128_000, true, "10.2% of the 128000-token window"},
		{ModeAuto, 5000, 41, 128_000, true, "41 MCP tools, more than 40"},
		{ModeAuto, 0, 0, 1000, false, "no MCP tools"},
		{ModeOn, 10, 1, 128_000, true, "on"},
		{ModeOn, 0, 0, 128_000, false, "no MCP tools"},
		{ModeOff, 1 << 30, 10_000, 1000, false, "off"},
	} {
		d := Decide(tc.mode, tc.tokens, tc.count, tc.window, nil)
		if d.Defer != tc.want || !strings.Contains(d.Reason, tc.reason) {
			t.Errorf("Decide(%s, %d, %d, %d) = %+v, want %v with %q", tc.mode, tc.tokens, tc.count, tc.window, d, tc.want, tc.reason)
		}
	}
	if d := Decide(ModeAuto, 3000, 10, 10_000, &DeferOptions{Share: 0.5, Count: 5}); !d.Defer || !strings.Contains(d.Reason, "more than 5") {
		t.Errorf("options: %+v", d)
	}
	for in, want := range map[string]Mode{"": ModeAuto, "AUTO": ModeAuto, " on ": ModeOn, "off": ModeOff} {
		if m, err := ParseMode(in); err != nil || m != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, m, err)
		}
	}
	if _, err := ParseMode("sometimes"); err == nil || !strings.Contains(err.Error(), "auto, on or off") {
		t.Errorf("ParseMode(sometimes): %v", err)
	}
}

func TestCutText(t *testing.T) {
	short := strings.Repeat("x", MaxTextBytes)
	if got, w := CutText("s", "d", short); got != short || w != "" {
		t.Error("text at the limit was cut")
	}
	long := strings.Repeat("中文说明。", 400) // 6000 bytes
	got, w := CutText("github", "the description of tool x", long)
	if len(got) > MaxTextBytes || !utf8.ValidString(got) || !strings.Contains(got, "[cut at 2048 of 6000 bytes]") {
		t.Errorf("cut: %d bytes, valid %v, %q", len(got), utf8.ValidString(got), got[max(0, len(got)-60):])
	}
	if !strings.Contains(w, "server github") || !strings.Contains(w, "6000 bytes") {
		t.Errorf("warning %q does not name the server and size", w)
	}
	if got, _ := CutText("s", "d", strings.Repeat("\xff", 5000)); len(got) > MaxTextBytes || !utf8.ValidString(got) {
		t.Errorf("invalid UTF-8: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	tools := []*agent.Tool{{Name: "a", Origin: "srv", Description: long}, {Name: "b", Description: "short"}, nil}
	ws := CutTools(tools)
	if len(ws) != 1 || len(tools[0].Description) > MaxTextBytes || tools[1].Description != "short" || !strings.Contains(ws[0], "tool a") {
		t.Errorf("CutTools: %v", ws)
	}
}

// TestSearchSecondSetCauses checks the general fixes made for the second
// query set's misses on tools of their own: a noun in -tion meets its verb,
// "where is" asks to find, and latitude and longitude ask for geocoding.
func TestSearchSecondSetCauses(t *testing.T) {
	ix, err := NewIndex([]Entry{
		{Server: "fs", Name: "stat", Description: "Returns the creation time and size of a path."},
		{Server: "fs", Name: "make_dir", Description: "Create a directory."},
		{Server: "fs", Name: "glob", Description: "Find paths that match a pattern."},
		{Server: "fs", Name: "list", Description: "List the entries of a path."},
		{Server: "geo", Name: "to_coordinates", Description: "Geocode an address."},
		{Server: "geo", Name: "weather", Description: "Weather at an address."},
	})
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"when was this path created":              "stat",
		"where is the package.json":               "glob",
		"latitude and longitude of 10 Downing St": "to_coordinates",
		"package.json 在哪":                         "glob",
	} {
		if hits := ix.Search(q, 1); len(hits) == 0 || hits[0].Name != want {
			t.Errorf("Search(%q) = %v, want %s first", q, hits, want)
		}
	}
}

func TestLookup(t *testing.T) {
	ix, err := NewIndex([]Entry{{Server: "fs", Name: "read_file"}, {Server: "gh", Name: "get_issue"}, {Server: "a", Name: "dup"}, {Server: "b", Name: "dup"}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"read_file": "fs:read_file", "fs__read_file": "fs:read_file", "FS:Read_File": "fs:read_file", "gh/get_issue": "gh:get_issue",
		"gh.get_issue": "gh:get_issue", "b__dup": "b:dup", "dup": "", "fs__get_issue": "", "read": "", "": "", strings.Repeat("x", 2000): "",
	} {
		e, ok := ix.Lookup(name)
		got := ""
		if ok {
			got = e.Server + ":" + e.Name
		}
		if got != want {
			t.Errorf("Lookup(%.20q) = %q, want %q", name, got, want)
		}
	}
}

// TestSearchDeprecatedLast: a tool its server calls deprecated ranks after
// the one that replaces it, and its exact name still finds it first.
func TestSearchDeprecatedLast(t *testing.T) {
	ix, err := NewIndex([]Entry{
		{Server: "fs", Name: "read_file", Description: "Read a file as text. DEPRECATED: use read_text_file instead.", Params: []string{"path"}},
		{Server: "fs", Name: "read_text_file", Description: "Read the contents of a file from the file system as text, with its encoding.", Params: []string{"path"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if hits := ix.Search("read a file", 2); len(hits) != 2 || hits[0].Name != "read_text_file" {
		t.Errorf("read a file: %v, want read_text_file first", hits)
	}
	if hits := ix.Search("read_file", 2); len(hits) == 0 || hits[0].Name != "read_file" || !hits[0].Exact {
		t.Errorf("read_file by name: %v, want it first", hits)
	}
}
