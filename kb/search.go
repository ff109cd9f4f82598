package kb

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/agentapp/agentapp/telemetry"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentapp/agentapp/store"
)

// Limits of a search, shared by Search, the search tools and the CLI.
const (
	// DefaultK is the number of hits when the caller does not say.
	DefaultK = 5
	// MaxK is the most hits one search returns: more would crowd the
	// model's context with weak matches.
	MaxK = 10
	// MaxQueryRunes bounds a query's length in characters.
	MaxQueryRunes = 500
)

// Hit is one search result: a chunk and the document it comes from.
type Hit struct {
	// No numbers the hits from 1, best first; answers cite hits as [No].
	No    int    `json:"no"`
	DocID string `json:"docId"`
	Title string `json:"title"`
	Text  string `json:"text"`
	// Score is the BM25 relevance (higher is better), rounded to four
	// significant digits. It compares hits of one search, not across
	// searches. A word found in most chunks scores close to zero (BM25 gives
	// it almost no weight).
	Score float64 `json:"score"`
}

// CheckQuery returns an error saying what is wrong with a query, or nil.
func CheckQuery(query string) error {
	if strings.TrimSpace(query) == "" {
		return fmt.Errorf("query is empty: give a few words to search for")
	}
	if n := utf8.RuneCountInString(query); n > MaxQueryRunes {
		return fmt.Errorf("query is %d characters long; the limit is %d", n, MaxQueryRunes)
	}
	if !utf8.ValidString(query) {
		return fmt.Errorf("query is not valid UTF-8 text")
	}
	return nil
}

// CheckK returns an error unless k is a number of hits from 1 to MaxK.
func CheckK(k int) error {
	if k < 1 || k > MaxK {
		return fmt.Errorf("k must be from 1 to %d, got %d", MaxK, k)
	}
	return nil
}

// searchSQL ranks with bm25 and column weights: a match in the chunk's own
// section heading weighs most, one in the document title (shared by all its
// chunks) less than one in the text. An explicit bm25() call is about twice
// as fast here as ORDER BY rank with the weights configured on the table.
const searchSQL = `SELECT c.doc_id, d.title, c.text, f.score
	FROM (SELECT rowid, bm25(kb_fts, 0.5, 2.0, 1.0) AS score FROM kb_fts
		WHERE kb_fts MATCH ? ORDER BY score LIMIT ?) AS f
	JOIN kb_chunks c ON c.id = f.rowid
	JOIN kb_documents d ON d.id = c.doc_id
	ORDER BY f.score, c.id`

// Search returns up to n chunks matching query, best first, numbered from
// 1. The query is plain user text in any language: it is cut into words and
// CJK bigrams, each quoted, so characters such as " * - ( or NEAR are never
// read as query syntax. A one-character CJK query, or a two-character one
// whose bigram is nowhere (年假 where the text says 年休假), searches the
// characters instead. A query with nothing searchable (only punctuation,
// say) has no hits; an empty or over-long query or n outside 1..MaxK is an
// error.
func (k *KB) Search(ctx context.Context, query string, n int) ([]Hit, error) {
	if telemetry.Enabled(ctx) {
		return k.tracedSearch(ctx, query, n)
	}
	return k.searchQuery(ctx, query, n)
}

// tracedSearch is searchQuery inside a kb.search span (telemetry).
func (k *KB) tracedSearch(ctx context.Context, query string, n int) ([]Hit, error) {
	ctx, sp := telemetry.StartSearch(ctx, query, n)
	hits, err := k.searchQuery(ctx, query, n)
	sp.EndSearch(len(hits), err)
	return hits, err
}

// searchQuery is Search without its span.
func (k *KB) searchQuery(ctx context.Context, query string, n int) ([]Hit, error) {
	if err := CheckQuery(query); err != nil {
		return nil, err
	}
	if err := CheckK(n); err != nil {
		return nil, err
	}
	terms := tokenizeQuery(query)
	hits := []Hit{}
	var err error
	if len(terms.words) > 0 {
		if hits, err = k.match(ctx, terms.words, false, n); err != nil {
			return nil, err
		}
	}
	if len(hits) == 0 && len(terms.words) <= 1 && len(terms.chars) > 0 {
		return k.match(ctx, terms.chars, true, n)
	}
	return hits, nil
}

// match finds the chunks with any of terms (each a prefix if prefix is
// set) on the store's backend.
func (k *KB) match(ctx context.Context, terms []string, prefix bool, n int) ([]Hit, error) {
	if k.st.Dialect() == store.Postgres {
		return k.searchPostgres(ctx, terms, prefix, n)
	}
	if prefix {
		return k.search(ctx, queryTerms{chars: terms}.charsExpr(), n)
	}
	return k.search(ctx, queryTerms{words: terms}.wordsExpr(), n)
}

// search runs one MATCH expression.
func (k *KB) search(ctx context.Context, expr string, n int) ([]Hit, error) {
	rows, err := k.st.DB.QueryContext(ctx, searchSQL, expr, n)
	if err != nil {
		return nil, fmt.Errorf("search the knowledge base: %w", err)
	}
	// FTS5's bm25 is negative, better hits lower.
	return scanHits(rows, func(bm25 float64) float64 { return -bm25 })
}

// scanHits reads the rows of a search (document id, title, text, raw
// score) into numbered hits; score turns the backend's raw score into one
// where higher is better. It closes rows.
func scanHits(rows *sql.Rows, score func(float64) float64) ([]Hit, error) {
	defer rows.Close()
	hits := []Hit{}
	for rows.Next() {
		var h Hit
		var raw float64
		if err := rows.Scan(&h.DocID, &h.Title, &h.Text, &raw); err != nil {
			return nil, fmt.Errorf("search the knowledge base: %w", err)
		}
		h.No = len(hits) + 1
		h.Score = roundScore(score(raw))
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search the knowledge base: %w", err)
	}
	return hits, nil
}

// roundScore rounds to four significant digits: enough to order hits, and
// small scores (common words) do not all round to zero.
func roundScore(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	p := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

// Snippet returns about width characters of text on one line, around the
// first place a term of query occurs (the start when none does), with "…"
// marking cut ends. The CLI shows it under each hit.
func Snippet(text, query string, width int) string {
	rs := []rune(strings.Join(strings.Fields(text), " "))
	if width <= 0 || len(rs) <= width {
		return string(rs)
	}
	folded := make([]rune, len(rs))
	for i, r := range rs {
		folded[i] = fold(r)
	}
	at := -1
	for _, term := range tokenizeQuery(query).all() {
		if i := indexRunes(folded, []rune(term)); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	start := 0
	if at > width/3 {
		start = at - width/3
	}
	if start+width > len(rs) {
		start = len(rs) - width
	}
	// Do not start in the middle of a Latin word.
	for start > 0 && start < at && !unicode.IsSpace(rs[start-1]) && !isCJK(rs[start]) && unicode.IsLetter(rs[start]) {
		start++
	}
	end := min(start+width, len(rs))
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	b.WriteString(strings.TrimSpace(string(rs[start:end])))
	if end < len(rs) {
		b.WriteString("…")
	}
	return b.String()
}

func indexRunes(s, sub []rune) int {
	if len(sub) == 0 {
		return -1
	}
outer:
	for i := 0; i+len(sub) <= len(s); i++ {
		for j, r := range sub {
			if s[i+j] != r {
				continue outer
			}
		}
		return i
	}
	return -1
}
