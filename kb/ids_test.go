package kb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/store"
	"github.com/google/go-cmp/cmp"
)

// hash8 is the content part of a document id.
func hash8(data string) string {
	sum := sha256.Sum256([]byte(data))
	return hex.EncodeToString(sum[:4])
}

// statuses returns the outcome of each file of a batch, or its error.
func statuses(results []IngestResult, errs []error) []string {
	out := make([]string, len(results))
	for i := range results {
		if errs[i] != nil {
			out[i] = "error: " + errs[i].Error()
		} else {
			out[i] = string(results[i].Status)
		}
	}
	return out
}

// TestIngestSameFileNameInTwoFoldersKeepsBoth: two readme.md files under
// different folders of one ingest root are two documents, not one document
// replaced by the other.
func TestIngestSameFileNameInTwoFoldersKeepsBoth(t *testing.T) {
	ctx := context.Background()
	k, _ := newTestKB(t)
	files := []File{
		{Name: "a/readme.md", Data: []byte("# Alpha\n\nAlpha talks about otters.")},
		{Name: "b/readme.md", Data: []byte("# Beta\n\nBeta talks about herons.")},
	}
	results, errs := k.IngestBatch(ctx, files)
	if diff := cmp.Diff([]string{"added", "added"}, statuses(results, errs)); diff != "" {
		t.Fatalf("outcomes (-want +got):\n%s", diff)
	}
	docs, err := k.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.ID)
	}
	want := []string{"a~readme.md-" + hash8(string(files[0].Data)), "b~readme.md-" + hash8(string(files[1].Data))}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("document ids (-want +got):\n%s", diff)
	}
	for _, q := range []string{"otters", "herons"} {
		if hits, err := k.Search(ctx, q, 5); err != nil || len(hits) != 1 {
			t.Errorf("Search(%q) = %v, %v; want one hit", q, hits, err)
		}
	}
}

// TestReingestUnchangedTreeIsNoOp: ingesting the same tree again changes
// nothing and says so for every file.
func TestReingestUnchangedTreeIsNoOp(t *testing.T) {
	ctx := context.Background()
	k, _ := newTestKB(t)
	files := []File{
		{Name: "a/readme.md", Data: []byte("# Alpha\n\nfirst")},
		{Name: "b/readme.md", Data: []byte("# Beta\n\nsecond")},
		{Name: "readme.md", Data: []byte("# Top\n\nthird")},
	}
	if _, errs := k.IngestBatch(ctx, files); errs[0] != nil || errs[1] != nil || errs[2] != nil {
		t.Fatal(errs)
	}
	before, _ := k.List(ctx)
	for round := range 2 {
		results, errs := k.IngestBatch(ctx, files)
		if diff := cmp.Diff([]string{"unchanged", "unchanged", "unchanged"}, statuses(results, errs)); diff != "" {
			t.Fatalf("re-ingest %d (-want +got):\n%s", round+1, diff)
		}
	}
	after, _ := k.List(ctx)
	if diff := cmp.Diff(before, after); diff != "" || len(after) != 3 {
		t.Errorf("documents changed by an unchanged re-ingest (-before +after):\n%s", diff)
	}
}

// TestIngestChangedContentUnderSamePathReplaces: new content under a
// nested path replaces that document only.
func TestIngestChangedContentUnderSamePathReplaces(t *testing.T) {
	ctx := context.Background()
	k, _ := newTestKB(t)
	results, errs := k.IngestBatch(ctx, []File{
		{Name: "a/readme.md", Data: []byte("old alpha text about zebras")},
		{Name: "b/readme.md", Data: []byte("beta text")},
	})
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	newer, err := k.Ingest(ctx, "a/readme.md", []byte("new alpha text about giraffes"))
	if err != nil {
		t.Fatal(err)
	}
	if newer.Status != StatusReplaced || newer.ReplacedID != results[0].Doc.ID {
		t.Fatalf("changed a/readme.md = %+v, want replaced %s", newer, results[0].Doc.ID)
	}
	docs, _ := k.List(ctx)
	if len(docs) != 2 {
		t.Errorf("%d documents after replacing one of two, want 2: %+v", len(docs), docs)
	}
	if hits, _ := k.Search(ctx, "zebras", 5); len(hits) != 0 {
		t.Errorf("the old version is still found: %+v", hits)
	}
}

