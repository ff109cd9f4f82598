package kb

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/agentapp/agentapp/store"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxDocumentBytes is the largest document Ingest accepts. A knowledge-base
// article is a few kilobytes; anything near this is probably not one.
const MaxDocumentBytes = 16 << 20

// Status says what Ingest did with a document.
type Status string

// The outcomes of Ingest.
const (
	// StatusAdded: no document had this path before.
	StatusAdded Status = "added"
	// StatusReplaced: the path was there with other content from the same
	// source file (or under an id of the old form); the old document and
	// its chunks were replaced in the same transaction. A path held by a
	// document from another file is refused with a *ConflictError instead.
	StatusReplaced Status = "replaced"
	// StatusUnchanged: the same path with the same content was already
	// there; nothing was written.
	StatusUnchanged Status = "unchanged"
)

// IngestResult reports one ingested document.
type IngestResult struct {
	Doc    Doc
	Status Status
	// ReplacedID is the id of the previous version when Status is
	// StatusReplaced.
	ReplacedID string
}

// IsIngestible reports whether a file name has an extension Ingest accepts
// (.md, .markdown or .txt, any case). Directory walks use it to pick files.
func IsIngestible(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".md", ".markdown", ".txt":
		return true
	}
	return false
}

// prepared is a document checked, chunked and tokenised outside the write
// transaction, so the database lock is held only for the inserts.
type prepared struct {
	doc     Doc    // doc.Path identifies the document
	name    string // the file as errors name it: its Source, else its path
	content string
	chunks  []Chunk
	index   []indexRow
}

// indexRow is the token text of one chunk for the three index columns.
type indexRow struct{ doc, heading, body string }

// ownHeading is the innermost heading of a heading path, or "" when that is
// the document title (already indexed in its own column).
func ownHeading(path, title string) string {
	parts := strings.Split(path, " › ")
	h := parts[len(parts)-1]
	if h == title {
		return ""
	}
	return h
}

// prepare validates a document, given its path in the ingest root, and cuts
// it into indexed chunks. Errors name the file and say what is wrong with it.
func prepare(name string, data []byte) (*prepared, error) {
	return prepareFile(File{Name: name, Data: data})
}

// prepareFile is prepare for a File, whose Source (when set) is what the
// errors name and what Doc.Source records.
func prepareFile(f File) (*prepared, error) {
	name, data := f.Source, f.Data
	if name == "" {
		name = f.Name
	}
	dp, err := docPath(f.Name)
	if err != nil {
		return nil, err
	}
	base := path.Base(dp)
	if !IsIngestible(base) {
		return nil, fmt.Errorf("%s: only Markdown (.md) and text (.txt) files can be ingested", name)
	}
	if len(data) > MaxDocumentBytes {
		return nil, fmt.Errorf("%s is %d bytes, over the %d MiB limit; split it into smaller documents", name, len(data), MaxDocumentBytes>>20)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("%s is empty: nothing to ingest", name)
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, fmt.Errorf("%s looks like a binary file (NUL byte at offset %d); only UTF-8 text can be ingested", name, i)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%s is not valid UTF-8 (first bad byte at offset %d); convert it to UTF-8 and ingest it again", name, firstInvalid(data))
	}
	content := normalizeNewlines(string(data))
	if strings.TrimFunc(content, unicode.IsSpace) == "" {
		return nil, fmt.Errorf("%s contains only whitespace: nothing to ingest", name)
	}
	p := &prepared{
		name:    name,
		content: content,
		doc: Doc{
			ID:     docID(dp, data),
			Path:   dp,
			Title:  documentTitle(base, content),
			Source: name,
			Bytes:  len(content),
		},
	}
	p.chunks = SplitChunks(content, MaxChunkRunes)
	if len(p.chunks) == 0 {
		return nil, fmt.Errorf("%s has no text to index", name)
	}
	p.doc.Chunks = len(p.chunks)
	p.index = make([]indexRow, len(p.chunks))
	docTokens := indexTokens(p.doc.Title)
	headingTokens := map[string]string{}
	for i, c := range p.chunks {
		ht, ok := headingTokens[c.Heading]
		if !ok {
			ht = indexTokens(ownHeading(c.Heading, p.doc.Title))
			headingTokens[c.Heading] = ht
		}
		p.index[i] = indexRow{doc: docTokens, heading: ht, body: indexTokens(c.Text)}
	}
	return p, nil
}

