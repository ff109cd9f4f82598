package toolsearch

import (
	"regexp"
	"strings"
	"sync"

	"github.com/agentapp/agentapp/internal/texttok"
)

// The concept lexicon bridges the words people ask with and the words
// tools are described with. A request rarely says what the tool's text
// says: "make my own copy of their repo" is fork_repository, "how high is
// the mountain" is maps_elevation, "从北京到上海开车要多久" is
// maps_directions. Each concept (lexicon_data.go) lists the words of tool
// definitions for one thing tools do or handle, and the ways people name
// it: synonyms, hypernyms, everyday paraphrases, question words, in
// English and Chinese. A query that says one of those gets the concept's
// tool words as extra terms, weighted below the query's own words so that
// a tool whose text has the literal words still ranks first.

// concept is one entry of the lexicon. Its fields are comma-separated
// lists.
type concept struct {
	// terms are the words tool definitions use for the concept.
	terms string
	// en are English words and phrases (up to maxPhraseWords words,
	// question words included) that ask for it.
	en string
	// zh are Chinese words that ask for it.
	zh string
}

// maxPhraseWords bounds an English trigger phrase.
const maxPhraseWords = 5

// maxZhRunes bounds a Chinese trigger word.
const maxZhRunes = 8

// conceptWeight is how much a concept counts against a word of the query
// itself (1): enough to find a tool described in other words, not enough
// to pass one that has the query's own words.
const conceptWeight = 0.45

// conceptRest is how much the terms of a concept other than the one that
// matches an entry best count: an entry that has several of the concept's
// words (origin, destination and directions for a route) is a better
// match than one with one of them, but not several words better.
const conceptRest = 0.25

// lexicon is the concept lexicon compiled for lookup. It is built once and
// only read.
type lexicon struct {
	// en maps a phrase of stemmed, lower-case words (joined by one space)
	// to the terms it adds.
	en map[string][]string
	// enFirst holds the first word of every phrase of more than one word,
	// so that only those words start a longer lookup.
	enFirst map[string]bool
	// zh maps a Chinese word to the terms it adds.
	zh map[string][]string
	// zhFirst holds the first character of every Chinese word, so that
	// only those characters start a lookup; zhMax is the longest word in
	// characters.
	zhFirst map[rune]bool
	zhMax   int
}

// lex is the lexicon of the concepts in lexicon_data.go.
// It is built on first use: a serve that never searches does not pay for
// it at start (cmd/agentapp's TestPackageInitIsSmall).
var lex = sync.OnceValue(func() *lexicon { return newLexicon(concepts) })

// newLexicon compiles concepts. A trigger in several concepts adds all
// their terms.
func newLexicon(cs []concept) *lexicon {
	l := &lexicon{en: map[string][]string{}, enFirst: map[string]bool{}, zh: map[string][]string{}, zhFirst: map[rune]bool{}}
	for _, c := range cs {
		terms := textTerms(c.terms, nil)
		for _, p := range splitList(c.en) {
			var ws []string
			for _, seg := range texttok.Segments(p) {
				ws = append(ws, stem(string(seg.Runes)))
			}
			if len(ws) == 0 || len(ws) > maxPhraseWords {
				continue
			}
			k := strings.Join(ws, " ")
			l.en[k] = appendNew(l.en[k], terms)
			if len(ws) > 1 {
				l.enFirst[ws[0]] = true
			}
		}
		for _, w := range splitList(c.zh) {
			w = strings.Map(texttok.Fold, w)
			rs := []rune(w)
			if len(rs) == 0 || len(rs) > maxZhRunes {
				continue
			}
			l.zh[w] = appendNew(l.zh[w], terms)
			l.zhFirst[rs[0]] = true
			l.zhMax = max(l.zhMax, len(rs))
		}
	}
	return l
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// appendNew appends the terms of add that dst does not have yet.
func appendNew(dst, add []string) []string {
	for _, t := range add {
		found := false
		for _, d := range dst {
			if d == t {
				found = true
				break
			}
		}
		if !found {
			dst = append(dst, t)
		}
	}
	return dst
}

// routeRE finds a request for a way from one place to another: "from A to
// B", "从A到B", "A到B多远".
var routeRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\bfrom\b.+\bto\b|从.+[到去至]|\p{Han}到\p{Han}+(多远|多久|多长|多少公里|多少里|怎么走|怎么去|要多)`)
})

// routeTerms are the terms a route request adds.
var routeTerms = sync.OnceValue(func() []string { return textTerms("origin destination directions route travel", nil) })

// coordRE finds a latitude, longitude pair: "48.85, 2.35".
var coordRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-?\d{1,3}\.\d+\s*[,，]\s*-?\d{1,3}\.\d+`) })

