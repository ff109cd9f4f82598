package mcpserver_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agentapp/agentapp/mcpserver"
	"github.com/agentapp/agentapp/skills"
)

// skillTree is a folder of skills with what the extension must serve: a
// skill with a subdirectory two levels deep and a binary file, a skill
// under a prefix, a nested skill, and one that breaks the format.
func skillTree(t *testing.T) *skills.Folder {
	t.Helper()
	md := func(name, desc, body string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: " + desc + "\nlicense: MIT\n---\n" + body)}
	}
	fsys := fstest.MapFS{
		"refunds/SKILL.md":                  md("refunds", "Handle a refund request", "# Refunds\nSee [the policy](references/policy.md).\n"),
		"refunds/references/policy.md":      {Data: []byte("# Policy\nUp to 500.\n")},
		"refunds/references/forms/claim.md": {Data: []byte("# Claim form\n")},
		"refunds/assets/stamp.bin":          {Data: []byte{0xff, 0xfe, 0x00, 0x81}},
		"handoff/SKILL.md":                  md("handoff", "Hand a conversation to a person", "# Hand-off\n"),
		"handoff/checks/SKILL.md":           md("checks", "Checks before a hand-off", "# Checks\n"),
		"acme/billing/invoices/SKILL.md":    md("invoices", "Answer invoice questions", "# Invoices\n"),
		"broken/SKILL.md":                   md("other-name", "Misnamed", ""),
	}
	f, skipped, err := skills.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 1 {
		t.Fatalf("skipped %v, want the misnamed skill only", skipped)
	}
	return f
}

// rpcAnswer is a JSON-RPC response.
type rpcAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeAnswer(t *testing.T, raw []byte) rpcAnswer {
	t.Helper()
	var a rpcAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("not a JSON-RPC answer: %v\n%s", err, raw)
	}
	return a
}

// caller sends one request (method, params as JSON) and returns the answer.
type caller func(method, params string) rpcAnswer

func (c caller) result(t *testing.T, method, params string, v any) {
	t.Helper()
	a := c(method, params)
	if a.Error != nil {
		t.Fatalf("%s %s: error %d %s", method, params, a.Error.Code, a.Error.Message)
	}
	if err := json.Unmarshal(a.Result, v); err != nil {
		t.Fatalf("%s: %v\n%s", method, err, a.Result)
	}
}

func (c caller) wantError(t *testing.T, method, params string, code int, msg string) {
	t.Helper()
	a := c(method, params)
	if a.Error == nil {
		t.Fatalf("%s %s answered %s; want error %d", method, params, a.Result, code)
	}
	if a.Error.Code != code || !strings.Contains(a.Error.Message, msg) {
		t.Errorf("%s %s: error %d %q; want %d containing %q", method, params, a.Error.Code, a.Error.Message, code, msg)
	}
}

type listedResource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Description string `json:"description"`
	MIMEType    string `json:"mimeType"`
	Size        int64  `json:"size"`
}

