// Package texttok cuts Chinese, Japanese, Korean and Latin text into the
// terms a search index holds: lower-cased Latin words and numbers, and
// bigrams of CJK runs (which are written without spaces between words).
//
// It is shared by the knowledge base (package kb, an FTS5 index) and the
// tool search (package toolsearch, an in-memory index), so that a query
// is cut the same way wherever it is searched; it lives here, below both,
// so that neither has to import the other.
package texttok

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxWordRunes bounds a Latin token; longer runs (hashes, base64) are cut.
const MaxWordRunes = 48

// IsCJK reports whether r is written without spaces between words: Han,
// kana and Hangul.
func IsCJK(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r >= 0x4E00 && r <= 0x9FFF: // the common CJK ideographs, first
		return true
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r) || r == 'ー'
}

// fold maps full-width ASCII (ＡＢＣ１２３) to ASCII and lower-cases.
func Fold(r rune) rune {
	switch {
	case r >= 0xFF01 && r <= 0xFF5E:
		r -= 0xFEE0
	case r >= 0x2E80 && r < 0xA640, r >= 0xAC00 && r < 0xD800:
		return r // CJK and Hangul have no case
	}
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	}
	return unicode.ToLower(r)
}

// Segment is a run of text of one kind: a CJK run or a Latin word.
type Segment struct {
	// Runes are the folded (lower-cased, full-width to ASCII) characters.
	Runes []rune
	// CJK reports a run of CJK characters rather than a Latin word.
	CJK bool
}

// Segments splits text into CJK runs and Latin/number words; everything
// else (spaces, punctuation, symbols) separates them.
func Segments(text string) []Segment {
	var out []Segment
	var cur []rune
	curCJK := false
	flush := func() {
		if len(cur) > 0 {
			out = append(out, Segment{Runes: cur, CJK: curCJK})
			cur = nil
		}
	}
	for _, r := range text {
		r = Fold(r)
		switch {
		case IsCJK(r):
			if !curCJK {
				flush()
			}
			curCJK = true
			cur = append(cur, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			if curCJK {
				flush()
			}
			curCJK = false
			if len(cur) < MaxWordRunes {
				cur = append(cur, r)
			}
		default:
			flush()
		}
	}
	flush()
	return out
}

// IndexTokens returns the tokens stored in the index for a text, separated
// by spaces: lower-cased Latin words and numbers, the bigrams of each CJK
// run, and the last character of each CJK run on its own. Every CJK
// character thus starts some token, so a one-character query is a prefix
// query ("假"*) that finds every occurrence of the character.
//
// It works on bytes: ASCII without decoding, and CJK characters (which
// fold leaves as they are) copied from the text rather than re-encoded.
func IndexTokens(text string) string {
	// A CJK character (3 bytes) becomes a bigram and a space (7 bytes).
	b := make([]byte, 0, len(text)*7/3+8)
	prev := -1 // byte offset of the previous CJK character of the current run, or -1
	word := 0  // runes of the current Latin word written so far
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			default:
				if prev >= 0 {
					b = append(b, text[prev:i-1]...)
					b = append(b, ' ')
					prev = -1
				}
				if word > 0 {
					b = append(b, ' ')
					word = 0
				}
				continue
			}
			if prev >= 0 {
				b = append(b, text[prev:i-1]...)
				b = append(b, ' ')
				prev = -1
			}
			if word < MaxWordRunes {
				b = append(b, c)
				word++
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		f := Fold(r)
		switch {
		case IsCJK(f) && f == r:
			if word > 0 {
				b = append(b, ' ')
				word = 0
			}
			if prev >= 0 {
				b = append(b, text[prev:i+size]...)
				b = append(b, ' ')
			}
			prev = i
		case IsCJK(f):
			// Not reached (fold leaves CJK as it is), but keeps the
			// fast path above honest.
			return IndexTokensRunes(text)
		case unicode.IsLetter(f) || unicode.IsDigit(f) || unicode.Is(unicode.Mn, f):
			if prev >= 0 {
				b = append(b, text[prev:i]...)
				b = append(b, ' ')
				prev = -1
			}
			if word < MaxWordRunes {
				b = utf8.AppendRune(b, f)
				word++
			}
		default:
			if prev >= 0 {
				b = append(b, text[prev:i]...)
				b = append(b, ' ')
				prev = -1
			}
			if word > 0 {
				b = append(b, ' ')
				word = 0
			}
		}
		i += size
	}
	if prev >= 0 {
		b = append(b, text[prev:]...)
		b = append(b, ' ')
	}
	if word > 0 {
		b = append(b, ' ')
	}
	return string(b)
}

