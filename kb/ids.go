package kb

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// A document is identified by its path relative to the directory it was
// ingested from (its ingest root), so guides/readme.md and faq/readme.md
// are two documents. Its id makes that path fit in a URI segment and adds
// the content hash, so that a changed document gets a new id and a client
// holding the old one notices:
//
//	guides/readme.md  →  guides~readme.md-1a2b3c4d
//
// "/" becomes "~", and the "~" and "%" of a file name are written %7E and
// %25, so two paths never share an id. A file at the top of its root gets
// "<file name>-<hash>", the form knowledge bases written by older versions
// use for every document, so the demo FAQ's ids and links to them stay
// valid.

// docPath turns the name a document is ingested under into its path: slash
// separated and cleaned. The path must be relative to the ingest root; an
// absolute one or one that climbs out of the root would make the same file
// two documents depending on how it was named.
func docPath(name string) (string, error) {
	if name == "" {
		return "", errors.New("a document needs a file name")
	}
	if filepath.IsAbs(name) || filepath.VolumeName(name) != "" || strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("%s: a document is named by its path relative to the directory it is ingested from, not by an absolute path", name)
	}
	p := path.Clean(filepath.ToSlash(name))
	if p == "." {
		return "", errors.New("a document needs a file name")
	}
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", fmt.Errorf("%s: a document is named by its path inside the directory it is ingested from; this one points outside it", name)
	}
	return p, nil
}

// docID is the id of the document with the given path and content.
func docID(p string, data []byte) string {
	sum := sha256.Sum256(data)
	return pathSlug(p) + "-" + hex.EncodeToString(sum[:4])
}

// pathSlug writes a path as one URI-safe segment: "/" becomes "~", and "~"
// and "%" are percent-encoded so that the mapping cannot be ambiguous.
func pathSlug(p string) string {
	if !strings.ContainsAny(p, "/~%") {
		return p
	}
	var b strings.Builder
	b.Grow(len(p) + 4)
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '/':
			b.WriteByte('~')
		case '~':
			b.WriteString("%7E")
		case '%':
			b.WriteString("%25")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// sourceEndsWith reports whether the source an old-style document was
// ingested from ends with the path p, component by component. It is how a
// document stored under its file name alone is recognised as the file now
// ingested under p: its source is the path the user typed, usually the
// ingest root followed by p.
func sourceEndsWith(source, p string) bool {
	s := path.Clean(filepath.ToSlash(source))
	return s == p || strings.HasSuffix(s, "/"+p)
}

// ErrAmbiguous is wrapped by the error of Resolve for a reference that fits
// several documents; test for it with errors.Is.
var ErrAmbiguous = errors.New("ambiguous document reference")

// AmbiguousError is the error of Resolve for a reference that fits several
// documents. It matches ErrAmbiguous.
type AmbiguousError struct {
	// Ref is the reference as given.
	Ref string
	// IDs are the ids of the documents it fits (at most maxCandidates).
	IDs []string
	// More is the number of further documents it fits that IDs leaves out.
	More int
}

// maxCandidates bounds the ids an AmbiguousError lists.
const maxCandidates = 10

// Error lists the candidates, so the user can pick one.
func (e *AmbiguousError) Error() string {
	more := ""
	if e.More > 0 {
		more = fmt.Sprintf(" and %d more", e.More)
	}
	return fmt.Sprintf("%q matches %d documents: %s%s; give more of the id, or the document's path",
		e.Ref, len(e.IDs)+e.More, strings.Join(e.IDs, ", "), more)
}

func (e *AmbiguousError) Is(target error) bool { return target == ErrAmbiguous }

// Resolve finds the document a person means by ref, trying in order: its
// id; its path (Doc.Path, as `kb list` shows it); the file it was ingested
// from (Doc.Source); and the start of its id, which must fit one document
// only. A reference that fits no document is an error wrapping ErrNotFound,
// one that fits several an *AmbiguousError listing them.
func (k *KB) Resolve(ctx context.Context, ref string) (Doc, error) {
	if ref == "" {
		return Doc{}, &notFoundError{id: ref, ref: true}
	}
	d, err := k.Get(ctx, ref)
	if !errors.Is(err, ErrNotFound) {
		return d, err
	}
	if p, err := docPath(ref); err == nil {
		d, err := scanDoc(k.st.DB.QueryRowContext(ctx, `SELECT `+docColumns+` FROM kb_documents WHERE name = ?`, p))
		switch {
		case err == nil:
			return d, nil
		case !errors.Is(err, sql.ErrNoRows):
			return Doc{}, fmt.Errorf("look up document %s: %w", ref, err)
		}
	}
	for _, q := range []struct {
		where string
		args  []any
	}{
		{`source IN (?, ?)`, []any{ref, filepath.Clean(ref)}},
		{`substr(id, 1, length(?1)) = ?1`, []any{ref}},
	} {
		ids, err := k.idsWhere(ctx, q.where, q.args...)
		if err != nil {
			return Doc{}, fmt.Errorf("look up document %s: %w", ref, err)
		}
		switch {
		case len(ids) == 1:
			return k.Get(ctx, ids[0])
		case len(ids) > maxCandidates:
			return Doc{}, &AmbiguousError{Ref: ref, IDs: ids[:maxCandidates], More: len(ids) - maxCandidates}
		case len(ids) > 1:
			return Doc{}, &AmbiguousError{Ref: ref, IDs: ids}
		}
	}
	return Doc{}, &notFoundError{id: ref, ref: true}
}

// idsWhere returns the ids of the documents matching a condition, in order.
func (k *KB) idsWhere(ctx context.Context, where string, args ...any) ([]string, error) {
	rows, err := k.st.DB.QueryContext(ctx, `SELECT id FROM kb_documents WHERE `+where+` ORDER BY id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
