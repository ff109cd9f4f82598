// Package kb is the company knowledge base: Markdown and text documents cut
// into chunks and indexed for full-text search in SQLite (FTS5, BM25
// ranking), or on PostgreSQL in an index of its own with the same tokens
// and ranking (see postgres.go), searched by the assistant through the
// searchKnowledgeBase tool.
//
// Chinese has no spaces between words, so the index does not rely on the
// tokenizer to find words: every chunk is pre-tokenised in Go into CJK
// bigrams and lower-cased Latin words, and FTS5's ascii tokenizer with the
// Porter stemmer only splits those on spaces.
// The document title and the chunk's section heading are indexed in columns
// of their own, so BM25 can weigh a heading match above a passing mention.
// Queries are tokenised the same way and every term is quoted, so user text
// never reaches FTS5 as query syntax.
package kb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentapp/agentapp/store"
)

// ErrNotFound is wrapped by the error for a document id that is not in the
// knowledge base; test for it with errors.Is.
var ErrNotFound = errors.New("document not found")

// notFoundError names the unknown id and matches ErrNotFound. ref is set
// when the id was a reference to resolve (an id, its start or a path).
type notFoundError struct {
	id  string
	ref bool
}

func (e *notFoundError) Error() string {
	if e.ref {
		return fmt.Sprintf("no document in the knowledge base has the id, path or id start %q", e.id)
	}
	return fmt.Sprintf("no document with id %q in the knowledge base", e.id)
}

func (e *notFoundError) Is(target error) bool { return target == ErrNotFound }

// ChangeChannel is the PostgreSQL notification channel on which every
// committed ingest and removal is announced (store.Notify), so that MCP
// servers of every replica can tell their clients (store.Listen).
const ChangeChannel = "agentapp_kb_changed"

// Doc describes one ingested document.
type Doc struct {
	// ID is Path with "/" written as "~", a dash and the first 8 hex
	// digits of the content's SHA-256: "guides~readme.md-1a2b3c4d" (see
	// docID). It changes when the content does.
	ID string `json:"id"`
	// Path identifies the document: its path relative to the directory it
	// was ingested from, slash-separated ("guides/readme.md"). Ingesting
	// the same path again keeps or replaces the document. Documents stored
	// before paths identified them have their file name here.
	Path string `json:"path"`
	// Title is the document's first Markdown heading, else its file name.
	Title string `json:"title"`
	// Source is the name the document was ingested under (usually a path).
	Source string `json:"source"`
	// Chunks is the number of indexed chunks.
	Chunks int `json:"chunks"`
	// Bytes is the size of the document text in bytes.
	Bytes int `json:"bytes"`
	// IngestedAt is when this version of the document was ingested.
	IngestedAt time.Time `json:"ingestedAt"`
}

// KB is a knowledge base stored in an agentapp database. It is safe for
// concurrent use, also by several processes sharing the database.
type KB struct {
	st     *store.Store
	check  func(name string, chunks []string) error
	logger *slog.Logger

	// stmtMu guards stmts, the ingest statements prepared once on first
	// use (database/sql then prepares each on a pooled connection once and
	// reuses it), so an ingest does not parse its SQL again every time.
	stmtMu sync.Mutex
	stmts  *ingestStmts
}

// Option configures a KB at Open.
type Option func(*KB)

// WithIngestCheck makes Ingest and IngestBatch refuse a document when check
// returns an error for its name and chunks (the guards use it to keep
// prompt-injection phrases out of the knowledge base). It gets each
// chunk's Chunk.Indexed text, in document order, so that it scans exactly
// what the index holds and can name the chunk `kb show` would show. The refusal names the file
// and wraps check's error.
func WithIngestCheck(check func(name string, chunks []string) error) Option {
	return func(k *KB) { k.check = check }
}

// WithLogger sets the logger for what the knowledge base reports on its
// own, such as SeedDemo seeding the demo FAQ. Without it, or with nil, those
// records are discarded.
func WithLogger(l *slog.Logger) Option {
	return func(k *KB) { k.logger = l }
}

