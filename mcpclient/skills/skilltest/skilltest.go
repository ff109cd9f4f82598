// Package skilltest is an MCP server of skills for tests: it serves the
// Skills extension from skills held in memory, counts every
// resources/read, and can serve bytes that differ from what its entries
// say.
package skilltest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"

	spec "github.com/agentapp/agentapp/skills"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Skill is one skill: its path (acme/refunds) and its files by path
// inside it; Files must hold a SKILL.md.
type Skill struct {
	Dir   string
	Files map[string]string
}

// MD is a SKILL.md of that name, description and body.
func MD(name, desc, body string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n%s", name, desc, body)
}

// Server serves skills. Its fields may be changed under Mu.
type Server struct {
	Mu      sync.Mutex
	Reads   []string          // every resources/read, in order
	Served  map[string]string // uri -> the bytes resources/read returns
	Entries []map[string]any  // what skills/list and skills/get return
	PageLen int               // entries per skills/list page (0: all)
	// Versions are the MCP-Protocol-Version headers of the HTTP requests,
	// in order (the first 100).
	Versions []string
}

// New serves sk, with entries that match the files.
func New(sk ...Skill) *Server {
	s := &Server{Served: map[string]string{}}
	for _, k := range sk {
		var res []any
		var fm map[string]any
		paths := make([]string, 0, len(k.Files))
		for p := range k.Files {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			data := k.Files[p]
			uri := "skill://" + k.Dir + "/" + p
			s.Served[uri] = data
			res = append(res, map[string]any{"uri": uri, "digest": spec.Digest([]byte(data)), "size": len(data)})
			if p == spec.FileName {
				var err error
				if fm, _, err = spec.Parse([]byte(data)); err != nil {
					panic(err)
				}
			}
		}
		s.Entries = append(s.Entries, map[string]any{"uri": "skill://" + k.Dir + "/" + spec.FileName, "frontmatter": fm, "resources": res})
	}
	return s
}

// Tamper makes resources/read of uri return data from now on, while the
// entries keep describing the old bytes.
func (s *Server) Tamper(uri, data string) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.Served[uri] = data
}

// ReadsSoFar returns the resources/read URIs so far.
func (s *Server) ReadsSoFar() []string {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return append([]string(nil), s.Reads...)
}

type params struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
	URI    string `json:"uri,omitempty"`
}

type result struct {
	mcp.ResultBase
	V map[string]any
}

func (r *result) MarshalJSON() ([]byte, error) { return json.Marshal(r.V) }

// MCP is an MCP server of the skills; declare sets whether it declares
// the extension (without it, it still serves the files as resources).
func (s *Server) MCP(declare bool) *mcp.Server {
	caps := &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}}
	if declare {
		caps.Extensions = map[string]any{spec.ExtensionID: map[string]any{}}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "skilltest", Version: "1"}, &mcp.ServerOptions{Capabilities: caps})
	_ = mcp.AddReceivingCustomMethod(srv, spec.MethodList, func(ctx context.Context, _ *mcp.ServerSession, p *params) (*result, error) {
		s.Mu.Lock()
		defer s.Mu.Unlock()
		start := 0
		if p != nil && p.Cursor != "" {
			fmt.Sscan(p.Cursor, &start)
		}
		start = min(max(start, 0), len(s.Entries))
		end := len(s.Entries)
		if s.PageLen > 0 && start+s.PageLen < end {
			end = start + s.PageLen
		}
		v := map[string]any{"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "skills": s.Entries[start:end]}
		if end < len(s.Entries) {
			v["nextCursor"] = fmt.Sprint(end)
		}
		return &result{V: v}, nil
	})
	_ = mcp.AddReceivingCustomMethod(srv, spec.MethodGet, func(ctx context.Context, _ *mcp.ServerSession, p *params) (*result, error) {
		s.Mu.Lock()
		defer s.Mu.Unlock()
		for _, e := range s.Entries {
			if e["uri"] == p.URI {
				return &result{V: map[string]any{"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "skill": e}}, nil
			}
		}
		return nil, fmt.Errorf("no skill is served at %s", p.URI)
	})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "skill://{+path}", Name: "skills"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		s.Mu.Lock()
		s.Reads = append(s.Reads, uri)
		data, ok := s.Served[uri]
		s.Mu.Unlock()
		if !ok {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: data}}}, nil
	})
	return srv
}

// HTTP serves the skills over stateless streamable HTTP on loopback until
// the test ends, and returns the URL.
func (s *Server) HTTP(t testing.TB, declare bool) string {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.MCP(declare) }, &mcp.StreamableHTTPOptions{Stateless: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Mu.Lock()
		if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && len(s.Versions) < 100 {
			s.Versions = append(s.Versions, v)
		}
		s.Mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}
