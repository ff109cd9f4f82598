package kb

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/store/storetest"
)

// newTestKB opens an empty knowledge base in a fresh temporary database
// on the test backend (storetest.Backend).
func newTestKB(t testing.TB) (*KB, *store.Store) {
	t.Helper()
	st := storetest.Open(t)
	k, err := Open(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return k, st
}

// ingestCorpus ingests every file of testdata/corpus (the ingest root) and
// returns the doc id of each file name.
func ingestCorpus(t testing.TB, k *KB) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test corpus: %v", err)
	}
	ids := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		res, err := k.Ingest(context.Background(), filepath.Base(f), data)
		if err != nil {
			t.Fatal(err)
		}
		ids[filepath.Base(f)] = res.Doc.ID
	}
	return ids
}
