package kb

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tokenizerInputs are the demo FAQ, the test corpus, generated Chinese and
// English documents, their chunks and headings, and random strings mixing
// ASCII, full-width forms, CJK, kana, Hangul, accents, combining marks,
// emoji and invalid UTF-8.
func tokenizerInputs(t testing.TB) []string {
	t.Helper()
	var in []string
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*"))
	demo, _ := filepath.Glob(filepath.Join("demo", "*.md"))
	for _, f := range append(files, demo...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, string(b))
	}
	g := newTextGen(t, 11)
	_, en := vocabulary(t)
	r := rand.New(rand.NewPCG(1, 2))
	for range 10 {
		in = append(in, g.doc(4, 3), englishDoc(r, en, 3, 2))
	}
	for _, doc := range append([]string(nil), in...) {
		for _, c := range SplitChunks(doc, MaxChunkRunes) {
			in = append(in, c.Text, c.Heading)
		}
	}
	alphabet := []rune("aZ09 _-.,/'\"\t\n！？。，、ＡｚＺ０９｡ｱﾝ가힣ᄀあアーｰ一龥㐀豈𠀀éÉßİΣσДж\u0301\u0300\u3000\uFEFF😀\uFFFD")
	for range 2000 {
		var b strings.Builder
		for range r.IntN(40) {
			if r.IntN(30) == 0 {
				b.WriteByte(byte(0x80 + r.IntN(0x80))) // invalid UTF-8
				continue
			}
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		in = append(in, b.String())
	}
	in = append(in, strings.Repeat("x", 100), strings.Repeat("é", 60), strings.Repeat("一", 5)+strings.Repeat("A", 50))
	return in
}

// TestIndexTokensMatchesRuneByRune proves the byte-level indexTokens writes
// exactly what the rune-by-rune version writes, so the index and therefore
// every search result are unchanged.
func TestIndexTokensMatchesRuneByRune(t *testing.T) {
	for _, s := range tokenizerInputs(t) {
		if got, want := indexTokens(s), indexTokensSlow(s); got != want {
			t.Fatalf("indexTokens(%q)\n = %q\nwant %q", s, got, want)
		}
	}
}

func FuzzIndexTokens(f *testing.F) {
	for _, s := range []string{"住宿标准：一线城市 600 元/晚", "Refund within 7-Days", "ＡＢＣ１２３假", "ｱｲｳ가나다é\u0301", "\xff一\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := indexTokens(s), indexTokensSlow(s); got != want {
			t.Fatalf("indexTokens(%q) = %q, want %q", s, got, want)
		}
	})
}

// TestSearchHitsUnchangedByTokenizer ingests the demo FAQ, the test corpus
// and a generated corpus twice: once as Ingest indexes them, once with
// every index row rewritten from the rune-by-rune tokenizer. Every query
// must give the same hits with the same scores from both.
func TestSearchHitsUnchangedByTokenizer(t *testing.T) {
	ctx := context.Background()
	g := newTextGen(t, 21)
	var gen []File
	for d := range 30 {
		gen = append(gen, File{Name: fmt.Sprintf("gen-%02d.md", d), Data: []byte(g.doc(4, 3))})
	}
	build := func() *KB {
		k, _ := newTestKB(t)
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
	fast, slow := build(), build()
	// Rewrite slow's index rows with the reference tokenizer.
	rows, err := slow.st.DB.QueryContext(ctx, `SELECT c.id, c.heading, c.text, d.title FROM kb_chunks c JOIN kb_documents d ON d.id = c.doc_id`)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		id                   int64
		heading, text, title string
	}
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.heading, &r.text, &r.title); err != nil {
			t.Fatal(err)
		}
		all = append(all, r)
	}
	rows.Close()
	if len(all) < 100 {
		t.Fatalf("only %d chunks", len(all))
	}
	for _, r := range all {
		reindexChunk(t, slow.st, r.id, indexRow{
			doc: indexTokensSlow(r.title), heading: indexTokensSlow(ownHeading(r.heading, r.title)), body: indexTokensSlow(r.text)})
	}
	queries := append([]string{
		"出差住宿标准是多少？", "年假", "病假", "笔记本电脑", "退货", "发票", "lodging standard", "sick leave",
		"laptop replacement", "refund", "假", "一线城市", "Ｗｉ－Ｆｉ", "VPN 密码",
	}, benchQueries...)
	_, en := vocabulary(t)
	for i := 0; i < 60; i++ {
		queries = append(queries, g.words[g.zipf.Uint64()]+g.words[g.zipf.Uint64()], en[i*7%len(en)])
	}
	withHits := 0
	for _, q := range queries {
		a, err := fast.Search(ctx, q, MaxK)
		if err != nil {
			t.Fatal(err)
		}
		b, err := slow.Search(ctx, q, MaxK)
		if err != nil {
			t.Fatal(err)
		}
		// Doc ids and chunk texts are the same in both; compare all fields.
		if diff := cmp.Diff(b, a); diff != "" {
			t.Errorf("Search(%q) differs (-reference +current):\n%s", q, diff)
		}
		if len(a) > 0 {
			withHits++
		}
	}
	if withHits < len(queries)*3/4 {
		t.Errorf("only %d of %d queries have hits: the comparison proves little", withHits, len(queries))
	}
}
