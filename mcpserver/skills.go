package mcpserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentapp/agentapp/skills"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Skills extension (SEP-2640, io.modelcontextprotocol/skills) on the
// server side. A server given a folder of skills (Options.Skills) declares
// the extension with directoryRead, answers skills/list, skills/get and
// resources/directory/read, and serves every file of every skill as a
// resource: listed by resources/list ahead of the documents, read by
// resources/read. The folder is read once, at start, so the digests
// published are those of the bytes served for the server's life.
//
// The three methods are custom methods of the SDK, answered on every
// transport and both protocol generations alike; the direct tools/call
// paths take nothing else, so they never see them.

// SkillsTTLMs is the ttlMs of skills/list, skills/get and a skill file's
// resources/read: the skills do not change while the server runs, so a
// host may keep them for a while (it verifies every read anyway).
const SkillsTTLMs = 300_000

// maxSkillFilesPerPage bounds how many files one skills/list page carries
// in all (entries are whole: the first entry of a page always goes in,
// up to skills.MaxResources files).
const maxSkillFilesPerPage = 1024

// skillCursorPrefix marks a resources/list cursor that points into the
// skill files. Neither the documents' cursors nor the SDK's (base64) can
// hold a colon.
const skillCursorPrefix = "skill:"

// skillServer answers the extension from one folder.
type skillServer struct {
	folder   *skills.Folder
	files    []string // every file's URI, sorted, each once
	pageSize int
}

func newSkillServer(f *skills.Folder, pageSize int) *skillServer {
	ss := &skillServer{folder: f, pageSize: pageSize}
	for _, e := range f.Entries() {
		for _, r := range e.Resources.Files {
			ss.files = append(ss.files, r.URI)
		}
	}
	slices.Sort(ss.files)
	ss.files = slices.Compact(ss.files)
	return ss
}

// installSkills declares the extension, registers its methods and returns
// the middleware that lists and reads the skill files.
func (s *Server) installSkills(ss *skillServer) mcp.Middleware {
	_ = mcp.AddReceivingCustomMethod(s.mcp, skills.MethodList, func(_ context.Context, _ *mcp.ServerSession, p *listSkillsParams) (*listSkillsResult, error) {
		cursor := ""
		if p != nil {
			cursor = p.Cursor
		}
		return ss.list(cursor)
	})
	_ = mcp.AddReceivingCustomMethod(s.mcp, skills.MethodGet, func(_ context.Context, _ *mcp.ServerSession, p *getSkillParams) (*getSkillResult, error) {
		if p == nil || p.URI == "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "skills/get needs params.uri, the URI of a skill's SKILL.md"}
		}
		e, ok := ss.folder.Entry(p.URI)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no skill is served at " + Quote(p.URI) + "; skills/list lists the skills this server serves"}
		}
		return &getSkillResult{ResultType: "complete", Skill: e, TTLMs: SkillsTTLMs, CacheScope: "public"}, nil
	})
	_ = mcp.AddReceivingCustomMethod(s.mcp, skills.MethodDirectoryRead, func(_ context.Context, _ *mcp.ServerSession, p *readDirectoryParams) (*readDirectoryResult, error) {
		if p == nil || p.URI == "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "resources/directory/read needs params.uri, the URI of a directory resource"}
		}
		return ss.readDirectory(p.URI, p.Cursor)
	})
	return ss.middleware
}

type listSkillsParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listSkillsResult struct {
	mcp.ResultBase
	ResultType string         `json:"resultType"`
	Skills     []skills.Entry `json:"skills"`
	NextCursor string         `json:"nextCursor,omitempty"`
	TTLMs      int            `json:"ttlMs"`
	CacheScope string         `json:"cacheScope"`
}

type getSkillParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type getSkillResult struct {
	mcp.ResultBase
	ResultType string       `json:"resultType"`
	Skill      skills.Entry `json:"skill"`
	TTLMs      int          `json:"ttlMs"`
	CacheScope string       `json:"cacheScope"`
}

type readDirectoryParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

type readDirectoryResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType"`
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

// badCursor is the error of a cursor this server did not make.
func badCursor(method string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
		Message: "invalid " + method + " cursor; pass back a nextCursor exactly as received, or omit it to start over"}
}

// after decodes a cursor that holds the last URI of the previous page
// (base64url), so that a page boundary does not depend on positions.
func after(cursor, method string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) == 0 || !utf8.Valid(b) {
		return "", badCursor(method)
	}
	return string(b), nil
}

// startAfter is the index of the first of sorted that sorts after last.
func startAfter(sorted []string, last string) int {
	i, found := slices.BinarySearch(sorted, last)
	if found {
		i++
	}
	return i
}

// list is one skills/list page: up to pageSize entries, whole, and no
// more than maxSkillFilesPerPage files unless one entry alone has more.
func (ss *skillServer) list(cursor string) (*listSkillsResult, error) {
	last, err := after(cursor, skills.MethodList)
	if err != nil {
		return nil, err
	}
	entries := ss.folder.Entries() // sorted by URI
	i, _ := slices.BinarySearchFunc(entries, last, func(e skills.Entry, uri string) int { return strings.Compare(e.URI, uri) })
	if last != "" && i < len(entries) && entries[i].URI == last {
		i++
	}
	res := &listSkillsResult{ResultType: "complete", Skills: []skills.Entry{}, TTLMs: SkillsTTLMs, CacheScope: "public"}
	files := 0
	for ; i < len(entries) && len(res.Skills) < ss.pageSize; i++ {
		n := len(entries[i].Resources.Files)
		if len(res.Skills) > 0 && files+n > maxSkillFilesPerPage {
			break
		}
		files += n
		res.Skills = append(res.Skills, entries[i])
	}
	if i < len(entries) && len(res.Skills) > 0 {
		res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(res.Skills[len(res.Skills)-1].URI))
	}
	return res, nil
}

