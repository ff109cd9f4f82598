package skills_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/mcpclient/skills"
	"github.com/agentapp/agentapp/mcpconfig"
	spec "github.com/agentapp/agentapp/skills"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeSkill is one skill the test server serves: its files by path
// relative to the root, and what the entry says of them (tamper changes
// the bytes served after the entry was made).
type fakeSkill struct {
	dir   string // skill path, e.g. acme/refunds
	files map[string]string
}

func skillMD(name, desc, body string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n%s", name, desc, body)
}

// skillServer serves skills over the extension and counts every
// resources/read.
type skillServer struct {
	mu      sync.Mutex
	reads   []string
	served  map[string]string // uri -> bytes served
	entries []map[string]any
	pageLen int // entries per skills/list page (0: all)
	lists   int
}

func newSkillServer(sk ...fakeSkill) *skillServer {
	s := &skillServer{served: map[string]string{}}
	for _, k := range sk {
		var res []any
		var name, desc string
		for p, data := range k.files {
			uri := "skill://" + k.dir + "/" + p
			s.served[uri] = data
			res = append(res, map[string]any{"uri": uri, "digest": spec.Digest([]byte(data)), "size": len(data)})
			if p == spec.FileName {
				fm, _, err := spec.Parse([]byte(data))
				if err != nil {
					panic(err)
				}
				name, desc = fm["name"].(string), fm["description"].(string)
			}
		}
		s.entries = append(s.entries, map[string]any{
			"uri":         "skill://" + k.dir + "/" + spec.FileName,
			"frontmatter": map[string]any{"name": name, "description": desc},
			"resources":   res,
		})
	}
	return s
}

func (s *skillServer) readsSoFar() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reads...)
}

type listParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
	URI    string `json:"uri,omitempty"`
}

type anyResult struct {
	mcp.ResultBase
	V map[string]any
}

func (r *anyResult) MarshalJSON() ([]byte, error) { return jsonMarshal(r.V) }

func (s *skillServer) mcpServer(declare bool) *mcp.Server {
	caps := &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}}
	if declare {
		caps.Extensions = map[string]any{spec.ExtensionID: map[string]any{}}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "skills-test", Version: "1"}, &mcp.ServerOptions{Capabilities: caps})
	_ = mcp.AddReceivingCustomMethod(srv, spec.MethodList, func(ctx context.Context, _ *mcp.ServerSession, p *listParams) (*anyResult, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.lists++
		start := 0
		if p != nil && p.Cursor != "" {
			fmt.Sscan(p.Cursor, &start)
		}
		end := len(s.entries)
		if s.pageLen > 0 && start+s.pageLen < end {
			end = start + s.pageLen
		}
		v := map[string]any{"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "skills": s.entries[start:end]}
		if end < len(s.entries) {
			v["nextCursor"] = fmt.Sprint(end)
		}
		return &anyResult{V: v}, nil
	})
	_ = mcp.AddReceivingCustomMethod(srv, spec.MethodGet, func(ctx context.Context, _ *mcp.ServerSession, p *listParams) (*anyResult, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, e := range s.entries {
			if e["uri"] == p.URI {
				return &anyResult{V: map[string]any{"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "skill": e}}, nil
			}
		}
		return nil, fmt.Errorf("no skill at %s", p.URI)
	})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "skill://{+path}", Name: "skills"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		s.mu.Lock()
		s.reads = append(s.reads, uri)
		data, ok := s.served[uri]
		s.mu.Unlock()
		if !ok {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: data}}}, nil
	})
	return srv
}

func connect(t *testing.T, s *skillServer, declare bool) *mcpclient.Bridge {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := mcpclient.ConnectInMemory(ctx, "docs", s.mcpServer(declare))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func refunds() fakeSkill {
	return fakeSkill{dir: "acme/refunds", files: map[string]string{
		"SKILL.md":             skillMD("refunds", "Handle a refund request", "Read references/POLICY.md first.\n"),
		"references/POLICY.md": "Refund within 30 days.\n",
	}}
}

func TestListReadsNoFile(t *testing.T) {
	s := newSkillServer(refunds(), fakeSkill{dir: "git-flow", files: map[string]string{"SKILL.md": skillMD("git-flow", "Branch and commit", "Body\n")}})
	s.pageLen = 1 // two pages
	c := skills.New(connect(t, s, true), nil)
	l, err := c.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Skills) != 2 || len(l.Warnings) != 0 {
		t.Fatalf("got %d skills, warnings %q; want 2 and none", len(l.Skills), l.Warnings)
	}
	if l.Skills[0].Name != "refunds" || l.Skills[0].Server != "docs" || l.Skills[0].Description() != "Handle a refund request" {
		t.Errorf("first skill = %+v", l.Skills[0])
	}
	if r := s.readsSoFar(); len(r) != 0 {
		t.Errorf("listing read %q; it must read no skill file", r)
	}
}

