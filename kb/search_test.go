package kb

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// labeledQuery is one entry of testdata/queries.json: a question and the
// file name of the document that answers it.
type labeledQuery struct {
	Query string `json:"query"`
	Doc   string `json:"doc"`
}

// TestSearchQuality measures how often the expected document is among the
// top 3 hits of a labeled query set (Chinese and English) over the test
// corpus, and requires at least 90%.
func TestSearchQuality(t *testing.T) {
	ctx := context.Background()
	k, _ := newTestKB(t)
	ids := ingestCorpus(t, k)
	raw, err := os.ReadFile(filepath.Join("testdata", "queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	var queries []labeledQuery
	if err := json.Unmarshal(raw, &queries); err != nil {
		t.Fatal(err)
	}
	if len(queries) < 20 {
		t.Fatalf("only %d labeled queries, want at least 20", len(queries))
	}
	good, first := 0, 0
	for _, q := range queries {
		want, ok := ids[q.Doc]
		if !ok {
			t.Fatalf("query %q expects %s, which is not in the corpus", q.Query, q.Doc)
		}
		hits, err := k.Search(ctx, q.Query, 3)
		if err != nil {
			t.Fatalf("search %q: %v", q.Query, err)
		}
		found := false
		var got []string
		for _, h := range hits {
			got = append(got, h.DocID)
			found = found || h.DocID == want
		}
		if len(hits) > 0 && hits[0].DocID == want {
			first++
		}
		if found {
			good++
		} else {
			t.Logf("miss: %q wants %s, top 3: %v", q.Query, want, got)
		}
	}
	rate := float64(good) / float64(len(queries))
	t.Logf("search quality: %d of %d queries (%.0f%%) have the expected document in the top 3, %d (%.0f%%) first",
		good, len(queries), rate*100, first, 100*float64(first)/float64(len(queries)))
	if rate < 0.9 {
		t.Errorf("top-3 hit rate %.2f is under 0.90", rate)
	}
}

func TestSearchHostileQueriesAreText(t *testing.T) {
	ctx := context.Background()
	k, _ := newTestKB(t)
	ingestCorpus(t, k)
	for _, q := range []string{
		`"`, `""`, `*`, `-`, `warranty*`, `-warranty`, `NEAR(password reset)`, `password NEAR reset`,
		`AND`, `OR OR`, `NOT cookies`, `title:warranty`, `{uni}: 票`, `^cookies`, `(`, `)`, `'; DROP TABLE kb_chunks; --`,
		`"unterminated`, `a + b`, `发票" OR "*`, "\u0000", "!!!???", "。。。",
	} {
		if _, err := k.Search(ctx, q, 5); err != nil {
			t.Errorf("Search(%q) = %v, want no error", q, err)
		}
	}
	// Operators are plain words: "NOT cookies" still finds cookies.
	hits, err := k.Search(ctx, "NOT cookies", 3)
	if err != nil || len(hits) == 0 || !strings.HasPrefix(hits[0].DocID, "privacy.txt-") {
		t.Errorf(`"NOT cookies" hits = %v, %v; want the privacy policy first`, hits, err)
	}
	if hits, err := k.Search(ctx, "!!!", 5); err != nil || hits == nil || len(hits) != 0 {
		t.Errorf(`"!!!" = %#v, %v; want an empty, non-nil list`, hits, err)
	}
}

func TestSearchArguments(t *testing.T) {
	ctx := context.Background()
	k, _ := newTestKB(t)
	for _, c := range []struct {
		query string
		n     int
		want  string
	}{
		{"", 5, "query is empty"},
		{"  \t\n", 5, "query is empty"},
		{strings.Repeat("长", MaxQueryRunes+1), 5, "the limit is 500"},
		{"ok", 0, "k must be from 1 to 10, got 0"},
		{"ok", 11, "k must be from 1 to 10, got 11"},
	} {
		if _, err := k.Search(ctx, c.query, c.n); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Search(%.20q, %d) error = %v, want %q", c.query, c.n, err, c.want)
		}
	}
}

func TestSearchNumbersAndScores(t *testing.T) {
	ctx := context.Background()
	k, _ := newTestKB(t)
	ingestCorpus(t, k)
	hits, err := k.Search(ctx, "积分 发票 password", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) < 3 {
		t.Fatalf("%d hits, want several", len(hits))
	}
	for i, h := range hits {
		if h.No != i+1 {
			t.Errorf("hit %d numbered %d", i, h.No)
		}
		if h.Score <= 0 || (i > 0 && h.Score > hits[i-1].Score) {
			t.Errorf("scores not positive and descending: %v", hits)
		}
		if h.Title == "" || h.Text == "" || h.DocID == "" {
			t.Errorf("hit %d incomplete: %+v", i, h)
		}
	}
}

func TestTokenizeQuery(t *testing.T) {
	for q, want := range map[string][2]string{
		"出差住宿标准是多少？":   {`"出差" OR "差住" OR "住宿" OR "宿标" OR "标准" OR "准是"`, ``},
		"假":            {``, `"假"*`},
		"年假":           {`"年假"`, `"年"* OR "假"*`},
		"What is 2FA?": {`"2fa"`, ``},
		"ＡＢＣ１２３ 退款":    {`"abc123" OR "退款"`, `"退"* OR "款"*`},
		"运费怎么算，满多少包邮？": {`"运费" OR "包邮"`, `"运"* OR "费"* OR "算"* OR "满"* OR "包"* OR "邮"*`},
		"what is it":   {`"what" OR "is" OR "it"`, ``},
		`"*-NEAR(`:     {`"near"`, ``},
	} {
		terms := tokenizeQuery(q)
		if got := [2]string{terms.wordsExpr(), terms.charsExpr()}; got != want {
			t.Errorf("tokenizeQuery(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestSearchSingleCharactersAndMissingBigram(t *testing.T) {
	ctx := context.Background()
	k, _ := newTestKB(t)
	if _, err := k.Ingest(ctx, "leave.md", []byte("# 休假\n\n员工每年有 5 天年休假。")); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Ingest(ctx, "other.md", []byte("# 其他\n\n与此无关的内容。")); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"假", "年假", "休"} {
		hits, err := k.Search(ctx, q, 5)
		if err != nil || len(hits) != 1 || !strings.HasPrefix(hits[0].DocID, "leave.md-") {
			t.Errorf("Search(%q) = %+v, %v; want the leave document only", q, hits, err)
		}
	}
	if hits, err := k.Search(ctx, "量子力学", 5); err != nil || len(hits) != 0 {
		t.Errorf("a long query without matching bigrams fell back to characters: %+v, %v", hits, err)
	}
}

func TestSnippet(t *testing.T) {
	text := strings.Repeat("前文", 50) + "退款在三个工作日内到账。" + strings.Repeat("后文", 50)
	got := Snippet(text, "退款", 30)
	if !strings.Contains(got, "退款在三个工作日内到账") || !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") {
		t.Errorf("Snippet = %q, want the match with both ends marked cut", got)
	}
	if got := Snippet("short\n\ntext", "x", 30); got != "short text" {
		t.Errorf("Snippet of a short text = %q", got)
	}
}

func TestIndexTokens(t *testing.T) {
	for in, want := range map[string]string{
		"住宿标准：一线城市 600 元/晚":    "住宿 宿标 标准 准 一线 线城 城市 市 600 元 晚 ",
		"Refund within 7-Days": "refund within 7 days ",
		"ＡＢＣ１２３假":              "abc123 假 ",
		"":                     "",
		"。！":                   "",
	} {
		if got := indexTokens(in); got != want {
			t.Errorf("indexTokens(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRoundScore(t *testing.T) {
	for in, want := range map[float64]float64{
		13.33849: 13.34, 4.14712: 4.147, 0.000001234567: 0.000001235, 0: 0, -2.5: -2.5,
	} {
		if got := roundScore(in); got != want {
			t.Errorf("roundScore(%v) = %v, want %v", in, got, want)
		}
	}
}
