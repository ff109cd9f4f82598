package kb

import (
	"strings"

	"github.com/agentapp/agentapp/internal/texttok"
)

// The tokenizer lives in internal/texttok, shared with the tool search;
// these names keep the index and search code of this package short.
var (
	indexTokens     = texttok.IndexTokens
	indexTokensSlow = texttok.IndexTokensRunes
	isCJK           = texttok.IsCJK
	fold            = texttok.Fold
	segments        = texttok.Segments
)

// queryTerms is a query cut into index terms.
type queryTerms struct {
	// words are Latin words and CJK bigrams.
	words []string
	// chars are the characters of one- and two-character CJK runs, searched
	// as prefixes when words find nothing.
	chars []string
}

// tokenizeQuery cuts a query the way indexTokens cuts documents (see
// texttok.Query).
func tokenizeQuery(q string) queryTerms {
	t := texttok.Query(q)
	return queryTerms{words: t.Words, chars: t.Chars}
}

// quote makes a term an FTS5 string literal, so that no character in it is
// read as query syntax.
func quote(term string) string {
	return `"` + strings.ReplaceAll(term, `"`, `""`) + `"`
}

// wordsExpr returns the FTS5 MATCH expression of the words: each quoted,
// OR-ed; "" when there are none.
func (t queryTerms) wordsExpr() string {
	parts := make([]string, len(t.words))
	for i, s := range t.words {
		parts[i] = quote(s)
	}
	return strings.Join(parts, " OR ")
}

// charsExpr returns the MATCH expression that finds the single characters:
// each a quoted prefix query, OR-ed; "" when there are none.
func (t queryTerms) charsExpr() string {
	parts := make([]string, len(t.chars))
	for i, s := range t.chars {
		parts[i] = quote(s) + "*"
	}
	return strings.Join(parts, " OR ")
}

// all returns every term, for highlighting a snippet.
func (t queryTerms) all() []string {
	return append(append([]string(nil), t.words...), t.chars...)
}