func TestLoadVerifiesAndReadsListedFiles(t *testing.T) {
	s := newSkillServer(refunds())
	c := skills.New(connect(t, s, true), nil)
	ctx := context.Background()
	sk, err := c.Find(ctx, "refunds")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadFile(ctx, sk, "references/POLICY.md"); err == nil || !strings.Contains(err.Error(), "not loaded") {
		t.Fatalf("a read before the load: %v; want refused", err)
	}
	ld, err := c.Load(ctx, sk)
	if err != nil {
		t.Fatal(err)
	}
	if string(ld.Body) != "Read references/POLICY.md first.\n" || ld.Unverified {
		t.Errorf("body %q unverified %v", ld.Body, ld.Unverified)
	}
	got, err := c.ReadFile(ctx, sk, "references/../references/POLICY.md")
	if err != nil || string(got) != "Refund within 30 days.\n" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	for _, bad := range []string{"../other/SKILL.md", "/etc/passwd", "skill://x/SKILL.md", ""} {
		if _, err := c.ReadFile(ctx, sk, bad); err == nil {
			t.Errorf("ReadFile(%q) succeeded", bad)
		}
	}
	// A file the entry does not list is a verification failure, and no
	// read goes out for it.
	s.mu.Lock()
	s.served["skill://acme/refunds/extra.md"] = "new"
	s.mu.Unlock()
	var ve *skills.VerifyError
	if _, err := c.ReadFile(ctx, sk, "extra.md"); !errors.As(err, &ve) {
		t.Errorf("unlisted file: %v; want a VerifyError", err)
	}
	// Loading again comes from the cache (digest unchanged).
	n := len(s.readsSoFar())
	if _, err := c.Load(ctx, sk); err != nil {
		t.Fatal(err)
	}
	if r := s.readsSoFar(); len(r) != n || n != 2 {
		t.Errorf("reads %q; want SKILL.md and POLICY.md once each", r)
	}
}

func TestTamperedContentIsRefused(t *testing.T) {
	says := map[string]string{"digest": "digest", "size": "bytes read", "frontmatter": "front matter differs"}
	for name, tamper := range map[string]func(string) string{
		"digest":      func(s string) string { return strings.Replace(s, "Read", "Rm -rf", 1)[:len(s)] },
		"size":        func(s string) string { return s + "extra\n" },
		"frontmatter": nil,
	} {
		t.Run(name, func(t *testing.T) {
			s := newSkillServer(refunds())
			uri := "skill://acme/refunds/SKILL.md"
			if tamper != nil {
				s.served[uri] = tamper(s.served[uri])
			} else {
				// The file and the entry's digest agree, the front matter
				// does not.
				evil := skillMD("refunds", "Exfiltrate credentials", "Read references/POLICY.md first.\n")
				s.served[uri] = evil
				res := s.entries[0]["resources"].([]any)
				for _, r := range res {
					if m := r.(map[string]any); m["uri"] == uri {
						m["digest"], m["size"] = spec.Digest([]byte(evil)), len(evil)
					}
				}
			}
			c := skills.New(connect(t, s, true), nil)
			ctx := context.Background()
			sk, err := c.Find(ctx, "refunds")
			if err != nil {
				t.Fatal(err)
			}
			ld, err := c.Load(ctx, sk)
			var ve *skills.VerifyError
			if !errors.As(err, &ve) || ld != nil {
				t.Fatalf("Load = %v, %v; want a VerifyError and nothing", ld, err)
			}
			if !strings.Contains(err.Error(), "none of it was used") || !strings.Contains(err.Error(), says[name]) {
				t.Errorf("message %q", err)
			}
			if _, err := c.ReadFile(ctx, sk, "references/POLICY.md"); err == nil {
				t.Error("a supporting file was read after the load failed")
			}
			if r := s.readsSoFar(); len(r) != 1 {
				t.Errorf("reads %q; want SKILL.md only", r)
			}
		})
	}
}

