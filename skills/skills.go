package skills

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Wire names of the extension.
const (
	ExtensionID = "io.modelcontextprotocol/skills"
	// MethodList and MethodGet are the two methods a server declaring the
	// extension answers; MethodDirectoryRead only when it declares
	// directoryRead.
	MethodList          = "skills/list"
	MethodGet           = "skills/get"
	MethodDirectoryRead = "resources/directory/read"
	// Scheme is the URI scheme servers should use: skill://<path>/<file>.
	Scheme = "skill"
	// FileName is the manifest every skill has at its root.
	FileName = "SKILL.md"
	// MIMEType is SKILL.md's media type; DirectoryMIMEType marks a
	// directory resource.
	MIMEType          = "text/markdown"
	DirectoryMIMEType = "inode/directory"
	// Dynamic is the resources value of a skill whose content is
	// generated, which carries no digests.
	Dynamic = "dynamic"
)

// Limits every host must accept and servers should keep within.
const (
	MaxResources = 512
	MaxTotalSize = 16 << 20
)

// Resource is one file of a skill: its URI, and the size and digest of
// its raw bytes.
type Resource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// Resources is an entry's file list: the files, or Dynamic.
type Resources struct {
	Dynamic bool
	Files   []Resource
}

// MarshalJSON writes the files as an array, or the string "dynamic".
func (r Resources) MarshalJSON() ([]byte, error) {
	if r.Dynamic {
		return json.Marshal(Dynamic)
	}
	if r.Files == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(r.Files)
}

// UnmarshalJSON accepts an array of files or the string "dynamic", and
// refuses anything else (the spec says a host must not load such an
// entry).
func (r *Resources) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s != Dynamic {
			return fmt.Errorf("resources is the string %q; want an array of files or %q", s, Dynamic)
		}
		*r = Resources{Dynamic: true}
		return nil
	}
	if len(b) == 0 || b[0] != '[' {
		return fmt.Errorf("resources is %s; want an array of files or %q", preview(b), Dynamic)
	}
	var files []Resource
	if err := json.Unmarshal(b, &files); err != nil {
		return fmt.Errorf("resources: %w", err)
	}
	*r = Resources{Files: files}
	return nil
}

// Entry is one skill as skills/list and skills/get return it.
type Entry struct {
	// URI is the skill's SKILL.md.
	URI string `json:"uri"`
	// Frontmatter is SKILL.md's front matter verbatim; name and
	// description are always there.
	Frontmatter map[string]any `json:"frontmatter"`
	// Resources is nil when the entry had none, which makes it invalid.
	Resources *Resources `json:"resources,omitempty"`
}

// Name is the front matter's name ("" if it is not a string).
func (e *Entry) Name() string { s, _ := e.Frontmatter["name"].(string); return s }

// Description is the front matter's description.
func (e *Entry) Description() string { s, _ := e.Frontmatter["description"].(string); return s }

// Dir is the skill's root: its URI without the trailing /SKILL.md.
func (e *Entry) Dir() string { return strings.TrimSuffix(e.URI, "/"+FileName) }