// prepare is prepareFile followed by the ingest check, if the KB has one.
func (k *KB) prepare(f File) (*prepared, error) {
	p, err := prepareFile(f)
	if err != nil || k.check == nil {
		return p, err
	}
	texts := make([]string, len(p.chunks))
	for i, c := range p.chunks {
		texts[i] = c.Indexed()
	}
	if err := k.check(p.name, texts); err != nil {
		return nil, fmt.Errorf("%s was refused: %w", p.name, err)
	}
	return p, nil
}

func firstInvalid(data []byte) int {
	for i := 0; i < len(data); {
		r, w := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && w == 1 {
			return i
		}
		i += w
	}
	return -1
}

// documentTitle is the first Markdown heading of a .md file, else the file
// name without its extension.
func documentTitle(base, content string) string {
	if ext := strings.ToLower(filepath.Ext(base)); ext == ".md" || ext == ".markdown" {
		fence := false
		for line := range strings.SplitSeq(content, "\n") {
			t := strings.TrimSpace(line)
			if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
				fence = !fence
				continue
			}
			if fence {
				continue
			}
			if level, title := headingLevel(line); level > 0 {
				return title
			}
		}
	}
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// Ingest adds a document (a .md or .txt file's content) to the knowledge
// base under name, its path relative to the directory it is ingested from
// ("guides/readme.md"; see File). Documents are identified by that path:
// the same content again is a no-op (StatusUnchanged), other content under
// the same path from the same source replaces the old document and its
// chunks in one transaction, and other content from another source is
// refused with a *ConflictError. Empty, whitespace-only, binary and non-UTF-8 content is
// refused with an error naming the file.
func (k *KB) Ingest(ctx context.Context, name string, data []byte) (IngestResult, error) {
	p, err := k.prepare(File{Name: name, Data: data})
	if err != nil {
		return IngestResult{}, err
	}
	var res IngestResult
	err = k.st.Tx(ctx, func(tx *sql.Tx) error {
		it, err := k.ingestTx(ctx, tx)
		if err != nil {
			return err
		}
		if res, err = it.storePrepared(ctx, p, time.Now()); err != nil || res.Status == StatusUnchanged {
			return err
		}
		return k.st.Notify(ctx, tx, ChangeChannel)
	})
	var conflict *ConflictError
	if errors.As(err, &conflict) {
		return IngestResult{}, err // it names the file already
	}
	if err != nil {
		return IngestResult{}, fmt.Errorf("ingest %s: %w", name, err)
	}
	return res, nil
}

// File is a document to ingest.
type File struct {
	// Name is the document's path relative to the directory it is ingested
	// from (the ingest root), with / or the system's separator:
	// "guides/readme.md". It identifies the document, so two files of the
	// same name in different folders are two documents. It may not be
	// absolute or lead out of the root.
	Name string
	Data []byte
	// Source is where the file was read from, as the user named it
	// ("docs/guides/readme.md"). It is recorded as Doc.Source and named in
	// errors; empty means Name.
	Source string
}

// BatchFiles and BatchBytes are where a bulk ingest (`agentapp kb ingest
// DIR`) cuts its files into IngestBatch calls: at BatchFiles files or once
// the batch holds BatchBytes bytes, whichever comes first. The byte bound
// caps the memory a batch holds; the file bound how many files one failed
// transaction takes with it.
const (
	BatchFiles = 32
	BatchBytes = 4 << 20
)

// IngestBatch ingests several files with one write transaction for all of
// them, which is several times faster than one Ingest per file when the
// files are small (each transaction also writes a new index segment). The
// results and errors are per file, in order: a file that fails the checks
// of Ingest (empty, binary, not UTF-8…) gets its error and the others are
// still stored. If the transaction itself fails, no file of the batch is
// stored and every file that passed the checks gets that error.
func (k *KB) IngestBatch(ctx context.Context, files []File) ([]IngestResult, []error) {
	results := make([]IngestResult, len(files))
	errs := make([]error, len(files))
	preps := make([]*prepared, len(files))
	for i, f := range files {
		preps[i], errs[i] = k.prepare(f)
	}
	now := time.Now()
	err := k.st.Tx(ctx, func(tx *sql.Tx) error {
		it, err := k.ingestTx(ctx, tx)
		if err != nil {
			return err
		}
		for i, p := range preps {
			if p == nil {
				continue
			}
			res, err := it.storePrepared(ctx, p, now)
			if errors.Is(err, ErrConflict) {
				// This file alone is refused; the batch goes on.
				errs[i], preps[i] = err, nil
				continue
			}
			if err != nil {
				return fmt.Errorf("ingest %s: %w", p.name, err)
			}
			results[i] = res
		}
		return k.st.Notify(ctx, tx, ChangeChannel)
	})
	if err != nil {
		for i, p := range preps {
			if p != nil {
				results[i], errs[i] = IngestResult{}, err
			}
		}
	}
	return results, errs
}