// migrations is the kb component's schema. Released steps are never edited;
// new ones are appended.
var migrations = []string{
	`CREATE TABLE kb_documents (
		id          TEXT PRIMARY KEY,
		name        TEXT NOT NULL UNIQUE,
		title       TEXT NOT NULL,
		source      TEXT NOT NULL,
		bytes       INTEGER NOT NULL,
		chunks      INTEGER NOT NULL,
		content     TEXT NOT NULL,
		ingested_at TEXT NOT NULL
	)`,
	`CREATE TABLE kb_chunks (
		id      INTEGER PRIMARY KEY,
		doc_id  TEXT NOT NULL REFERENCES kb_documents(id) ON DELETE CASCADE,
		seq     INTEGER NOT NULL,
		heading TEXT NOT NULL,
		text    TEXT NOT NULL,
		UNIQUE (doc_id, seq)
	)`,
	// The index holds only tokens (contentless); chunk text lives in
	// kb_chunks under the same rowid. contentless_delete lets rows go. The
	// tokens are made in Go (indexTokens), so the fast ascii tokenizer only
	// splits them on spaces; porter stems the English ones.
	`CREATE VIRTUAL TABLE kb_fts USING fts5(
		doc, heading, body,
		content = '', contentless_delete = 1,
		tokenize = 'porter ascii'
	)`,
	// Merge index segments lazily while ingesting (faster writes); bulk
	// ingestion ends with Optimize, which merges them all.
	`INSERT INTO kb_fts (kb_fts, rank) VALUES ('automerge', 16)`,
	`CREATE TRIGGER kb_chunks_ad AFTER DELETE ON kb_chunks BEGIN
		DELETE FROM kb_fts WHERE rowid = old.id;
	END`,
	`CREATE TABLE kb_seeded (name TEXT PRIMARY KEY, seeded_at TEXT NOT NULL)`,
	// name_is_path is 1 when name is the document's path in its ingest
	// root and 0 for rows that store the file name alone (written by older
	// versions), which an ingest of the same file under its path takes
	// over instead of duplicating (see ingestTx.previous).
	`ALTER TABLE kb_documents ADD COLUMN name_is_path INTEGER NOT NULL DEFAULT 0`,
}

// Open prepares the knowledge-base tables in st (creating them on first
// use) and returns the knowledge base. It does not seed the demo FAQ; call
// SeedDemo for that.
func Open(ctx context.Context, st *store.Store, opts ...Option) (*KB, error) {
	if st == nil || st.DB == nil {
		return nil, errors.New("kb.Open: no database")
	}
	if err := st.MigrateDialect(ctx, "kb", migrations, postgresMigrations); err != nil {
		if st.Dialect() == store.Postgres {
			return nil, fmt.Errorf("prepare the knowledge base tables: %w", err)
		}
		return nil, fmt.Errorf("prepare the knowledge base tables: %w (the SQLite build needs FTS5)", err)
	}
	k := &KB{st: st}
	for _, o := range opts {
		o(k)
	}
	if k.logger == nil {
		k.logger = slog.New(slog.DiscardHandler)
	}
	return k, nil
}

const docColumns = `id, name, title, source, chunks, bytes, ingested_at`

type rowScanner interface{ Scan(...any) error }