// IndexTokensRunes is IndexTokens rune by rune, for text the byte-level
// version does not handle.
func IndexTokensRunes(text string) string {
	var b strings.Builder
	b.Grow(len(text) * 2)
	var prev rune // the previous CJK character of the current run, or 0
	word := 0     // runes of the current Latin word written so far
	endRun := func() {
		if prev != 0 {
			b.WriteRune(prev)
			b.WriteByte(' ')
			prev = 0
		}
	}
	endWord := func() {
		if word > 0 {
			b.WriteByte(' ')
			word = 0
		}
	}
	for _, r := range text {
		r = Fold(r)
		switch {
		case IsCJK(r):
			endWord()
			if prev != 0 {
				b.WriteRune(prev)
				b.WriteRune(r)
				b.WriteByte(' ')
			}
			prev = r
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			endRun()
			if word < MaxWordRunes {
				b.WriteRune(r)
				word++
			}
		default:
			endRun()
			endWord()
		}
	}
	endRun()
	endWord()
	return b.String()
}

// englishStop are English words too common to help find a document.
var englishStop = map[string]bool{
	"a": true, "an": true, "the": true, "is": true, "are": true, "was": true, "were": true, "be": true,
	"what": true, "which": true, "who": true, "how": true, "when": true, "where": true, "why": true,
	"do": true, "does": true, "did": true, "can": true, "could": true, "should": true, "would": true,
	"i": true, "me": true, "my": true, "we": true, "our": true, "you": true, "your": true, "it": true,
	"of": true, "to": true, "in": true, "on": true, "at": true, "for": true, "from": true, "by": true,
	"with": true, "and": true, "or": true, "about": true, "there": true, "this": true, "that": true,
	"please": true, "tell": true, "much": true, "many": true, "any": true, "if": true, "get": true,
}

// chineseFiller are question words and particles removed from a query
// before it is cut into bigrams: they say how something is asked, not what
// about, and their bigrams only add noise.
var chineseFiller = []string{
	"请问", "什么", "怎么", "怎样", "如何", "多少", "是否", "能否", "可不可以", "哪些", "哪个",
	"一下", "吗", "呢", "吧", "啊", "呀", "的",
}

// QueryTerms is a query cut into index terms.
type QueryTerms struct {
	// Words are Latin words and CJK bigrams.
	Words []string
	// Chars are the characters of one- and two-character CJK runs, searched
	// as prefixes when words find nothing.
	Chars []string
}

// MaxQueryTerms bounds the terms of one query, which bounds its cost.
const MaxQueryTerms = 48

// Query cuts a query the way IndexTokens cuts documents: Latin
// words (without English stop words, unless nothing else is left) and CJK
// bigrams, after removing Chinese question words and particles.
func Query(q string) QueryTerms {
	folded := strings.Map(Fold, q)
	for _, f := range chineseFiller {
		folded = strings.ReplaceAll(folded, f, " ")
	}
	var t QueryTerms
	var stops []string
	seen := map[string]bool{}
	add := func(dst *[]string, s string) {
		if !seen[s] && len(*dst) < MaxQueryTerms {
			seen[s] = true
			*dst = append(*dst, s)
		}
	}
	for _, seg := range Segments(folded) {
		rs := seg.Runes
		if !seg.CJK {
			if w := string(rs); englishStop[w] {
				stops = append(stops, w)
			} else {
				add(&t.Words, w)
			}
			continue
		}
		for i := 0; i+1 < len(rs); i++ {
			add(&t.Words, string(rs[i:i+2]))
		}
		if len(rs) <= 2 {
			for _, r := range rs {
				add(&t.Chars, string(r))
			}
		}
	}
	if len(t.Words) == 0 && len(t.Chars) == 0 {
		for _, w := range stops {
			add(&t.Words, w)
		}
	}
	return t
}

// IsStopWord reports whether w (lower-case) is an English word too common
// to help find anything, one Query drops unless nothing else is left.
func IsStopWord(w string) bool { return englishStop[w] }
