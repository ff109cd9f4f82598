package kb

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/store"
	"go.uber.org/goleak"
)

// scaleChunks is the size of the knowledge base the search target is set
// for.
const scaleChunks = 100_000

// scaleCorpus is the generated 100,000-chunk knowledge base, built once
// per test binary: building it costs far more than the searches measured
// on it, and -count repeats the benchmark in the same process. TestMain
// removes it.
var scaleCorpus struct {
	once   sync.Once
	dir    string
	st     *store.Store
	k      *KB
	chunks int
	build  time.Duration
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if scaleCorpus.st != nil {
		scaleCorpus.st.Close()
	}
	if scaleCorpus.dir != "" {
		os.RemoveAll(scaleCorpus.dir)
	}
	// No goroutine may outlive the tests (the corpus's store is closed
	// first): an open database handle or a change listener left running is
	// a leak of the KB.
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// scaleKB returns the cached corpus: generated documents (seeded, so the
// same on every run) ingested in batches as `kb ingest` of a directory
// does, the demo FAQ, then optimised and checkpointed as a knowledge base
// is after `kb ingest`. It is on SQLite, the backend the target is for.
func scaleKB(b *testing.B) *KB {
	c := &scaleCorpus
	c.once.Do(func() {
		start := time.Now()
		ctx := context.Background()
		if c.dir, c.err = os.MkdirTemp("", "kb-scale-*"); c.err != nil {
			return
		}
		if c.st, c.err = store.Open(c.dir); c.err != nil {
			return
		}
		if c.k, c.err = Open(ctx, c.st); c.err != nil {
			return
		}
		g := newTextGen(b, 11)
		for d := 0; c.chunks < scaleChunks; {
			files := make([]File, 20)
			for i := range files {
				files[i] = File{Name: fmt.Sprintf("gen-%06d.md", d), Data: []byte(g.doc(10, 3))}
				d++
			}
			res, errs := c.k.IngestBatch(ctx, files)
			for i, err := range errs {
				if err != nil {
					c.err = err
					return
				}
				c.chunks += res[i].Doc.Chunks
			}
		}
		if c.err = c.k.SeedDemo(ctx); c.err != nil {
			return
		}
		if c.err = c.k.Optimize(ctx); c.err != nil {
			return
		}
		_, c.err = c.st.DB.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
		c.build = time.Since(start)
	})
	if c.err != nil {
		b.Fatalf("building the %d-chunk corpus: %v", scaleChunks, c.err)
	}
	b.Logf("corpus: %d generated chunks plus the demo FAQ, built in %v", c.chunks, c.build.Round(time.Millisecond))
	return c.k
}

// BenchmarkSearch100k is BenchmarkSearch's queries (common, rare and
// absent terms, Chinese and English) on 100,000 chunks, k=5. p50 and p99
// are per query.
func BenchmarkSearch100k(b *testing.B) {
	k := scaleKB(b)
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if _, err := k.Search(ctx, benchQueries[i%len(benchQueries)], 5); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}