func TestInvalidEntriesLeftOutAndNamesDisambiguated(t *testing.T) {
	a := fakeSkill{dir: "acme/billing/refunds", files: map[string]string{"SKILL.md": skillMD("refunds", "Billing refunds", "b\n")}}
	b := fakeSkill{dir: "acme/support/refunds", files: map[string]string{"SKILL.md": skillMD("refunds", "Support refunds", "s\n")}}
	s := newSkillServer(a, b)
	s.entries = append(s.entries,
		map[string]any{"uri": "skill://bad/SKILL.md", "frontmatter": map[string]any{"name": "other", "description": "x"}, "resources": []any{}},
		map[string]any{"uri": "skill://nores/SKILL.md", "frontmatter": map[string]any{"name": "nores", "description": "x"}},
		map[string]any{"uri": "skill://num/SKILL.md", "frontmatter": map[string]any{"name": "num", "description": "x"}, "resources": 42},
	)
	c := skills.New(connect(t, s, true), nil)
	l, err := c.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range l.Skills {
		names = append(names, k.Name)
	}
	if strings.Join(names, ",") != "acme/billing/refunds,acme/support/refunds" {
		t.Errorf("names %q; want both refunds told apart by path", names)
	}
	if len(l.Warnings) != 3 {
		t.Fatalf("warnings %q; want 3", l.Warnings)
	}
	for i, want := range []string{`skill "other"`, `skill "nores"`, "num"} {
		if !strings.Contains(l.Warnings[i], "docs") || !strings.Contains(l.Warnings[i], want) {
			t.Errorf("warning %q does not name the server and %s", l.Warnings[i], want)
		}
	}
	if _, err := c.Find(context.Background(), "refunds"); err == nil || !strings.Contains(err.Error(), "acme/support/refunds") {
		t.Errorf("Find of a shared name: %v; want the choices", err)
	}
}

func TestListIsCapped(t *testing.T) {
	var many []fakeSkill
	for i := 0; i < skills.MaxEntries+5; i++ {
		n := fmt.Sprintf("s%d", i)
		many = append(many, fakeSkill{dir: n, files: map[string]string{"SKILL.md": skillMD(n, "d", "")}})
	}
	s := newSkillServer(many...)
	s.pageLen = 100
	l, err := skills.New(connect(t, s, true), nil).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Skills) != skills.MaxEntries || len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "left out") {
		t.Fatalf("%d skills, warnings %q", len(l.Skills), l.Warnings)
	}
}

func TestGetByURIAndUndeclared(t *testing.T) {
	s := newSkillServer(refunds())
	s.pageLen = 0
	full := s.entries
	s.entries = full[:0:0] // a listing that is empty...
	c := skills.New(connect(t, s, true), nil)
	if _, err := c.List(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.entries = full // ...but skills/get knows the skill
	s.mu.Unlock()
	sk, err := c.Find(context.Background(), "skill://acme/refunds/SKILL.md")
	if err != nil || sk.Name != "refunds" {
		t.Fatalf("Find by URI: %v, %v", sk, err)
	}
	if _, err := c.Load(context.Background(), sk); err != nil {
		t.Fatal(err)
	}
	u := skills.New(connect(t, newSkillServer(refunds()), false), nil)
	if u.Declared() {
		t.Fatal("declared without the capability")
	}
	if _, err := u.List(context.Background()); !errors.Is(err, skills.ErrNotDeclared) {
		t.Errorf("List on a server without the extension: %v", err)
	}
}

// Over streamable HTTP the client speaks 2026-07-28 (server/discover) with
// a server that does, and learns the extension from it.
func TestHTTPNewProtocol(t *testing.T) {
	s := newSkillServer(refunds())
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcpServer(true) }, &mcp.StreamableHTTPOptions{Stateless: true})
	ts := httptest.NewServer(h)
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := mcpclient.Connect(ctx, mcpconfig.Server{Name: "web", URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c := skills.New(b, nil)
	sk, err := c.Find(ctx, "refunds")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load(ctx, sk); err != nil {
		t.Fatal(err)
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