// checkSkills holds a server publishing skillTree (page size 2) to the
// extension, through call.
func checkSkills(t *testing.T, f *skills.Folder, call caller, meta string) {
	t.Helper()
	withMeta := func(params string) string {
		if meta == "" {
			return params
		}
		if params == "{}" {
			return `{"_meta":` + meta + `}`
		}
		return strings.TrimSuffix(params, "}") + `,"_meta":` + meta + `}`
	}

	// skills/list, page by page.
	var got []skills.Entry
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("skills/list does not end")
		}
		params := "{}"
		if cursor != "" {
			params = `{"cursor":"` + cursor + `"}`
		}
		var page struct {
			ResultType string         `json:"resultType"`
			Skills     []skills.Entry `json:"skills"`
			NextCursor string         `json:"nextCursor"`
			TTLMs      *int           `json:"ttlMs"`
			CacheScope string         `json:"cacheScope"`
		}
		call.result(t, "skills/list", withMeta(params), &page)
		if page.ResultType != "complete" || page.TTLMs == nil || page.CacheScope != "public" {
			t.Errorf("skills/list page %d: resultType %q ttlMs %v cacheScope %q", pages, page.ResultType, page.TTLMs, page.CacheScope)
		}
		if len(page.Skills) > 2 {
			t.Errorf("skills/list page of %d entries; the page size is 2", len(page.Skills))
		}
		got = append(got, page.Skills...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	var uris []string
	for i := range got {
		if err := got[i].Check(); err != nil {
			t.Errorf("entry %s: %v", got[i].URI, err)
		}
		uris = append(uris, got[i].URI)
	}
	want := []string{"skill://acme/billing/invoices/SKILL.md", "skill://handoff/SKILL.md", "skill://handoff/checks/SKILL.md", "skill://refunds/SKILL.md"}
	if !slices.Equal(uris, want) {
		t.Errorf("skills/list listed %v, want %v", uris, want)
	}
	call.wantError(t, "skills/list", withMeta(`{"cursor":"not a cursor!"}`), -32602, "cursor")

	// skills/get.
	var one struct {
		ResultType string       `json:"resultType"`
		Skill      skills.Entry `json:"skill"`
		NextCursor *string      `json:"nextCursor"`
		TTLMs      *int         `json:"ttlMs"`
		CacheScope string       `json:"cacheScope"`
	}
	call.result(t, "skills/get", withMeta(`{"uri":"skill://refunds/SKILL.md"}`), &one)
	if one.ResultType != "complete" || one.Skill.URI != "skill://refunds/SKILL.md" || one.NextCursor != nil || one.TTLMs == nil || one.CacheScope == "" {
		t.Errorf("skills/get: %+v", one)
	}
	if one.Skill.Frontmatter["license"] != "MIT" || len(one.Skill.Resources.Files) != 4 {
		t.Errorf("skills/get: front matter %v, %d files; want the license and 4 files", one.Skill.Frontmatter, len(one.Skill.Resources.Files))
	}
	call.wantError(t, "skills/get", withMeta(`{"uri":"skill://nope/SKILL.md"}`), -32602, "no skill is served at")
	call.wantError(t, "skills/get", withMeta(`{"uri":"skill://refunds/references/policy.md"}`), -32602, "no skill is served at")
	call.wantError(t, "skills/get", withMeta(`{}`), -32602, "params.uri")

	// Every file, read and checked against its entry.
	entry, _ := f.Entry("skill://refunds/SKILL.md")
	for _, r := range entry.Resources.Files {
		var read struct {
			Contents []struct {
				URI      string `json:"uri"`
				MIMEType string `json:"mimeType"`
				Text     string `json:"text"`
				Blob     []byte `json:"blob"`
			} `json:"contents"`
			TTLMs      *int   `json:"ttlMs"`
			ResultType string `json:"resultType"`
		}
		call.result(t, "resources/read", withMeta(`{"uri":"`+r.URI+`"}`), &read)
		if len(read.Contents) != 1 || read.TTLMs == nil || (meta != "" && read.ResultType != "complete") {
			t.Fatalf("resources/read %s: %+v", r.URI, read)
		}
		c := read.Contents[0]
		data := []byte(c.Text)
		if strings.HasSuffix(r.URI, ".bin") {
			if c.Text != "" || c.Blob == nil {
				t.Errorf("%s: a file that is not UTF-8 must be a blob: %+v", r.URI, c)
			}
			data = c.Blob
		}
		if err := entry.VerifyFile(r.URI, data); err != nil {
			t.Errorf("resources/read: %v", err)
		}
		if strings.HasSuffix(r.URI, ".md") && c.MIMEType != "text/markdown" {
			t.Errorf("%s: mimeType %q", r.URI, c.MIMEType)
		}
	}
	call.wantError(t, "resources/read", withMeta(`{"uri":"skill://refunds/references/gone.md"}`), -32602, "")

	// resources/list: every file once, SKILL.md named from its front matter.
	listed := map[string]listedResource{}
	cursor = ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("resources/list does not end")
		}
		params := "{}"
		if cursor != "" {
			params = `{"cursor":"` + cursor + `"}`
		}
		var page struct {
			Resources  []listedResource `json:"resources"`
			NextCursor string           `json:"nextCursor"`
		}
		call.result(t, "resources/list", withMeta(params), &page)
		for _, r := range page.Resources {
			if _, dup := listed[r.URI]; dup {
				t.Errorf("resources/list lists %s twice", r.URI)
			}
			listed[r.URI] = r
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	for _, e := range f.Entries() {
		for _, r := range e.Resources.Files {
			l, ok := listed[r.URI]
			if !ok {
				t.Errorf("resources/list leaves out %s", r.URI)
				continue
			}
			if l.Size != r.Size {
				t.Errorf("%s: listed size %d, file %d", r.URI, l.Size, r.Size)
			}
		}
	}
	if l := listed["skill://refunds/SKILL.md"]; l.Name != "refunds" || l.Description != "Handle a refund request" || l.MIMEType != "text/markdown" {
		t.Errorf("resources/list shows SKILL.md as %+v", l)
	}

	// resources/directory/read.
	var dir struct {
		ResultType string           `json:"resultType"`
		Resources  []listedResource `json:"resources"`
		NextCursor string           `json:"nextCursor"`
	}
	call.result(t, "resources/directory/read", withMeta(`{"uri":"skill://refunds"}`), &dir)
	var children []string
	for _, r := range dir.Resources {
		children = append(children, r.URI+" "+r.MIMEType)
	}
	call.result(t, "resources/directory/read", withMeta(`{"uri":"skill://refunds","cursor":"`+dir.NextCursor+`"}`), &dir)
	for _, r := range dir.Resources {
		children = append(children, r.URI+" "+r.MIMEType)
	}
	wantChildren := []string{"skill://refunds/SKILL.md text/markdown", "skill://refunds/assets inode/directory", "skill://refunds/references inode/directory"}
	if !slices.Equal(children, wantChildren) || dir.ResultType != "complete" {
		t.Errorf("resources/directory/read skill://refunds: %v (%q), want %v", children, dir.ResultType, wantChildren)
	}
	call.result(t, "resources/directory/read", withMeta(`{"uri":"skill://refunds/references"}`), &dir)
	if len(dir.Resources) != 2 || dir.Resources[0].URI != "skill://refunds/references/forms" || dir.Resources[0].MIMEType != skills.DirectoryMIMEType || dir.Resources[1].Name != "policy.md" {
		t.Errorf("resources/directory/read skill://refunds/references: %+v", dir.Resources)
	}
	call.wantError(t, "resources/directory/read", withMeta(`{"uri":"skill://refunds/SKILL.md"}`), -32602, "is a file, not a directory")
	call.wantError(t, "resources/directory/read", withMeta(`{"uri":"skill://nowhere"}`), -32602, "not a directory resource")
	call.wantError(t, "resources/directory/read", withMeta(`{}`), -32602, "params.uri")
}

