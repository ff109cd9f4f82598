package kb

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/store/storetest"
)

// TestPostgresRanksLikeSQLite builds the same knowledge base on SQLite
// (FTS5) and on PostgreSQL (kb_postings) and requires the same hits, in
// the same order, with the same BM25 scores, for the labelled queries and
// a few hundred generated ones. The stemmers differ (Porter there,
// Snowball here), so a query whose English words stem differently may
// rank differently; the test allows few such queries and names them.
func TestPostgresRanksLikeSQLite(t *testing.T) {
	ctx := context.Background()
	g := newTextGen(t, 7)
	var gen []File
	for d := range 20 {
		gen = append(gen, File{Name: fmt.Sprintf("gen-%02d.md", d), Data: []byte(g.doc(4, 3))})
	}
	build := func(st *store.Store) *KB {
		k, err := Open(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		if err := k.SeedDemo(ctx); err != nil {
			t.Fatal(err)
		}
		ingestCorpus(t, k)
		if _, errs := k.IngestBatch(ctx, gen); errs != nil {
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		return k
	}
	lite, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	a, b := build(lite), build(storetest.NewPostgres(t).Open())

	queries := append([]string{
		"出差住宿标准是多少？", "年假", "病假", "笔记本电脑", "退货", "发票", "lodging standard", "sick leave",
		"laptop replacement", "refund", "假", "一线城市", "Ｗｉ－Ｆｉ", "VPN 密码", "How long does a refund take?",
	}, benchQueries...)
	_, en := vocabulary(t)
	for i := range 100 {
		queries = append(queries, g.words[g.zipf.Uint64()]+g.words[g.zipf.Uint64()], en[i*7%len(en)])
	}
	differ, withHits := 0, 0
	for _, q := range queries {
		want, err := a.Search(ctx, q, MaxK)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.Search(ctx, q, MaxK)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) > 0 {
			withHits++
		}
		same := len(got) == len(want)
		for i := 0; same && i < len(got); i++ {
			same = got[i].DocID == want[i].DocID && got[i].Text == want[i].Text &&
				math.Abs(got[i].Score-want[i].Score) <= 1e-3*math.Max(1, math.Abs(want[i].Score))
		}
		if !same {
			differ++
			t.Logf("%q ranks differently:\n  SQLite:     %s\n  PostgreSQL: %s", q, hitList(want), hitList(got))
		}
	}
	t.Logf("%d of %d queries (%d with hits) rank identically", len(queries)-differ, len(queries), withHits)
	if withHits < len(queries)/2 {
		t.Errorf("only %d of %d queries have hits: the comparison proves little", withHits, len(queries))
	}
	if differ > len(queries)/50 {
		t.Errorf("%d of %d queries rank differently on PostgreSQL", differ, len(queries))
	}
}

func hitList(hs []Hit) string {
	s := ""
	for _, h := range hs {
		s += fmt.Sprintf("%s(%g) ", h.DocID, h.Score)
	}
	return s
}

// TestConcurrentIngestAndSeedAcrossStores ingests one path and seeds the
// demo FAQ from several stores on one database at once, as replicas
// starting together do: every call succeeds and each document is stored
// once. On PostgreSQL that takes the advisory locks of storePrepared and
// SeedDemo; without them the later callers fail on the unique name.
func TestConcurrentIngestAndSeedAcrossStores(t *testing.T) {
	ctx := context.Background()
	db := storetest.New(t)
	const n = 4
	kbs := make([]*KB, n)
	for i := range kbs {
		k, err := Open(ctx, db.Open())
		if err != nil {
			t.Fatal(err)
		}
		kbs[i] = k
	}
	errs := make(chan error, 2*n)
	var wg sync.WaitGroup
	for _, k := range kbs {
		wg.Go(func() { errs <- k.SeedDemo(ctx) })
		wg.Go(func() {
			_, err := k.Ingest(ctx, "shared/faq.md", []byte("# Shared\n\nEvery replica ingests this one file."))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	docs, err := kbs[0].List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]int{}
	for _, d := range docs {
		paths[d.Path]++
	}
	for p, c := range paths {
		if c != 1 {
			t.Errorf("%s stored %d times", p, c)
		}
	}
	if paths["shared/faq.md"] != 1 || len(paths) < 2 {
		t.Errorf("documents %v: want the shared file and the demo FAQ once each", paths)
	}
}