// The statements of an ingest, prepared once per KB (see ingestStmts).
const (
	sqlDocByName   = `SELECT id, name_is_path, source FROM kb_documents WHERE name = ?`
	sqlInsertDoc   = `INSERT INTO kb_documents (id, name, title, source, bytes, chunks, content, ingested_at, name_is_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)`
	sqlInsertChunk = `INSERT INTO kb_chunks (doc_id, seq, heading, text) VALUES (?, ?, ?, ?)`
	sqlInsertIndex = `INSERT INTO kb_fts (rowid, doc, heading, body) VALUES (?, ?, ?, ?)`
)

// ingestStmts are the ingest statements prepared on the database.
type ingestStmts struct {
	docByName, insertDoc, insertChunk, insertIndex *sql.Stmt
}

// ingestStatements returns the KB's ingest statements, preparing them on
// first use. A failed preparation is not cached: the next ingest tries again.
func (k *KB) ingestStatements(ctx context.Context) (*ingestStmts, error) {
	k.stmtMu.Lock()
	defer k.stmtMu.Unlock()
	if k.stmts != nil {
		return k.stmts, nil
	}
	s := &ingestStmts{}
	insertChunk, insertIndex := sqlInsertChunk, sqlInsertIndex
	if k.st.Dialect() == store.Postgres {
		insertChunk, insertIndex = sqlInsertChunkPG, sqlInsertPostingsPG
	}
	for _, q := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&s.docByName, sqlDocByName},
		{&s.insertDoc, sqlInsertDoc},
		{&s.insertChunk, insertChunk},
		{&s.insertIndex, insertIndex},
	} {
		st, err := k.st.DB.PrepareContext(ctx, q.sql)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("prepare the ingest statements: %w", err)
		}
		*q.dst = st
	}
	k.stmts = s
	return s, nil
}

func (s *ingestStmts) close() {
	for _, st := range []*sql.Stmt{s.docByName, s.insertDoc, s.insertChunk, s.insertIndex} {
		if st != nil {
			st.Close()
		}
	}
}

// ingestTx is one write transaction of ingests with the ingest statements
// bound to it: database/sql prepares each once per pooled connection, so
// later transactions on that connection reuse them.
type ingestTx struct {
	tx                                             *sql.Tx
	docByName, insertDoc, insertChunk, insertIndex *sql.Stmt
	postgres                                       bool
}

// ingestTx binds the KB's ingest statements to tx.
func (k *KB) ingestTx(ctx context.Context, tx *sql.Tx) (*ingestTx, error) {
	s, err := k.ingestStatements(ctx)
	if err != nil {
		return nil, err
	}
	return &ingestTx{
		tx:          tx,
		docByName:   tx.StmtContext(ctx, s.docByName),
		insertDoc:   tx.StmtContext(ctx, s.insertDoc),
		insertChunk: tx.StmtContext(ctx, s.insertChunk),
		insertIndex: tx.StmtContext(ctx, s.insertIndex),
		postgres:    k.st.Dialect() == store.Postgres,
	}, nil
}

// previous returns the id of the stored document that an ingest of p
// replaces or keeps, or "" if there is none: the document with that path,
// else an old-style document (stored under its file name alone by an older
// version) ingested from a file whose path ends with p.
// isPath is false for an old-style document.
// source is the file the stored document was ingested from.
func (it *ingestTx) previous(ctx context.Context, p string) (id string, isPath bool, source string, err error) {
	err = it.docByName.QueryRowContext(ctx, p).Scan(&id, &isPath, &source)
	if err == nil || !errors.Is(err, sql.ErrNoRows) {
		return id, isPath, source, err
	}
	base := path.Base(p)
	if base == p {
		return "", false, "", nil
	}
	err = it.docByName.QueryRowContext(ctx, base).Scan(&id, &isPath, &source)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, "", nil
	case err != nil:
		return "", false, "", err
	case isPath || !sourceEndsWith(source, p):
		return "", false, "", nil
	}
	return id, false, source, nil
}

// demoIDs are the ids of the demo FAQ's documents as SeedDemo stores them.
// Such a document, unchanged, came from no file of the user's: a file of
// theirs with its path (their own returns.md) replaces it.
var demoIDs = sync.OnceValue(func() map[string]bool {
	files, _ := DemoFiles()
	ids := make(map[string]bool, len(files))
	for name, data := range files {
		ids[docID(name, data)] = true
	}
	return ids
})

