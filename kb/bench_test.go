package kb

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/agentapp/agentapp/store"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// vocabulary returns Chinese words (2–4 characters cut from the test
// corpus and demo FAQ) and English words, to generate realistic text.
func vocabulary(tb testing.TB) (zh, en []string) {
	tb.Helper()
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*"))
	demo, _ := filepath.Glob(filepath.Join("demo", "*.md"))
	seenZh, seenEn := map[string]bool{}, map[string]bool{}
	for _, f := range append(files, demo...) {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		for _, seg := range segments(string(b)) {
			if !seg.CJK {
				if w := string(seg.Runes); len(w) > 2 && !seenEn[w] {
					seenEn[w] = true
					en = append(en, w)
				}
				continue
			}
			for i := 0; i+2 <= len(seg.Runes); i += 2 {
				w := string(seg.Runes[i:min(i+2+i%3, len(seg.Runes))])
				if !seenZh[w] {
					seenZh[w] = true
					zh = append(zh, w)
				}
			}
		}
	}
	slices.Sort(zh)
	slices.Sort(en)
	return zh, en
}

// textGen writes generated text with a Zipf word distribution, as in real
// writing: a few words are everywhere, most are rare. The vocabulary is the
// real words of the corpora (spread over all ranks, so queries about them
// behave like queries about ordinary content words) among synthetic
// two-character words; English words are among them.
type textGen struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	words []string
	en    []string
}

func newTextGen(tb testing.TB, seed uint64) *textGen {
	zh, en := vocabulary(tb)
	r := rand.New(rand.NewPCG(seed, seed+1))
	// Synthetic words from the common CJK block, then the real words at
	// random ranks.
	words := make([]string, 0, 40000)
	for len(words) < 40000-len(zh)-len(en) {
		words = append(words, string([]rune{rune(0x4E00 + r.IntN(3500)), rune(0x4E00 + r.IntN(3500))}))
	}
	for _, w := range append(zh, en...) {
		i := r.IntN(len(words) + 1)
		words = slices.Insert(words, i, w)
	}
	return &textGen{r: r, zipf: rand.NewZipf(r, 1.1, 2, uint64(len(words)-1)), words: words, en: en}
}

// doc writes a Markdown document of sections×paras paragraphs of about 150
// characters each.
func (g *textGen) doc(sections, paras int) string {
	var b strings.Builder
	word := func() string { return g.words[g.zipf.Uint64()] }
	fmt.Fprintf(&b, "# %s%s %s\n\n", word(), word(), g.en[g.r.IntN(len(g.en))])
	for s := range sections {
		fmt.Fprintf(&b, "## %d. %s%s\n\n", s+1, word(), word())
		for range paras {
			for n := 0; n < 150; {
				w := word()
				if w[0] < utf8.RuneSelf {
					w = " " + w + " "
				}
				b.WriteString(w)
				n += len([]rune(w))
				if g.r.IntN(12) == 0 {
					b.WriteString([]string{"。", "，", "！", "？"}[g.r.IntN(4)])
				}
			}
			b.WriteString("。\n\n")
		}
	}
	return b.String()
}

var benchQueries = []string{
	"出差住宿标准是多少？", "退款多久到账", "年假有几天", "笔记本电脑坏了怎么办", "积分多久过期",
	"电子发票在哪里下载", "可以用信用卡分期吗", "工牌丢了怎么办", "warranty claim", "reset password",
	"delete my account", "refund", "假", "运费怎么算，满多少包邮？",
}

