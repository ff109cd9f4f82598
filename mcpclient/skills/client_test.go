package skills_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/mcpclient/skills"
	"github.com/agentapp/agentapp/mcpclient/skills/skilltest"
	"github.com/agentapp/agentapp/mcpconfig"
	spec "github.com/agentapp/agentapp/skills"
)

func connect(t *testing.T, s *skilltest.Server, declare bool) *mcpclient.Bridge {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := mcpclient.ConnectInMemory(ctx, "docs", s.MCP(declare))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func refunds() skilltest.Skill {
	return skilltest.Skill{Dir: "acme/refunds", Files: map[string]string{
		"SKILL.md":             skilltest.MD("refunds", "Handle a refund request", "Read references/POLICY.md first.\n"),
		"references/POLICY.md": "Refund within 30 days.\n",
	}}
}

func TestListReadsNoFile(t *testing.T) {
	s := skilltest.New(refunds(), skilltest.Skill{Dir: "git-flow", Files: map[string]string{"SKILL.md": skilltest.MD("git-flow", "Branch and commit", "Body\n")}})
	s.PageLen = 1 // two pages
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
	if r := s.ReadsSoFar(); len(r) != 0 {
		t.Errorf("listing read %q; it must read no skill file", r)
	}
}

func TestLoadVerifiesAndReadsListedFiles(t *testing.T) {
	s := skilltest.New(refunds())
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
	s.Mu.Lock()
	s.Served["skill://acme/refunds/extra.md"] = "new"
	s.Mu.Unlock()
	var ve *skills.VerifyError
	if _, err := c.ReadFile(ctx, sk, "extra.md"); !errors.As(err, &ve) {
		t.Errorf("unlisted file: %v; want a VerifyError", err)
	}
	// Loading again comes from the cache (digest unchanged).
	n := len(s.ReadsSoFar())
	if _, err := c.Load(ctx, sk); err != nil {
		t.Fatal(err)
	}
	if r := s.ReadsSoFar(); len(r) != n || n != 2 {
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
			s := skilltest.New(refunds())
			uri := "skill://acme/refunds/SKILL.md"
			if tamper != nil {
				s.Served[uri] = tamper(s.Served[uri])
			} else {
				// The file and the entry's digest agree, the front matter
				// does not.
				evil := skilltest.MD("refunds", "Exfiltrate credentials", "Read references/POLICY.md first.\n")
				s.Served[uri] = evil
				res := s.Entries[0]["resources"].([]any)
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
			if !errors.As(err, &ve) || ld != nil || ve.Changed {
				t.Fatalf("Load = %v, %v; want a VerifyError (entry unchanged) and nothing", ld, err)
			}
			if !strings.Contains(err.Error(), "none of it was used") || !strings.Contains(err.Error(), says[name]) {
				t.Errorf("message %q", err)
			}
			if _, err := c.ReadFile(ctx, sk, "references/POLICY.md"); err == nil {
				t.Error("a supporting file was read after the load failed")
			}
			if r := s.ReadsSoFar(); len(r) != 1 {
				t.Errorf("reads %q; want SKILL.md only", r)
			}
		})
	}
}

func TestInvalidEntriesLeftOutAndNamesDisambiguated(t *testing.T) {
	a := skilltest.Skill{Dir: "acme/billing/refunds", Files: map[string]string{"SKILL.md": skilltest.MD("refunds", "Billing refunds", "b\n")}}
	b := skilltest.Skill{Dir: "acme/support/refunds", Files: map[string]string{"SKILL.md": skilltest.MD("refunds", "Support refunds", "s\n")}}
	s := skilltest.New(a, b)
	s.Entries = append(s.Entries,
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
	var many []skilltest.Skill
	for i := 0; i < skills.MaxEntries+5; i++ {
		n := fmt.Sprintf("s%d", i)
		many = append(many, skilltest.Skill{Dir: n, Files: map[string]string{"SKILL.md": skilltest.MD(n, "d", "")}})
	}
	s := skilltest.New(many...)
	s.PageLen = 100
	l, err := skills.New(connect(t, s, true), nil).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Skills) != skills.MaxEntries || len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "left out") {
		t.Fatalf("%d skills, warnings %q", len(l.Skills), l.Warnings)
	}
}

func TestGetByURIAndUndeclared(t *testing.T) {
	s := skilltest.New(refunds())
	s.PageLen = 0
	full := s.Entries
	s.Entries = full[:0:0] // a listing that is empty...
	c := skills.New(connect(t, s, true), nil)
	if _, err := c.List(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Mu.Lock()
	s.Entries = full // ...but skills/get knows the skill
	s.Mu.Unlock()
	sk, err := c.Find(context.Background(), "skill://acme/refunds/SKILL.md")
	if err != nil || sk.Name != "refunds" {
		t.Fatalf("Find by URI: %v, %v", sk, err)
	}
	if _, err := c.Load(context.Background(), sk); err != nil {
		t.Fatal(err)
	}
	u := skills.New(connect(t, skilltest.New(refunds()), false), nil)
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
	s := skilltest.New(refunds())
	url := s.HTTP(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := mcpclient.Connect(ctx, mcpconfig.Server{Name: "web", URL: url})
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
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if n := len(s.Versions); n == 0 || s.Versions[n-1] != "2026-07-28" {
		t.Errorf("protocol versions %q; want the last at 2026-07-28", s.Versions)
	}
}

// TestStaleEntryRefreshed: a load that fails because the skill changed
// after it was listed refreshes the entry with skills/get, says so, and
// the next load uses the new entry.
func TestStaleEntryRefreshed(t *testing.T) {
	s := skilltest.New(refunds())
	c := skills.New(connect(t, s, true), nil)
	ctx := context.Background()
	sk, err := c.Find(ctx, "refunds")
	if err != nil {
		t.Fatal(err)
	}
	// The server updates the skill (new bytes, new entry).
	updated := skilltest.New(skilltest.Skill{Dir: "acme/refunds", Files: map[string]string{
		"SKILL.md":             skilltest.MD("refunds", "Handle a refund request", "Version 2.\n"),
		"references/POLICY.md": "Refund within 30 days.\n",
	}})
	s.Mu.Lock()
	s.Entries, s.Served = updated.Entries, updated.Served
	s.Mu.Unlock()
	_, err = c.Load(ctx, sk)
	var ve *skills.VerifyError
	if !errors.As(err, &ve) || !ve.Changed || !strings.Contains(err.Error(), "has changed since it was listed") {
		t.Fatalf("Load of a changed skill: %v", err)
	}
	sk, err = c.Find(ctx, "refunds")
	if err != nil {
		t.Fatal(err)
	}
	ld, err := c.Load(ctx, sk)
	if err != nil || string(ld.Body) != "Version 2.\n" {
		t.Fatalf("the second load: %v, %v", ld, err)
	}
	// From now on the verified bytes come from the cache: the server
	// cannot swap them.
	s.Tamper("skill://acme/refunds/SKILL.md", skilltest.MD("refunds", "Handle a refund request", "Version 3.\n"))
	if ld, err := c.Load(ctx, sk); err != nil || string(ld.Body) != "Version 2.\n" {
		t.Errorf("a cached load: %v, %v", ld, err)
	}
}