// resource is a skill file as resources/list and resources/directory/read
// show it: a SKILL.md named and described by its front matter, any other
// file by its name.
func (ss *skillServer) resource(uri string) *mcp.Resource {
	f, _ := ss.folder.File(uri)
	r := &mcp.Resource{URI: uri, Name: path.Base(uri), MIMEType: f.MIMEType, Size: int64(len(f.Data))}
	if e, ok := ss.folder.Entry(uri); ok {
		r.Name, r.Description = e.Name(), e.Description()
		r.Title = e.Name() + " (skill)"
	}
	return r
}

// readDirectory answers resources/directory/read: the direct children of
// a skill's root or of a folder inside one, a page at a time.
func (ss *skillServer) readDirectory(uri, cursor string) (*readDirectoryResult, error) {
	children, ok := ss.folder.Children(uri)
	if !ok {
		what := "is not a directory resource of this server"
		if _, isFile := ss.folder.File(uri); isFile {
			what = "is a file, not a directory resource; read it with resources/read"
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: Quote(uri) + " " + what}
	}
	last, err := after(cursor, skills.MethodDirectoryRead)
	if err != nil {
		return nil, err
	}
	uris := make([]string, len(children))
	for i, c := range children {
		uris[i] = c.URI
	}
	page := children[startAfter(uris, last):]
	res := &readDirectoryResult{ResultType: "complete", Resources: make([]*mcp.Resource, 0, min(len(page), ss.pageSize))}
	if len(page) > ss.pageSize {
		page = page[:ss.pageSize]
		res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(page[len(page)-1].URI))
	}
	for _, c := range page {
		if c.MIMEType == skills.DirectoryMIMEType {
			res.Resources = append(res.Resources, &mcp.Resource{URI: c.URI, Name: path.Base(c.URI), MIMEType: c.MIMEType})
			continue
		}
		res.Resources = append(res.Resources, ss.resource(c.URI))
	}
	return res, nil
}

// middleware lists the skill files at the head of resources/list and
// reads them for resources/read; everything else goes on to next.
//
// resources/list pages through the skill files first, with cursors of
// their own (skillCursorPrefix and the last URI listed); the page that
// lists the last of them also carries the first page of what next lists
// (documents, static resources) and its nextCursor, so a client paging
// through sees everything once.
func (ss *skillServer) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "resources/list":
			lr, ok := req.(*mcp.ListResourcesRequest)
			if !ok {
				break
			}
			cursor := ""
			if lr.Params != nil {
				cursor = lr.Params.Cursor
			}
			rest, isSkill := strings.CutPrefix(cursor, skillCursorPrefix)
			if cursor != "" && !isSkill {
				break // a page of what follows the skill files
			}
			return ss.listFiles(ctx, lr, rest, method, next)
		case "resources/read":
			rr, ok := req.(*mcp.ReadResourceRequest)
			if !ok || rr.Params == nil {
				break
			}
			if f, ok := ss.folder.File(rr.Params.URI); ok {
				c := &mcp.ResourceContents{URI: f.URI, MIMEType: f.MIMEType}
				if utf8.Valid(f.Data) {
					c.Text = string(f.Data)
				} else {
					c.Blob = f.Data
				}
				res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c},
					Cacheable: mcp.Cacheable{TTLMs: SkillsTTLMs, CacheScope: "public"}}
				if v, _ := rr.Params.Meta[mcp.MetaKeyProtocolVersion].(string); v >= nextProtocolVersion {
					// The SDK marks only the results of its own read
					// handlers complete.
					return &completeReadResult{res}, nil
				}
				return res, nil
			}
		}
		return next(ctx, method, req)
	}
}

func (ss *skillServer) listFiles(ctx context.Context, lr *mcp.ListResourcesRequest, cursor, method string, next mcp.MethodHandler) (mcp.Result, error) {
	last, err := after(cursor, "resources/list")
	if err != nil {
		return nil, err
	}
	page := ss.files[startAfter(ss.files, last):]
	res := &mcp.ListResourcesResult{Cacheable: mcp.Cacheable{CacheScope: "public"}}
	if len(page) > ss.pageSize {
		page = page[:ss.pageSize]
		res.NextCursor = skillCursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(page[len(page)-1]))
	}
	res.Resources = make([]*mcp.Resource, 0, len(page))
	for _, uri := range page {
		res.Resources = append(res.Resources, ss.resource(uri))
	}
	if res.NextCursor != "" {
		return res, nil
	}
	// The last skill page: the rest begins here.
	first := &mcp.ListResourcesRequest{Session: lr.Session, Extra: lr.Extra, Params: &mcp.ListResourcesParams{}}
	if lr.Params != nil {
		p := *lr.Params
		p.Cursor = ""
		first.Params = &p
	}
	r, err := next(ctx, method, first)
	if err != nil {
		return nil, err
	}
	more, ok := r.(*mcp.ListResourcesResult)
	if !ok {
		return nil, fmt.Errorf("resources/list answered with %T", r)
	}
	more.Resources = append(res.Resources, more.Resources...)
	return more, nil
}

// completeReadResult is a resources/read result of protocol 2026-07-28,
// which says it is complete (resultType) as every result there does.
type completeReadResult struct{ *mcp.ReadResourceResult }

func (r *completeReadResult) MarshalJSON() ([]byte, error) {
	b, err := r.ReadResourceResult.MarshalJSON()
	if err != nil || len(b) < 2 || b[len(b)-1] != '}' {
		return b, err
	}
	return append(b[:len(b)-1:len(b)-1], `,"resultType":"complete"}`...), nil
}