// BenchmarkSearch measures a search over a generated knowledge base of
// 10,000 chunks (mostly Chinese, some English). ns/op is the mean; p50 and
// p99 are reported per query as extra metrics.
func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	k, _ := newTestKB(b)
	g := newTextGen(b, 1)
	chunks := 0
	for d := 0; chunks < 10000; d++ {
		res, err := k.Ingest(ctx, fmt.Sprintf("gen-%04d.md", d), []byte(g.doc(10, 3)))
		if err != nil {
			b.Fatal(err)
		}
		chunks += res.Doc.Chunks
	}
	if err := k.SeedDemo(ctx); err != nil {
		b.Fatal(err)
	}
	// Searches run on a knowledge base ingested earlier by `kb ingest`,
	// which optimised the index, and whose WAL was checkpointed when the
	// ingesting process closed it.
	start := time.Now()
	if err := k.Optimize(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("Optimize of %d chunks took %v", chunks, time.Since(start))
	// On PostgreSQL, autovacuum would have analysed the tables by then.
	settle := `PRAGMA wal_checkpoint(TRUNCATE)`
	if k.st.Dialect() == store.Postgres {
		settle = `ANALYZE`
	}
	if _, err := k.st.DB.ExecContext(ctx, settle); err != nil {
		b.Fatal(err)
	}
	b.Logf("corpus: %d generated chunks plus the demo FAQ", chunks)
	b.Run("k=5", func(b *testing.B) {
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
	})
}

// englishDoc writes an English Markdown document of sections×paras
// paragraphs of about 600 characters, words drawn with a Zipf distribution
// from the corpus's English words among synthetic ones.
func englishDoc(r *rand.Rand, en []string, sections, paras int) string {
	return englishDocOf(r, englishWords(r, en), sections, paras)
}

// englishWords is englishDoc's vocabulary: en among synthetic words, in a
// random order, most frequent first.
func englishWords(r *rand.Rand, en []string) []string {
	words := slices.Clone(en)
	for len(words) < 20000 {
		n := 3 + r.IntN(7)
		w := make([]byte, n)
		for i := range w {
			w[i] = byte('a' + r.IntN(26))
		}
		words = append(words, string(w))
	}
	r.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
	return words
}

// englishDocOf is englishDoc with its vocabulary made once (englishWords).
func englishDocOf(r *rand.Rand, words []string, sections, paras int) string {
	z := rand.NewZipf(r, 1.1, 2, uint64(len(words)-1))
	var b strings.Builder
	fmt.Fprintf(&b, "# %s %s\n\n", words[z.Uint64()], words[z.Uint64()])
	for s := range sections {
		fmt.Fprintf(&b, "## %d. %s %s\n\n", s+1, words[z.Uint64()], words[z.Uint64()])
		for range paras {
			for n := 0; n < 600; {
				w := words[z.Uint64()]
				b.WriteString(w)
				n += len(w) + 1
				if r.IntN(12) == 0 {
					b.WriteString(". ")
				} else {
					b.WriteByte(' ')
				}
			}
			b.WriteString("end.\n\n")
		}
	}
	return b.String()
}