// skillsCapability is the extension's settings in a capabilities object,
// or nil.
func skillsCapability(t *testing.T, caps json.RawMessage) map[string]any {
	t.Helper()
	var c struct {
		Resources  *struct{}                 `json:"resources"`
		Extensions map[string]map[string]any `json:"extensions"`
	}
	if err := json.Unmarshal(caps, &c); err != nil {
		t.Fatal(err)
	}
	ext := c.Extensions[skills.ExtensionID]
	if ext != nil && c.Resources == nil {
		t.Errorf("the skills extension is declared without the resources capability: %s", caps)
	}
	return ext
}

// TestSkillsStdio: on every stdio transport (the direct path's included)
// the server declares the extension at initialize and answers its methods
// and the skill files' resources.
func TestSkillsStdio(t *testing.T) {
	f := skillTree(t)
	for _, tr := range rawTransports {
		t.Run(tr.name, func(t *testing.T) {
			r := newRawSessionOn(t, mcpserver.New(&mcpserver.Options{Skills: f, PageSize: 2}), tr.make)
			r.send(mcpserver.InitializeLine)
			var init struct {
				Capabilities json.RawMessage `json:"capabilities"`
			}
			if err := json.Unmarshal(decodeAnswer(t, r.receive()).Result, &init); err != nil {
				t.Fatal(err)
			}
			if ext := skillsCapability(t, init.Capabilities); ext == nil || ext["directoryRead"] != true {
				t.Fatalf("initialize declares %s; want the skills extension with directoryRead", init.Capabilities)
			}
			r.send(mcpserver.InitializedLine)
			id := 0
			call := func(method, params string) rpcAnswer {
				id++
				r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
				return decodeAnswer(t, r.receive())
			}
			checkSkills(t, f, call, "")
		})
	}
}