// insertOldStyleDoc stores a document the way agentapp did before documents
// were identified by their path: keyed by file name, with the id
// "<file name>-<8 hex of the content hash>", the source as given.
func insertOldStyleDoc(t *testing.T, st *store.Store, source, data string) string {
	t.Helper()
	base := path.Base(source)
	p, err := prepare(base, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	id := base + "-" + hash8(data)
	if _, err := st.DB.Exec(`INSERT INTO kb_documents (id, name, title, source, bytes, chunks, content, ingested_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		id, base, p.doc.Title, source, len(p.content), len(p.chunks), p.content, time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
		t.Fatal(err)
	}
	for i, c := range p.chunks {
		insertChunkRow(t, st, id, i, c.Heading, c.Text, p.index[i])
	}
	return id
}

// insertChunkRow stores a chunk and its index entry the way the store's
// backend keeps them, and returns the chunk's id.
func insertChunkRow(t testing.TB, st *store.Store, docID string, seq int, heading, text string, ix indexRow) int64 {
	t.Helper()
	if st.Dialect() == store.Postgres {
		toks, cols := pgTokens(ix)
		var id int64
		if err := st.DB.QueryRow(sqlInsertChunkPG, docID, seq, heading, text, len(toks)).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if _, err := st.DB.Exec(sqlInsertPostingsPG, id, toks, cols); err != nil {
			t.Fatal(err)
		}
		return id
	}
	r, err := st.DB.Exec(`INSERT INTO kb_chunks (doc_id, seq, heading, text) VALUES (?, ?, ?, ?)`, docID, seq, heading, text)
	if err != nil {
		t.Fatal(err)
	}
	rowid, _ := r.LastInsertId()
	if _, err := st.DB.Exec(`INSERT INTO kb_fts (rowid, doc, heading, body) VALUES (?, ?, ?, ?)`, rowid, ix.doc, ix.heading, ix.body); err != nil {
		t.Fatal(err)
	}
	return rowid
}

// reindexChunk replaces a chunk's index entry, on either backend.
func reindexChunk(t testing.TB, st *store.Store, id int64, ix indexRow) {
	t.Helper()
	if st.Dialect() == store.Postgres {
		toks, cols := pgTokens(ix)
		if _, err := st.DB.Exec(`DELETE FROM kb_postings WHERE chunk_id = ?`, id); err != nil {
			t.Fatal(err)
		}
		if _, err := st.DB.Exec(`UPDATE kb_chunks SET tokens = ? WHERE id = ?`, len(toks), id); err != nil {
			t.Fatal(err)
		}
		if _, err := st.DB.Exec(sqlInsertPostingsPG, id, toks, cols); err != nil {
			t.Fatal(err)
		}
		return
	}
	if _, err := st.DB.Exec(`DELETE FROM kb_fts WHERE rowid = ?`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB.Exec(`INSERT INTO kb_fts (rowid, doc, heading, body) VALUES (?, ?, ?, ?)`, id, ix.doc, ix.heading, ix.body); err != nil {
		t.Fatal(err)
	}
}

// failChunkInserts makes every insert of a chunk whose text contains word
// fail with "injected failure", on either backend.
func failChunkInserts(t testing.TB, st *store.Store, word string) {
	t.Helper()
	stmts := []string{`CREATE TRIGGER fail_chunk BEFORE INSERT ON kb_chunks
		WHEN NEW.text LIKE '%` + word + `%' BEGIN SELECT RAISE(ABORT, 'injected failure'); END`}
	if st.Dialect() == store.Postgres {
		stmts = []string{`CREATE FUNCTION fail_chunk() RETURNS trigger LANGUAGE plpgsql AS $f$
			BEGIN
				IF NEW.text LIKE '%` + word + `%' THEN RAISE EXCEPTION 'injected failure'; END IF;
				RETURN NEW;
			END $f$`,
			`CREATE TRIGGER fail_chunk BEFORE INSERT ON kb_chunks FOR EACH ROW EXECUTE FUNCTION fail_chunk()`}
	}
	for _, q := range stmts {
		if _, err := st.DB.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOldStyleDocumentsAreKeptAndAdopted: a knowledge base written before
// documents were identified by path keeps its ids readable and removable,
// and re-ingesting the file an old document came from replaces it instead
// of adding a second copy.
func TestOldStyleDocumentsAreKeptAndAdopted(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// The schema as released before the path column existed.
	if err := st.Migrate(ctx, "kb", migrations[:6]); err != nil {
		t.Fatal(err)
	}
	const alpha, gamma = "# Alpha\n\nAlpha talks about otters.", "# Gamma\n\nGamma talks about lynxes."
	oldAlpha := insertOldStyleDoc(t, st, "d/a/readme.md", alpha)
	oldGamma := insertOldStyleDoc(t, st, "d/c/guide.md", gamma)
	oldTop := insertOldStyleDoc(t, st, "d/top.md", "# Top\n\nat the root")

	k, err := Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if _, text, err := k.Text(ctx, oldGamma); err != nil || text != gamma {
		t.Fatalf("old id %s unreadable after the upgrade: %q, %v", oldGamma, text, err)
	}

	// The same tree ingested again from d: a/readme.md and c/guide.md take
	// over their old documents, b/readme.md is new, top.md is unchanged.
	results, errs := k.IngestBatch(ctx, []File{
		{Name: "a/readme.md", Data: []byte(alpha), Source: "d/a/readme.md"},
		{Name: "b/readme.md", Data: []byte("# Beta\n\nBeta talks about herons."), Source: "d/b/readme.md"},
		{Name: "top.md", Data: []byte("# Top\n\nat the root"), Source: "d/top.md"},
	})
	if diff := cmp.Diff([]string{"replaced", "added", "unchanged"}, statuses(results, errs)); diff != "" {
		t.Fatalf("outcomes (-want +got):\n%s", diff)
	}
	if results[0].ReplacedID != oldAlpha || results[0].Doc.ID != "a~readme.md-"+hash8(alpha) {
		t.Errorf("a/readme.md = %+v, want it to replace the old %s", results[0], oldAlpha)
	}
	if results[2].Doc.ID != oldTop {
		t.Errorf("top.md has id %s, want the old id %s (a file at the root keeps its id)", results[2].Doc.ID, oldTop)
	}
	docs, _ := k.List(ctx)
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.ID)
	}
	want := []string{"a~readme.md-" + hash8(alpha), "b~readme.md-" + hash8("# Beta\n\nBeta talks about herons."), oldGamma, oldTop}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("documents after re-ingesting (-want +got):\n%s", diff)
	}
	if hits, _ := k.Search(ctx, "otters", 5); len(hits) != 1 {
		t.Errorf("otters found in %d chunks, want 1 (no duplicate)", len(hits))
	}
	// An old id the new ingest did not touch is still removable.
	if err := k.Remove(ctx, oldGamma); err != nil {
		t.Errorf("Remove(%s) = %v", oldGamma, err)
	}
	if strings.Contains(oldGamma, "~") {
		t.Fatal("bad test: the old-style id should have no folder in it")
	}
}

// TestPathSlugNeverMergesTwoPaths: the id of a path cannot be the id of
// another path with the same content, whatever characters the names use.
func TestPathSlugNeverMergesTwoPaths(t *testing.T) {
	paths := []string{"a/b.md", "a~b.md", "a%7Eb.md", "a%257Eb.md", "a/~b.md", "a~/b.md", "a%/b.md", "a/%b.md", "b.md", "a-b.md"}
	seen := map[string]string{}
	for _, p := range paths {
		s := pathSlug(p)
		if q, ok := seen[s]; ok {
			t.Errorf("pathSlug(%q) = pathSlug(%q) = %q", p, q, s)
		}
		seen[s] = p
		if strings.Contains(s, "/") {
			t.Errorf("pathSlug(%q) = %q keeps a slash (ids must fit one URI segment)", p, s)
		}
	}
	if got := pathSlug("guides/readme.md"); got != "guides~readme.md" {
		t.Errorf("pathSlug(guides/readme.md) = %q", got)
	}
	if got := pathSlug("报销 政策.md"); got != "报销 政策.md" {
		t.Errorf("a plain file name changed: %q", got)
	}
}

func TestIngestRefusesPathsOutsideTheRoot(t *testing.T) {
	ctx := context.Background()
	k, _ := newTestKB(t)
	for name, want := range map[string]string{
		"/etc/motd.md":     "not by an absolute path",
		"../outside.md":    "points outside it",
		"a/../../x.md":     "points outside it",
		".":                "needs a file name",
		"":                 "needs a file name",
		"./docs/../ok.txt": "",
	} {
		_, err := k.Ingest(ctx, name, []byte("text"))
		if want == "" {
			if err != nil {
				t.Errorf("Ingest(%q) = %v, want it stored as ok.txt", name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Ingest(%q) error = %v, want one saying %q", name, err, want)
		}
	}
	if d, err := k.Resolve(ctx, "ok.txt"); err != nil || d.Path != "ok.txt" {
		t.Errorf("./docs/../ok.txt stored as %+v, %v; want path ok.txt", d, err)
	}
}

func TestResolve(t *testing.T) {
	ctx := context.Background()
	k, st := newTestKB(t)
	old := insertOldStyleDoc(t, st, "old/legacy.md", "# Legacy\n\nold text")
	results, errs := k.IngestBatch(ctx, []File{
		{Name: "a/readme.md", Data: []byte("alpha readme"), Source: "docs/a/readme.md"},
		{Name: "a/notes.md", Data: []byte("alpha notes"), Source: "docs/a/notes.md"},
		{Name: "b/readme.md", Data: []byte("beta readme"), Source: "docs/b/readme.md"},
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	aReadme, aNotes, bReadme := results[0].Doc.ID, results[1].Doc.ID, results[2].Doc.ID
	for ref, want := range map[string]string{
		aReadme:            aReadme, // the id
		"a/readme.md":      aReadme, // the path
		"./a//readme.md":   aReadme, // the path, untidy
		"docs/b/readme.md": bReadme, // the file it came from
		"b~":               bReadme, // a unique start of the id
		"a~n":              aNotes,
		old:                old, // an old-style id
		"legacy.md":        old, // an old-style document's path is its file name
		"old/legacy.md":    old, // and its source
		old[:len(old)-3]:   old,
	} {
		d, err := k.Resolve(ctx, ref)
		if err != nil || d.ID != want {
			t.Errorf("Resolve(%q) = %s, %v; want %s", ref, d.ID, err, want)
		}
	}
	_, err := k.Resolve(ctx, "a~")
	var ae *AmbiguousError
	if !errors.As(err, &ae) || !errors.Is(err, ErrAmbiguous) || !cmp.Equal(ae.IDs, []string{aNotes, aReadme}) {
		t.Errorf("Resolve(a~) = %v; want an ambiguity between %s and %s", err, aNotes, aReadme)
	} else if want := `"a~" matches 2 documents: ` + aNotes + ", " + aReadme; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	for _, ref := range []string{"", "c/readme.md", "zzz", "a~readme.md-00000000"} {
		if _, err := k.Resolve(ctx, ref); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), fmt.Sprintf("%q", ref)) {
			t.Errorf("Resolve(%q) = %v, want ErrNotFound naming it", ref, err)
		}
	}
	// An id start matching more than maxCandidates documents lists some.
	var many []File
	for i := range maxCandidates + 2 {
		many = append(many, File{Name: fmt.Sprintf("many/%02d.md", i), Data: []byte(fmt.Sprint("doc ", i))})
	}
	k.IngestBatch(ctx, many)
	if _, err := k.Resolve(ctx, "many~"); !errors.As(err, &ae) || len(ae.IDs) != maxCandidates || ae.More != 2 ||
		!strings.Contains(err.Error(), "matches 12 documents") || !strings.Contains(err.Error(), "and 2 more") {
		t.Errorf("Resolve(many~) = %v", err)
	}
}