// BenchmarkIngest measures ingestion throughput of generated Markdown
// (MB/s from b.SetBytes), one Ingest (one transaction) per document:
// validation, chunking, tokenising and the writes of document, chunks and
// index rows. Chinese text costs more per byte than English: a Chinese
// character is three bytes and one index token, an English word about six
// bytes per token.
func BenchmarkIngest(b *testing.B) {
	_, en := vocabulary(b)
	g := newTextGen(b, 3)
	r := rand.New(rand.NewPCG(7, 8))
	sets := map[string][][]byte{}
	for i := 0; i < 20; i++ {
		sets["zh"] = append(sets["zh"], []byte(g.doc(8, 3)))
		sets["en"] = append(sets["en"], []byte(englishDoc(r, en, 6, 3)))
	}
	sets["docs"] = handWritten(b)
	b.Run("docs-batch", func(b *testing.B) {
		ctx := context.Background()
		k, _ := newTestKB(b)
		total := 0
		for _, d := range sets["docs"] {
			total += len(d)
		}
		b.SetBytes(int64(total))
		b.ReportAllocs()
		b.ResetTimer()
		cpu := startCPU()
		defer cpu.report(b)
		for i := range b.N {
			files := make([]File, len(sets["docs"]))
			for j, d := range sets["docs"] {
				files[j] = File{Name: fmt.Sprintf("doc-%d-%d.md", i, j), Data: d}
			}
			if _, errs := k.IngestBatch(ctx, files); errors.Join(errs...) != nil {
				b.Fatal(errors.Join(errs...))
			}
		}
	})
	// "dir" is `agentapp kb ingest DIR` of a directory of small articles
	// into an empty knowledge base: 768 generated Markdown files of 1–3 KB
	// (three Chinese to one English), cut into IngestBatch calls as the
	// command cuts them (BatchFiles, BatchBytes), then Optimize, as the
	// command ends. Each iteration starts from an empty knowledge base
	// (opened with the timer stopped), so its figure does not depend on how
	// many iterations ran before it.
	var dir []File
	dirBytes := 0
	words := englishWords(r, en)
	for i := range 768 {
		var d []byte
		if i%4 == 3 {
			d = []byte(englishDocOf(r, words, 2, 1))
		} else {
			d = []byte(g.doc(2, 2))
		}
		dir = append(dir, File{Name: fmt.Sprintf("topic-%d/article-%d.md", i/32, i), Data: d})
		dirBytes += len(d)
	}
	b.Run("dir", func(b *testing.B) {
		ctx := context.Background()
		b.SetBytes(int64(dirBytes))
		b.ReportAllocs()
		var cpu time.Duration
		for range b.N {
			b.StopTimer()
			k, _ := newTestKB(b)
			b.StartTimer()
			start := processCPU()
			for rest := dir; len(rest) > 0; {
				n, size := 0, 0
				for n < len(rest) && n < BatchFiles && size < BatchBytes {
					size += len(rest[n].Data)
					n++
				}
				if _, errs := k.IngestBatch(ctx, rest[:n]); errors.Join(errs...) != nil {
					b.Fatal(errors.Join(errs...))
				}
				rest = rest[n:]
			}
			if err := k.Optimize(ctx); err != nil {
				b.Fatal(err)
			}
			cpu += processCPU() - start
		}
		if cpu > 0 {
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		}
	})
	for _, lang := range []string{"zh", "en", "docs"} {
		b.Run(lang, func(b *testing.B) {
			ctx := context.Background()
			k, _ := newTestKB(b)
			docs := sets[lang]
			total := 0
			for _, d := range docs {
				total += len(d)
			}
			b.SetBytes(int64(total))
			b.ReportAllocs()
			b.ResetTimer()
			cpu := startCPU()
			defer cpu.report(b)
			for i := range b.N {
				for j, d := range docs {
					if _, err := k.Ingest(ctx, fmt.Sprintf("doc-%d-%d.md", i, j), d); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// handWritten returns the hand-written Markdown of the ingest rows: the
// test corpus and the demo FAQ.
func handWritten(b *testing.B) [][]byte {
	var docs [][]byte
	for _, dir := range []string{filepath.Join("testdata", "corpus", "*"), filepath.Join("demo", "*.md")} {
		files, _ := filepath.Glob(dir)
		for _, f := range files {
			d, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			docs = append(docs, d)
		}
	}
	return docs
}

// BenchmarkIngestFloor measures what an ingest of docs-batch's files costs
// without the full-text index, on SQLite: "prepare" is the Go side alone
// (checks, chunking, tokens, ids), "no-index" that and the transaction
// that stores the documents and their chunks as IngestBatch does, minus the
// FTS5 rows (and the change notification). It is the bound below which no
// index write path can take the ingest as documents and chunks are stored
// today (bench/NOTES.md). "lean-tx" asks what a different layout could
// reach on the same engine: one row per document holding its content and
// its chunks, and the batch's postings, built in Go, stored as one blob,
// with no merging, stemming or deletions. It times the transaction alone
// (the Go side is outside the timer and the CPU count), so it is the
// engine's share of such a layout, a bound for any index of our own.
func BenchmarkIngestFloor(b *testing.B) {
	data := handWritten(b)
	total := 0
	for _, d := range data {
		total += len(d)
	}
	ctx := context.Background()
	k, st := newTestKB(b)
	if st.Dialect() != store.SQLite {
		b.Skip("the floor is measured on SQLite, the backend of the ingest target")
	}
	batch := 0 // names stay new across the benchmark's repeated runs
	prepareAll := func() []*prepared {
		batch++
		preps := make([]*prepared, len(data))
		for j, d := range data {
			p, err := k.prepare(File{Name: fmt.Sprintf("doc-%d-%d.md", batch, j), Data: d})
			if err != nil {
				b.Fatal(err)
			}
			preps[j] = p
		}
		return preps
	}
	b.Run("prepare", func(b *testing.B) {
		b.SetBytes(int64(total))
		cpu := startCPU()
		defer cpu.report(b)
		for range b.N {
			prepareAll()
		}
	})
	docStmt, err := st.DB.PrepareContext(ctx, sqlInsertDoc)
	if err != nil {
		b.Fatal(err)
	}
	defer docStmt.Close()
	chunkStmt, err := st.DB.PrepareContext(ctx, sqlInsertChunk)
	if err != nil {
		b.Fatal(err)
	}
	defer chunkStmt.Close()
	byNameStmt, err := st.DB.PrepareContext(ctx, sqlDocByName)
	if err != nil {
		b.Fatal(err)
	}
	defer byNameStmt.Close()
	b.Run("no-index", func(b *testing.B) {
		b.SetBytes(int64(total))
		cpu := startCPU()
		defer cpu.report(b)
		for range b.N {
			preps := prepareAll()
			now := time.Now().UTC().Format(time.RFC3339Nano)
			err := st.Tx(ctx, func(tx *sql.Tx) error {
				// Prepared as the ingest's statements are (see ingestTx).
				insertDoc, insertChunk := tx.StmtContext(ctx, docStmt), tx.StmtContext(ctx, chunkStmt)
				byName := tx.StmtContext(ctx, byNameStmt)
				for _, p := range preps {
					d := p.doc
					if err := lookUpNone(ctx, byName, d.Path); err != nil {
						return err
					}
					if _, err := insertDoc.ExecContext(ctx, d.ID, d.Path, d.Title, d.Source, d.Bytes, d.Chunks, p.content, now); err != nil {
						return err
					}
					for seq, c := range p.chunks {
						if _, err := insertChunk.ExecContext(ctx, d.ID, seq, c.Heading, c.Text); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, q := range []string{
		`CREATE TABLE floor_docs (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
			source TEXT NOT NULL, bytes INTEGER NOT NULL, content TEXT NOT NULL, chunks BLOB NOT NULL,
			ingested_at TEXT NOT NULL, name_is_path INTEGER NOT NULL DEFAULT 1)`,
		`CREATE TABLE floor_postings (batch INTEGER PRIMARY KEY, data BLOB NOT NULL)`,
	} {
		if _, err := st.DB.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	leanDoc, err := st.DB.PrepareContext(ctx, `INSERT INTO floor_docs (id, name, title, source, bytes, content, chunks, ingested_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	defer leanDoc.Close()
	leanByName, err := st.DB.PrepareContext(ctx, `SELECT id, name_is_path, source FROM floor_docs WHERE name = ?`)
	if err != nil {
		b.Fatal(err)
	}
	defer leanByName.Close()
	leanPostings, err := st.DB.PrepareContext(ctx, `INSERT INTO floor_postings (batch, data) VALUES (?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	defer leanPostings.Close()
	b.Run("lean-tx", func(b *testing.B) {
		b.SetBytes(int64(total))
		var cpu time.Duration
		for range b.N {
			b.StopTimer()
			preps := prepareAll()
			postings := floorPostings(preps)
			now := time.Now().UTC().Format(time.RFC3339Nano)
			b.StartTimer()
			cpu0 := processCPU()
			err := st.Tx(ctx, func(tx *sql.Tx) error {
				insertDoc, byName := tx.StmtContext(ctx, leanDoc), tx.StmtContext(ctx, leanByName)
				insertPostings := tx.StmtContext(ctx, leanPostings)
				for _, p := range preps {
					d := p.doc
					if err := lookUpNone(ctx, byName, d.Path); err != nil {
						return err
					}
					var chunks []byte
					for _, c := range p.chunks {
						chunks = binary.AppendUvarint(chunks, uint64(len(c.Heading)))
						chunks = append(chunks, c.Heading...)
						chunks = binary.AppendUvarint(chunks, uint64(len(c.Text)))
						chunks = append(chunks, c.Text...)
					}
					if _, err := insertDoc.ExecContext(ctx, d.ID, d.Path, d.Title, d.Source, d.Bytes, p.content, chunks, now); err != nil {
						return err
					}
				}
				_, err := insertPostings.ExecContext(ctx, batch, postings)
				return err
			})
			cpu += processCPU() - cpu0
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	})
}

// lookUpNone is the look-up of an earlier version of a document that
// every ingest makes, for a path the floor benchmarks know to be new.
func lookUpNone(ctx context.Context, byName *sql.Stmt, path string) error {
	var id, source string
	var isPath bool
	if err := byName.QueryRowContext(ctx, path).Scan(&id, &isPath, &source); !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("look-up of %s: %v", path, err)
	}
	return nil
}

// floorPostings builds the postings of a batch of prepared documents as
// an index of its own would: for every term, the chunks it occurs in
// (numbered in the batch) with its count in each of the three columns,
// encoded with varints, the terms sorted.
func floorPostings(preps []*prepared) []byte {
	type posting struct {
		chunk int
		tf    [3]int
	}
	postings := map[string][]posting{}
	chunk := 0
	for _, p := range preps {
		for _, ix := range p.index {
			chunk++
			for col, text := range [3]string{ix.doc, ix.heading, ix.body} {
				for t := range strings.FieldsSeq(text) {
					ps := postings[t]
					if n := len(ps); n > 0 && ps[n-1].chunk == chunk {
						ps[n-1].tf[col]++
						continue
					}
					var np posting
					np.chunk, np.tf[col] = chunk, 1
					postings[t] = append(ps, np)
				}
			}
		}
	}
	terms := make([]string, 0, len(postings))
	for t := range postings {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	var data []byte
	for _, t := range terms {
		data = binary.AppendUvarint(data, uint64(len(t)))
		data = append(data, t...)
		ps := postings[t]
		data = binary.AppendUvarint(data, uint64(len(ps)))
		prev := 0
		for _, p := range ps {
			data = binary.AppendUvarint(data, uint64(p.chunk-prev))
			prev = p.chunk
			for _, n := range p.tf {
				data = binary.AppendUvarint(data, uint64(n))
			}
		}
	}
	return data
}

// cpuMeter reports the process's CPU time per iteration as cpu-ns/op, next
// to the wall time: the machine the benchmarks run on is shared, and CPU
// time swings far less with the load of others than ns/op does. It counts
// every thread of the process, so SQLite's and the garbage collector's work
// are in it; a PostgreSQL server's is not.
type cpuMeter struct{ start time.Duration }

func startCPU() cpuMeter { return cpuMeter{processCPU()} }

func (m cpuMeter) report(b *testing.B) {
	if m.start == 0 {
		return
	}
	b.ReportMetric(float64(processCPU()-m.start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkSplitChunks measures the chunker alone.
func BenchmarkSplitChunks(b *testing.B) {
	doc := newTextGen(b, 5).doc(20, 4)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		SplitChunks(doc, MaxChunkRunes)
	}
}