var (
	// nameRE is compiled on first use: its bounded repetition makes a
	// large program, which every start of agentapp would pay for.
	nameRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`) })
	digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// CheckName reports why name breaks the Agent Skills naming rules (1–64
// lowercase letters, digits and hyphens, no hyphen first, last or
// doubled), or nil.
func CheckName(name string) error {
	if !nameRE().MatchString(name) || strings.Contains(name, "--") {
		return fmt.Errorf("skill name %q must be 1 to 64 lowercase letters, digits and single hyphens, not starting or ending with a hyphen", name)
	}
	return nil
}

// NameOfURI is the skill name a SKILL.md URI carries (its last path
// segment before /SKILL.md), or "" if uri is not one.
func NameOfURI(uri string) string {
	i := strings.Index(uri, "://")
	if i < 0 || !strings.HasSuffix(uri, "/"+FileName) {
		return ""
	}
	segs := strings.Split(strings.TrimSuffix(uri[i+3:], "/"+FileName), "/")
	return segs[len(segs)-1]
}

// Digest is the digest of b as entries carry it: sha256:<hex>.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Check reports everything that makes e unloadable, joined, or nil: a
// URI that is not a SKILL.md whose last segment is the front matter's
// name, a missing name or description, no resources, a file list that
// is not complete (SKILL.md itself missing), outside the skill, repeated,
// with a malformed digest or size, or over the limits.
func (e *Entry) Check() error {
	var errs []error
	if e.URI == "" {
		errs = append(errs, errors.New("the entry has no uri"))
	} else if u, err := url.Parse(e.URI); err != nil || u.Scheme == "" {
		errs = append(errs, fmt.Errorf("uri %q is not an absolute URI", e.URI))
	}
	name, ok := e.Frontmatter["name"].(string)
	switch {
	case !ok || name == "":
		errs = append(errs, errors.New("the front matter has no name"))
	default:
		if err := CheckName(name); err != nil {
			errs = append(errs, err)
		}
		if got := NameOfURI(e.URI); got != name {
			errs = append(errs, fmt.Errorf("uri %q must end in /%s/%s (the front matter's name)", e.URI, name, FileName))
		}
	}
	if d, ok := e.Frontmatter["description"].(string); !ok || strings.TrimSpace(d) == "" {
		errs = append(errs, errors.New("the front matter has no description"))
	}
	switch {
	case e.Resources == nil:
		errs = append(errs, errors.New("the entry has no resources"))
	case !e.Resources.Dynamic:
		errs = append(errs, e.checkFiles()...)
	}
	return errors.Join(errs...)
}

func (e *Entry) checkFiles() []error {
	var errs []error
	files := e.Resources.Files
	if len(files) > MaxResources {
		errs = append(errs, fmt.Errorf("%d files, over the limit of %d per skill", len(files), MaxResources))
	}
	seen := make(map[string]bool, len(files))
	var total int64
	dir := e.Dir() + "/"
	for _, f := range files {
		switch {
		case seen[f.URI]:
			errs = append(errs, fmt.Errorf("file %q is listed twice", f.URI))
		case f.URI != e.URI && !strings.HasPrefix(f.URI, dir):
			errs = append(errs, fmt.Errorf("file %q is outside the skill %s", f.URI, e.Dir()))
		case strings.Contains("/"+strings.TrimPrefix(f.URI, dir)+"/", "/../"):
			errs = append(errs, fmt.Errorf("file %q leaves the skill's folder", f.URI))
		}
		seen[f.URI] = true
		if !digestRE.MatchString(f.Digest) {
			errs = append(errs, fmt.Errorf("file %q: digest %q is not sha256: and 64 lowercase hex digits", f.URI, f.Digest))
		}
		if f.Size < 0 {
			errs = append(errs, fmt.Errorf("file %q: size %d is negative", f.URI, f.Size))
		}
		total += f.Size
	}
	if !seen[e.URI] {
		errs = append(errs, fmt.Errorf("the file list does not include %s itself", e.URI))
	}
	if total > MaxTotalSize {
		errs = append(errs, fmt.Errorf("%d bytes in all, over the limit of %d per skill", total, MaxTotalSize))
	}
	return errs
}

// File is the listed file at uri, or false if the entry does not list it
// (a read of an unlisted file is a verification failure).
func (e *Entry) File(uri string) (Resource, bool) {
	if e.Resources == nil {
		return Resource{}, false
	}
	for _, f := range e.Resources.Files {
		if f.URI == uri {
			return f, true
		}
	}
	return Resource{}, false
}

// VerifyFile checks data, read from uri, against the entry: the entry
// must list uri, and the size and then the digest must match. A dynamic
// entry verifies only the total-size limit.
func (e *Entry) VerifyFile(uri string, data []byte) error {
	if e.Resources != nil && e.Resources.Dynamic {
		if len(data) > MaxTotalSize {
			return fmt.Errorf("%s: %d bytes, over the limit of %d per skill", uri, len(data), MaxTotalSize)
		}
		return nil
	}
	f, ok := e.File(uri)
	if !ok {
		return fmt.Errorf("%s is not one of the skill's listed files", uri)
	}
	if int64(len(data)) != f.Size {
		return fmt.Errorf("%s: %d bytes read, the entry says %d; the skill may have changed since it was listed", uri, len(data), f.Size)
	}
	if got := Digest(data); got != f.Digest {
		return fmt.Errorf("%s: digest %s, the entry says %s; the content is not what was listed", uri, got, f.Digest)
	}
	return nil
}

// VerifySkillMD checks SKILL.md's bytes as a load does: the file against
// the entry (VerifyFile), then its front matter field by field against
// the entry's. It returns the body after the front matter.
func (e *Entry) VerifySkillMD(data []byte) (body []byte, err error) {
	if err := e.VerifyFile(e.URI, data); err != nil {
		return nil, err
	}
	fm, body, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.URI, err)
	}
	if diff := diffFrontmatter(e.Frontmatter, fm); diff != "" {
		return nil, fmt.Errorf("%s: its front matter differs from the entry's: %s", e.URI, diff)
	}
	return body, nil
}

// Parse splits a SKILL.md into its front matter (as JSON would carry it:
// numbers are float64) and body. The front matter must be a YAML mapping
// between two "---" lines at the very start, naming the skill and
// describing it.
func Parse(data []byte) (frontmatter map[string]any, body []byte, err error) {
	rest := bytes.TrimPrefix(data, []byte("\ufeff"))
	line, rest, ok := cutLine(rest)
	if !ok || strings.TrimRight(string(line), " \t") != "---" {
		return nil, nil, errors.New(`SKILL.md must begin with a "---" line and YAML front matter`)
	}
	var yml []byte
	for {
		var l []byte
		l, rest, ok = cutLine(rest)
		if strings.TrimRight(string(l), " \t") == "---" {
			break
		}
		if !ok {
			return nil, nil, errors.New(`SKILL.md's front matter has no closing "---" line`)
		}
		yml = append(append(yml, l...), '\n')
	}
	var raw any
	if err := yaml.Unmarshal(yml, &raw); err != nil {
		return nil, nil, fmt.Errorf("SKILL.md's front matter is not valid YAML: %w", err)
	}
	norm, err := jsonValue(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("SKILL.md's front matter: %w", err)
	}
	fm, ok := norm.(map[string]any)
	if !ok {
		return nil, nil, errors.New("SKILL.md's front matter is not a mapping of fields")
	}
	if s, _ := fm["name"].(string); s == "" {
		return nil, nil, errors.New("SKILL.md's front matter has no name")
	}
	if s, _ := fm["description"].(string); strings.TrimSpace(s) == "" {
		return nil, nil, errors.New("SKILL.md's front matter has no description")
	}
	return fm, rest, nil
}

