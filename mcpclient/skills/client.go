package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"sync"

	"github.com/agentapp/agentapp/internal/textsafe"
	spec "github.com/agentapp/agentapp/skills"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is what a Client needs of a connection; *mcpclient.Bridge is one.
type Server interface {
	// Name is the host's label for the server: half of every skill's
	// identity, never the server's self-reported name.
	Name() string
	DeclaresSkills() bool
	SkillsRequest(ctx context.Context, method string, p *Params) (json.RawMessage, error)
	ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error)
}

// Bounds of one listing. A listing past them is cut, with a warning: the
// spec lets a listing be partial, and a skill left out stays loadable by
// URI (skills/get).
const (
	MaxPages   = 50
	MaxEntries = 1000
	// maxListBytes bounds the answers of one listing together.
	maxListBytes = 32 << 20
	// maxCached bounds the files the cache keeps; past it the cache starts
	// afresh (a file dropped is only read again).
	maxCached = 256
)

// ErrNotDeclared is the error of a Client whose server did not declare
// the extension.
var ErrNotDeclared = errors.New("the server does not declare the Skills extension (" + spec.ExtensionID + ")")

// ErrNoSkill is under the error of a name that matches no skill, or
// more than one.
var ErrNoSkill = errors.New("no such skill")

// VerifyError is a file that failed verification against its entry; its
// content was not used.
type VerifyError struct {
	Server, URI string
	Err         error
	// Changed is set when the server's entry for the skill (skills/get)
	// is no longer the one the load used: the skill changed since it was
	// listed, and the next load uses the new entry.
	Changed bool
}

func (e *VerifyError) Error() string {
	msg := fmt.Sprintf("skill file %s from MCP server %s failed verification, so none of it was used: %v", e.URI, e.Server, e.Err)
	if e.Changed {
		msg += "; the server's entry for the skill has changed since it was listed: loading it again uses (and asks about) the new one"
	}
	return msg
}

func (e *VerifyError) Unwrap() error { return e.Err }

// Skill is one checked entry of a server, as the host offers it.
type Skill struct {
	Server string
	// Name is the front matter's name, or when two entries of the listing
	// share it, the path that tells them apart (acme/billing/refunds).
	Name  string
	Entry *spec.Entry
}

// Description is the entry's description on one line.
func (s *Skill) Description() string {
	return strings.Join(strings.Fields(s.Entry.Description()), " ")
}

// Listing is the outcome of List.
type Listing struct {
	Skills []*Skill
	// Warnings say what was left out and why (also logged).
	Warnings []string
}

// Loaded is a verified SKILL.md.
type Loaded struct {
	Skill *Skill
	// File is SKILL.md as read (and verified); Body is what follows its
	// front matter.
	File, Body []byte
	// Unverified is set for a "dynamic" entry, which has no digests: only
	// its front matter and size were checked.
	Unverified bool
}

type cacheKey struct{ server, uri string }

type cached struct {
	digest string
	data   []byte
}

// Client lists and loads one server's skills.
type Client struct {
	srv Server
	log *slog.Logger

	mu     sync.Mutex
	skills []*Skill
	listed bool
	// held maps a loaded skill's URI to the entry it was loaded from: its
	// reads resolve only to files that entry lists.
	held  map[string]*spec.Entry
	cache map[cacheKey]cached
}

// New is a Client of srv; log may be nil.
func New(srv Server, log *slog.Logger) *Client {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{srv: srv, log: log, held: map[string]*spec.Entry{}, cache: map[cacheKey]cached{}}
}

// Server is the label of the client's server.
func (c *Client) Server() string { return c.srv.Name() }

// Declared reports whether the server declared the extension.
func (c *Client) Declared() bool { return c.srv.DeclaresSkills() }

func (c *Client) warn(w *[]string, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	*w = append(*w, msg)
	c.log.Warn(msg, "server", c.srv.Name())
}