// ErrConflict is wrapped by the error of an ingest refused because another
// file already holds the document's path; test for it with errors.Is.
var ErrConflict = errors.New("document path taken by another file")

// ConflictError is the error for a file whose document path is held by a
// document ingested from another file. A document is replaced only by a new
// version of the file it came from, so that ingesting two folders one after
// the other (each with a readme.md) never loses the first folder's document.
// It matches ErrConflict.
type ConflictError struct {
	// Path is the document path both files have.
	Path string
	// ID and Source are the stored document's id and the file it came from.
	ID, Source string
	// NewSource is the file that was not ingested.
	NewSource string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s: not ingested: its document path %s is taken by %s, ingested from %s, and a document is replaced only by a new version of the same file",
		e.NewSource, e.Path, e.ID, e.Source)
}

func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// sameSource reports whether two sources name the same file: equal once
// cleaned, or equal as absolute paths (./docs/a.md and docs/a.md, or a
// relative and an absolute name given from the same directory).
func sameSource(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}

// storePrepared writes a prepared document inside the transaction,
// replacing an older version with the same path.
func (it *ingestTx) storePrepared(ctx context.Context, p *prepared, now time.Time) (IngestResult, error) {
	tx := it.tx
	if it.postgres {
		// Two replicas ingesting one path at once would both find no
		// previous version and the second fail on the unique name; the
		// lock (released at commit) makes the second see the first's.
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(?, 1))`, p.doc.Path); err != nil {
			return IngestResult{}, err
		}
	}
	oldID, isPath, oldSource, err := it.previous(ctx, p.doc.Path)
	switch {
	case err != nil:
		return IngestResult{}, err
	case oldID == "":
	case oldID != p.doc.ID && isPath && !sameSource(oldSource, p.doc.Source) && !demoIDs()[oldID]:
		// Another file with the same path (readme.md of kbdocs/hr, then of
		// kbdocs/it): replacing it would lose the first one without a word.
		return IngestResult{}, &ConflictError{Path: p.doc.Path, ID: oldID, Source: oldSource, NewSource: p.doc.Source}
	case oldID == p.doc.ID:
		if !isPath {
			// An old-style row of a file at the top of its root: same id,
			// same content; from now on its name is its path.
			if _, err := tx.ExecContext(ctx, `UPDATE kb_documents SET name_is_path = 1 WHERE id = ?`, oldID); err != nil {
				return IngestResult{}, err
			}
		}
		d, err := scanDoc(tx.QueryRowContext(ctx, `SELECT `+docColumns+` FROM kb_documents WHERE id = ?`, oldID))
		if err != nil {
			return IngestResult{}, err
		}
		return IngestResult{Doc: d, Status: StatusUnchanged}, nil
	default:
		if err := removeDoc(ctx, tx, oldID); err != nil {
			return IngestResult{}, err
		}
	}
	d := p.doc
	d.IngestedAt = now.UTC()
	if _, err := it.insertDoc.ExecContext(ctx,
		d.ID, d.Path, d.Title, d.Source, d.Bytes, d.Chunks, p.content, d.IngestedAt.Format(time.RFC3339Nano)); err != nil {
		return IngestResult{}, err
	}
	for i, c := range p.chunks {
		if it.postgres {
			ix := p.index[i]
			toks, cols := pgTokens(ix)
			var id int64
			if err := it.insertChunk.QueryRowContext(ctx, d.ID, i, c.Heading, c.Text, len(toks)).Scan(&id); err != nil {
				return IngestResult{}, err
			}
			if _, err := it.insertIndex.ExecContext(ctx, id, toks, cols); err != nil {
				return IngestResult{}, err
			}
			continue
		}
		r, err := it.insertChunk.ExecContext(ctx, d.ID, i, c.Heading, c.Text)
		if err != nil {
			return IngestResult{}, err
		}
		rowid, err := r.LastInsertId()
		if err != nil {
			return IngestResult{}, err
		}
		ix := p.index[i]
		if _, err := it.insertIndex.ExecContext(ctx, rowid, ix.doc, ix.heading, ix.body); err != nil {
			return IngestResult{}, err
		}
	}
	res := IngestResult{Doc: d, Status: StatusAdded}
	if oldID != "" {
		res.Status, res.ReplacedID = StatusReplaced, oldID
	}
	return res, nil
}