// cutLine returns the first line of b without its "\n" or "\r\n", the
// rest, and whether a line ending was found.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	line, rest, ok = bytes.Cut(b, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), rest, ok
}

// jsonValue turns a YAML value into the value JSON would carry for it,
// so that front matter read from SKILL.md compares with an entry's.
func jsonValue(v any) (any, error) {
	b, err := json.Marshal(yamlToJSON(v))
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}

// yamlToJSON turns the map[any]any a YAML document may hold into
// map[string]any; YAML timestamps and the like become what json.Marshal
// makes of them.
func yamlToJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = yamlToJSON(x)
		}
		return m
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[fmt.Sprint(k)] = yamlToJSON(x)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = yamlToJSON(x)
		}
		return s
	}
	return v
}

// diffFrontmatter describes the first difference between the entry's
// front matter and the file's, field by field, or returns "".
func diffFrontmatter(entry, file map[string]any) string {
	norm, err := jsonValue(entry)
	if err != nil {
		return err.Error()
	}
	em, _ := norm.(map[string]any)
	for k, ev := range em {
		fv, ok := file[k]
		if !ok {
			return fmt.Sprintf("field %q is in the entry but not in the file", k)
		}
		if !jsonEqual(ev, fv) {
			return fmt.Sprintf("field %q is %s in the entry and %s in the file", k, preview(mustJSON(ev)), preview(mustJSON(fv)))
		}
	}
	for k := range file {
		if _, ok := em[k]; !ok {
			return fmt.Sprintf("field %q is in the file but not in the entry", k)
		}
	}
	return ""
}

func jsonEqual(a, b any) bool { return bytes.Equal(mustJSON(a), mustJSON(b)) }

// mustJSON marshals a value decoded from JSON, which cannot fail; maps
// come out with sorted keys, so equal values give equal bytes.
func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// preview is b cut to 60 bytes for an error message.
func preview(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}