// coordTerms are the terms a pair of coordinates adds.
var coordTerms = sync.OnceValue(func() []string { return textTerms("coordinates latitude longitude location address", nil) })

// addressRE finds a street address: "1600 Amphitheatre Parkway", "10
// Downing St", "中山路88号".
var addressRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b\d{1,5}\s+(\pL+\s+){1,4}(street|st|avenue|ave|road|rd|boulevard|blvd|parkway|pkwy|lane|ln|drive|dr|way|place|square|sq|court|ct|highway|hwy)\b|\p{Han}[路街道巷]\s*\d+\s*号`)
})

// addressTerms are the terms an address adds.
var addressTerms = sync.OnceValue(func() []string { return textTerms("address geocode location", nil) })

// expand returns the groups of terms the concepts named in a folded
// query add, one group for each trigger: the longest English phrase at
// each word (question words count, though the index drops them as stop
// words), the longest Chinese word at each character of a CJK run, and
// the shapes of a route, an address and coordinates. A group is scored as
// one word of the query (see Index.Search), so a concept with many terms
// does not outweigh the query's own words.
func (l *lexicon) expand(folded string, segs []texttok.Segment) [][]string {
	var out [][]string
	var words []string
	for _, seg := range segs {
		if !seg.CJK {
			words = append(words, stem(string(seg.Runes)))
			continue
		}
		rs := seg.Runes
		for i := 0; i < len(rs); {
			n := 0
			if l.zhFirst[rs[i]] {
				n = min(l.zhMax, len(rs)-i)
			}
			for ; n > 0; n-- {
				if ts, ok := l.zh[string(rs[i:i+n])]; ok {
					out = appendGroup(out, ts)
					break
				}
			}
			i += max(n, 1)
		}
	}
	var key []byte // the phrase being looked up
	var ends [maxPhraseWords + 1]int
	for i := 0; i < len(words); {
		n := 1
		if l.enFirst[words[i]] {
			n = min(maxPhraseWords, len(words)-i)
		}
		key = key[:0]
		for j := range n {
			if j > 0 {
				key = append(key, ' ')
			}
			key = append(key, words[i+j]...)
			ends[j+1] = len(key)
		}
		for ; n > 0; n-- {
			if ts, ok := l.en[string(key[:ends[n]])]; ok {
				out = appendGroup(out, ts)
				break
			}
		}
		i += max(n, 1)
	}
	// The regular expressions run only on queries that can match them.
	if (strings.Contains(folded, "from") || strings.ContainsRune(folded, '从') || strings.ContainsRune(folded, '到')) && routeRE().MatchString(folded) {
		out = appendGroup(out, routeTerms())
	}
	if hasDigit(folded) {
		if addressRE().MatchString(folded) {
			out = appendGroup(out, addressTerms())
		}
		if strings.IndexByte(folded, '.') >= 0 && coordRE().MatchString(folded) {
			out = appendGroup(out, coordTerms())
		}
	}
	return out
}

// appendGroup appends a group unless the query named its concept already
// (a concept asked for twice counts once) or the query has named
// maxGroups concepts.
func appendGroup(gs [][]string, g []string) [][]string {
	if len(gs) >= maxGroups {
		return gs
	}
	for _, x := range gs {
		if len(x) == len(g) && &x[0] == &g[0] {
			return gs
		}
	}
	return append(gs, g)
}

// maxGroups bounds the concept groups of one query, which bounds its
// cost.
const maxGroups = 48

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if '0' <= s[i] && s[i] <= '9' {
			return true
		}
	}
	return false
}