// TestSkillsOff: without skills (nil, or a folder that holds none) the
// server declares nothing and knows none of the methods.
func TestSkillsOff(t *testing.T) {
	empty, _, err := skills.Load(fstest.MapFS{"notes.txt": {Data: []byte("x")}})
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]*skills.Folder{"nil": nil, "empty": empty} {
		t.Run(name, func(t *testing.T) {
			r := newRawSessionOn(t, mcpserver.New(&mcpserver.Options{Skills: f}), rawTransports[2].make)
			r.send(mcpserver.InitializeLine)
			var init struct {
				Capabilities json.RawMessage `json:"capabilities"`
			}
			if err := json.Unmarshal(decodeAnswer(t, r.receive()).Result, &init); err != nil {
				t.Fatal(err)
			}
			if ext := skillsCapability(t, init.Capabilities); ext != nil {
				t.Errorf("initialize declares the skills extension without skills: %s", init.Capabilities)
			}
			r.send(mcpserver.InitializedLine)
			r.send(`{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{}}`)
			if a := decodeAnswer(t, r.receive()); a.Error == nil || a.Error.Code != -32601 {
				t.Errorf("skills/list without skills: %+v; want method not found", a)
			}
		})
	}
}

// TestSkillsWithDocuments: the skill files head resources/list and the
// documents follow, each listed once across the pages.
func TestSkillsWithDocuments(t *testing.T) {
	d := newDomain(t)
	f := skillTree(t)
	opts := d.options()
	opts.Skills, opts.PageSize = f, 3
	cs := connect(t, mcpserver.New(opts))
	var uris []string
	for r, err := range cs.Resources(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	files, docs := 0, 0
	for i, u := range uris {
		switch {
		case strings.HasPrefix(u, "skill://"):
			files++
			if docs > 0 {
				t.Errorf("skill file %s listed after a document (at %d)", u, i)
			}
		case strings.HasPrefix(u, mcpserver.DocURIPrefix):
			docs++
		}
	}
	sorted := slices.Clone(uris)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(uris) {
		t.Errorf("resources/list lists something twice: %v", uris)
	}
	if files != 7 || docs == 0 {
		t.Errorf("resources/list: %d skill files (want 7) and %d documents: %v", files, docs, uris)
	}
}

// httpCall posts one JSON-RPC request and returns its answer, from a JSON
// body or the first message of an event stream.
func httpCall(t *testing.T, url string, headers map[string]string, body string) ([]byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		return b, res.Header
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			return []byte(data), res.Header
		}
	}
	t.Fatalf("no message in the event stream of %s", body)
	return nil, nil
}

// TestSkillsHTTP: over streamable HTTP both generations see the extension
// and its methods: a 2025-11-25 session, and 2026-07-28 requests with no
// session (server/discover declares it).
func TestSkillsHTTP(t *testing.T) {
	f := skillTree(t)
	hs := httptest.NewServer(newHTTPHandler(t, mcpserver.New(&mcpserver.Options{Skills: f, PageSize: 2}), nil))
	t.Cleanup(hs.Close)
	url := hs.URL + mcpserver.HTTPPath

	t.Run("2025-11-25", func(t *testing.T) {
		raw, h := httpCall(t, url, nil, strings.Replace(mcpserver.InitializeLine, "2025-06-18", "2025-11-25", 1))
		var init struct {
			Capabilities json.RawMessage `json:"capabilities"`
		}
		if err := json.Unmarshal(decodeAnswer(t, raw).Result, &init); err != nil {
			t.Fatal(err)
		}
		if ext := skillsCapability(t, init.Capabilities); ext == nil || ext["directoryRead"] != true {
			t.Fatalf("initialize declares %s", init.Capabilities)
		}
		sh := map[string]string{"Mcp-Session-Id": h.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-11-25"}
		httpCall(t, url, sh, mcpserver.InitializedLine)
		id := 0
		checkSkills(t, f, func(method, params string) rpcAnswer {
			id++
			raw, _ := httpCall(t, url, sh, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
			return decodeAnswer(t, raw)
		}, "")
	})

	t.Run("2026-07-28", func(t *testing.T) {
		const meta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`
		id := 0
		call := func(method, params string) rpcAnswer {
			id++
			h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method}
			var p struct {
				URI string `json:"uri"`
			}
			if json.Unmarshal([]byte(params), &p) == nil && p.URI != "" && strings.HasPrefix(method, "resources/read") {
				h["Mcp-Name"] = p.URI
			}
			raw, _ := httpCall(t, url, h, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
			return decodeAnswer(t, raw)
		}
		var disc struct {
			Capabilities json.RawMessage `json:"capabilities"`
		}
		caller(call).result(t, "server/discover", `{"_meta":`+meta+`}`, &disc)
		if ext := skillsCapability(t, disc.Capabilities); ext == nil || ext["directoryRead"] != true {
			t.Fatalf("server/discover declares %s", disc.Capabilities)
		}
		checkSkills(t, f, call, meta)
	})
}