func scanDoc(r rowScanner) (Doc, error) {
	var d Doc
	var at string
	if err := r.Scan(&d.ID, &d.Path, &d.Title, &d.Source, &d.Chunks, &d.Bytes, &at); err != nil {
		return Doc{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return Doc{}, fmt.Errorf("document %s has a bad ingestion time %q: %w", d.ID, at, err)
	}
	d.IngestedAt = t
	return d, nil
}

// List returns all documents ordered by title, then id.
func (k *KB) List(ctx context.Context) ([]Doc, error) {
	rows, err := k.st.DB.QueryContext(ctx, `SELECT `+docColumns+` FROM kb_documents ORDER BY title, id`)
	if err != nil {
		return nil, fmt.Errorf("list documents: %w", err)
	}
	defer rows.Close()
	docs := []Doc{}
	for rows.Next() {
		d, err := scanDoc(rows)
		if err != nil {
			return nil, fmt.Errorf("list documents: %w", err)
		}
		docs = append(docs, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list documents: %w", err)
	}
	return docs, nil
}

// Get returns the document with the given id, or an error wrapping
// ErrNotFound that names the id.
func (k *KB) Get(ctx context.Context, id string) (Doc, error) {
	d, err := scanDoc(k.st.DB.QueryRowContext(ctx, `SELECT `+docColumns+` FROM kb_documents WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Doc{}, &notFoundError{id: id}
	}
	if err != nil {
		return Doc{}, fmt.Errorf("read document %s: %w", id, err)
	}
	return d, nil
}

// Text returns a document and its full text: the text as ingested, with
// line endings normalised to "\n", which the chunks cover in order (Chunks
// returns them with their overlap). An unknown id is an error wrapping
// ErrNotFound.
func (k *KB) Text(ctx context.Context, id string) (Doc, string, error) {
	tx, err := k.st.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Doc{}, "", fmt.Errorf("read document %s: %w", id, err)
	}
	defer tx.Rollback()
	var d Doc
	var at, content string
	err = tx.QueryRowContext(ctx, `SELECT `+docColumns+`, content FROM kb_documents WHERE id = ?`, id).
		Scan(&d.ID, &d.Path, &d.Title, &d.Source, &d.Chunks, &d.Bytes, &at, &content)
	if errors.Is(err, sql.ErrNoRows) {
		return Doc{}, "", &notFoundError{id: id}
	}
	if err != nil {
		return Doc{}, "", fmt.Errorf("read document %s: %w", id, err)
	}
	if d.IngestedAt, err = time.Parse(time.RFC3339Nano, at); err != nil {
		return Doc{}, "", fmt.Errorf("document %s has a bad ingestion time %q: %w", id, at, err)
	}
	return d, content, nil
}

// Chunks returns the text of a document's chunks in order (overlapping
// sentences included), as they are indexed and returned by Search.
func (k *KB) Chunks(ctx context.Context, id string) ([]string, error) {
	if _, err := k.Get(ctx, id); err != nil {
		return nil, err
	}
	rows, err := k.st.DB.QueryContext(ctx, `SELECT text FROM kb_chunks WHERE doc_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("read chunks of %s: %w", id, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("read chunks of %s: %w", id, err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Remove deletes a document, its chunks and their index entries in one
// transaction. An unknown id is an error wrapping ErrNotFound.
func (k *KB) Remove(ctx context.Context, id string) error {
	return k.st.Tx(ctx, func(tx *sql.Tx) error {
		if err := removeDoc(ctx, tx, id); err != nil {
			return err
		}
		return k.st.Notify(ctx, tx, ChangeChannel)
	})
}

// removeDoc deletes a document inside tx. Deleting the chunks first fires
// the trigger that drops their index rows.
func removeDoc(ctx context.Context, tx *sql.Tx, id string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM kb_chunks WHERE doc_id = ?`, id); err != nil {
		return fmt.Errorf("remove chunks of %s: %w", id, err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM kb_documents WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("remove document %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("remove document %s: %w", id, err)
	} else if n == 0 {
		return &notFoundError{id: id}
	}
	return nil
}

// Optimize merges the full-text index into one segment. Ingestion appends
// small segments (merged lazily), and a search reads every segment, so after
// many ingests a search gets several times slower (about 5 ms instead of 1 ms
// at 10,000 chunks); Optimize restores it. It rewrites the whole index (about
// a second per 10,000 chunks), so call it once after a batch of ingests.
//
// On PostgreSQL the index is an ordinary table with nothing to merge, and
// Optimize does nothing.
func (k *KB) Optimize(ctx context.Context) error {
	if k.st.Dialect() == store.Postgres {
		return nil
	}
	return k.st.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO kb_fts (kb_fts) VALUES ('optimize')`); err != nil {
			return fmt.Errorf("optimize the knowledge-base index: %w", err)
		}
		return nil
	})
}

// SchemaVersion is the version of the kb schema this package migrates to,
// for `agentapp db status`.
func SchemaVersion() int { return len(migrations) }