// List reads every page of skills/list within the bounds, checks each
// entry and keeps the valid ones, named so that no two share a name. It
// reads no skill file.
func (c *Client) List(ctx context.Context) (*Listing, error) {
	if !c.Declared() {
		return nil, ErrNotDeclared
	}
	server := c.srv.Name()
	out := &Listing{}
	var entries []*spec.Entry
	seenCursor := map[string]bool{}
	cursor := ""
	var size int
	for page := 0; ; page++ {
		if page == MaxPages {
			c.warn(&out.Warnings, "MCP server %s: skills/list still had more after %d pages; the rest is left out", server, MaxPages)
			break
		}
		raw, err := c.srv.SkillsRequest(ctx, spec.MethodList, &Params{Cursor: cursor})
		if err != nil {
			return nil, err
		}
		size += len(raw)
		var res struct {
			Skills     []json.RawMessage `json:"skills"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("MCP server %s answered skills/list with something that is not a listing: %v", server, err)
		}
		for _, r := range res.Skills {
			if len(entries) == MaxEntries {
				break
			}
			if e := c.decode(&out.Warnings, r); e != nil {
				entries = append(entries, e)
			}
		}
		if len(entries) == MaxEntries && (len(res.Skills) > 0 || res.NextCursor != "") {
			c.warn(&out.Warnings, "MCP server %s lists more than %d skills; the rest is left out", server, MaxEntries)
			break
		}
		if res.NextCursor == "" {
			break
		}
		if seenCursor[res.NextCursor] {
			c.warn(&out.Warnings, "MCP server %s sent a skills/list cursor it had sent before; the listing stops there", server)
			break
		}
		if size > maxListBytes {
			c.warn(&out.Warnings, "MCP server %s: skills/list passed %d MiB; the rest is left out", server, maxListBytes>>20)
			break
		}
		seenCursor[res.NextCursor] = true
		cursor = res.NextCursor
	}
	out.Skills = c.name(entries)
	c.mu.Lock()
	c.skills, c.listed = out.Skills, true
	c.mu.Unlock()
	return out, nil
}

// decode turns one raw entry into a checked one, or warns and returns nil.
func (c *Client) decode(w *[]string, r json.RawMessage) *spec.Entry {
	var e spec.Entry
	if err := json.Unmarshal(r, &e); err != nil {
		c.warn(w, "MCP server %s: skill entry %s left out: %v", c.srv.Name(), textsafe.Preview(string(r), 120), err)
		return nil
	}
	if err := e.Check(); err != nil {
		label := e.Name()
		if label == "" {
			label = e.URI
		}
		c.warn(w, "MCP server %s: skill %q left out: %s", c.srv.Name(), textsafe.Preview(label, 120), strings.ReplaceAll(textsafe.Preview(err.Error(), 600), "\n", "; "))
		return nil
	}
	return &e
}

// name gives each entry the name it is offered under: its own, or where
// the listing has it twice, its skill path (the URI without scheme and
// /SKILL.md), or the whole URI if even that is shared. Names are labels;
// nothing is silently dropped or preferred.
func (c *Client) name(entries []*spec.Entry) []*Skill {
	count := map[string]int{}
	for _, e := range entries {
		count[e.Name()]++
	}
	paths := map[string]int{}
	for _, e := range entries {
		if count[e.Name()] > 1 {
			paths[skillPath(e)]++
		}
	}
	out := make([]*Skill, 0, len(entries))
	for _, e := range entries {
		n := e.Name()
		if count[n] > 1 {
			n = skillPath(e)
			if paths[n] > 1 {
				n = e.URI
			}
		}
		out = append(out, &Skill{Server: c.srv.Name(), Name: n, Entry: e})
	}
	return out
}

func skillPath(e *spec.Entry) string {
	d := e.Dir()
	if i := strings.Index(d, "://"); i >= 0 {
		return d[i+3:]
	}
	return d
}

// Skills returns the latest listing (List first; nil before).
func (c *Client) Skills() []*Skill {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Skill(nil), c.skills...)
}

// Find resolves ref, a name as listed or a SKILL.md URI, to a skill: from
// the listing (List runs first if it has not), else for a URI from
// skills/get, which answers for skills a partial listing left out.
func (c *Client) Find(ctx context.Context, ref string) (*Skill, error) {
	c.mu.Lock()
	listed := c.listed
	c.mu.Unlock()
	if !listed {
		if _, err := c.List(ctx); err != nil {
			return nil, err
		}
	}
	var byName []*Skill
	for _, s := range c.Skills() {
		if s.Entry.URI == ref || s.Name == ref {
			return s, nil
		}
		if s.Entry.Name() == ref {
			byName = append(byName, s)
		}
	}
	if len(byName) > 1 {
		names := make([]string, len(byName))
		for i, s := range byName {
			names[i] = s.Name
		}
		return nil, fmt.Errorf("MCP server %s has %d skills named %q; name one of: %s (%w)", c.srv.Name(), len(byName), ref, strings.Join(names, ", "), ErrNoSkill)
	}
	if !strings.Contains(ref, "://") {
		return nil, fmt.Errorf("MCP server %s lists no skill %q: %w", c.srv.Name(), ref, ErrNoSkill)
	}
	return c.Get(ctx, ref)
}

// Get asks the server for the entry of the skill at uri (skills/get) and
// checks it.
func (c *Client) Get(ctx context.Context, uri string) (*Skill, error) {
	if !c.Declared() {
		return nil, ErrNotDeclared
	}
	if spec.NameOfURI(uri) == "" {
		return nil, fmt.Errorf("%q is not a skill URI (one ending in /%s)", textsafe.Preview(uri, 200), spec.FileName)
	}
	raw, err := c.srv.SkillsRequest(ctx, spec.MethodGet, &Params{URI: uri})
	if err != nil {
		return nil, err
	}
	var res struct {
		Skill json.RawMessage `json:"skill"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Skill) == 0 {
		return nil, fmt.Errorf("MCP server %s answered skills/get %s without a skill entry", c.srv.Name(), uri)
	}
	var w []string
	e := c.decode(&w, res.Skill)
	if e == nil {
		return nil, errors.New(w[0])
	}
	if e.URI != uri {
		return nil, fmt.Errorf("MCP server %s answered skills/get %s with the entry of %s", c.srv.Name(), uri, e.URI)
	}
	return &Skill{Server: c.srv.Name(), Name: e.Name(), Entry: e}, nil
}

// Load reads the skill's SKILL.md (or takes it from the cache when its
// digest is the entry's), verifies it against the entry (size, digest,
// front matter field by field) and only then returns it. From then on the
// skill's supporting files are read under this entry (ReadFile).
func (c *Client) Load(ctx context.Context, s *Skill) (*Loaded, error) {
	e := s.Entry
	data, err := c.fetch(ctx, e, e.URI)
	if err != nil {
		return nil, err
	}
	body, err := e.VerifySkillMD(data)
	if err != nil {
		return nil, &VerifyError{Server: c.srv.Name(), URI: e.URI, Err: err, Changed: c.refresh(ctx, s)}
	}
	c.keep(e, e.URI, data)
	c.mu.Lock()
	c.held[e.URI] = e
	c.mu.Unlock()
	return &Loaded{Skill: s, File: data, Body: body, Unverified: e.Resources.Dynamic}, nil
}

// refresh asks the server for the entry of s after a verification
// failure (the spec's way out of a stale entry) and, when its files
// differ, puts it in the listing in place of the old one; it reports
// whether they did. A failed skills/get changes nothing.
func (c *Client) refresh(ctx context.Context, s *Skill) bool {
	fresh, err := c.Get(ctx, s.Entry.URI)
	if err != nil || sameFiles(fresh.Entry, s.Entry) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, k := range c.skills {
		if k.Entry.URI == s.Entry.URI {
			c.skills[i] = &Skill{Server: k.Server, Name: k.Name, Entry: fresh.Entry}
		}
	}
	return true
}

// sameFiles reports whether two entries list the same files (uri,
// digest, size) and the same front matter.
func sameFiles(a, b *spec.Entry) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// Loaded reports whether the skill at uri was loaded (and its entry held).
func (c *Client) IsLoaded(uri string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held[uri] != nil
}

// ReadFile reads a supporting file of a loaded skill by its path relative
// to the skill's root (references/GUIDE.md), only if the entry the skill
// was loaded from lists it, and verifies it.
func (c *Client) ReadFile(ctx context.Context, s *Skill, rel string) ([]byte, error) {
	c.mu.Lock()
	e := c.held[s.Entry.URI]
	c.mu.Unlock()
	if e == nil {
		return nil, fmt.Errorf("skill %s of MCP server %s is not loaded; load it before reading its files", s.Name, c.srv.Name())
	}
	uri, err := Resolve(e, rel)
	if err != nil {
		return nil, err
	}
	if !e.Resources.Dynamic {
		if _, ok := e.File(uri); !ok {
			return nil, &VerifyError{Server: c.srv.Name(), URI: uri, Err: fmt.Errorf("the skill's entry does not list %s", rel)}
		}
	}
	data, err := c.fetch(ctx, e, uri)
	if err != nil {
		return nil, err
	}
	if err := e.VerifyFile(uri, data); err != nil {
		return nil, &VerifyError{Server: c.srv.Name(), URI: uri, Err: err}
	}
	c.keep(e, uri, data)
	return data, nil
}

// Resolve turns a path relative to the skill's root into the file's URI;
// a path that is absolute, a URI, or leaves the root is refused.
func Resolve(e *spec.Entry, rel string) (string, error) {
	if rel == "" || strings.HasPrefix(rel, "/") || strings.Contains(rel, "://") || strings.ContainsAny(rel, "\\\x00") {
		return "", fmt.Errorf("%q is not a path inside the skill (like references/GUIDE.md)", textsafe.Preview(rel, 200))
	}
	clean := path.Clean(rel)
	if clean == ".." || strings.HasPrefix(clean, "../") || clean == "." {
		return "", fmt.Errorf("%q leaves the skill's folder", textsafe.Preview(rel, 200))
	}
	return e.Dir() + "/" + clean, nil
}

// fetch returns the file at uri: from the cache when the entry lists it
// with the digest the cached bytes had, else by resources/read.
func (c *Client) fetch(ctx context.Context, e *spec.Entry, uri string) ([]byte, error) {
	if f, ok := e.File(uri); ok {
		c.mu.Lock()
		hit, ok := c.cache[cacheKey{c.srv.Name(), uri}]
		c.mu.Unlock()
		if ok && hit.digest == f.Digest {
			return hit.data, nil
		}
	}
	res, err := c.srv.ReadResource(ctx, uri)
	if err != nil {
		return nil, err
	}
	return contentOf(c.srv.Name(), uri, res)
}

// keep caches verified bytes with their digest (in memory only: nothing
// but this process can change them).
func (c *Client) keep(e *spec.Entry, uri string, data []byte) {
	if e.Resources.Dynamic {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.cache) >= maxCached {
		c.cache = map[cacheKey]cached{}
	}
	c.cache[cacheKey{c.srv.Name(), uri}] = cached{digest: spec.Digest(data), data: data}
}

// contentOf is the bytes of the one content of res for uri: its text as
// UTF-8, or its blob.
func contentOf(server, uri string, res *mcp.ReadResourceResult) ([]byte, error) {
	var pick *mcp.ResourceContents
	for _, c := range res.Contents {
		if c != nil && c.URI == uri {
			if pick != nil {
				return nil, fmt.Errorf("MCP server %s answered resources/read %s with more than one content for it", server, uri)
			}
			pick = c
		}
	}
	if pick == nil && len(res.Contents) == 1 && res.Contents[0] != nil {
		pick = res.Contents[0]
	}
	if pick == nil {
		return nil, fmt.Errorf("MCP server %s answered resources/read %s without its content", server, uri)
	}
	if pick.Blob != nil {
		return pick.Blob, nil
	}
	return []byte(pick.Text), nil
}
