package offline

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// lang is the language an answer is written in.
type lang int

const (
	english lang = iota
	chinese
)

// langOf picks Chinese when s contains any CJK character: the demo's users
// write either Chinese or English, and a Chinese message often carries Latin
// order numbers, so one CJK character is the better signal.
func langOf(s string) lang {
	if hasCJK(s) {
		return chinese
	}
	return english
}

// pick returns zh or en by language.
func (l lang) pick(zh, en string) string {
	if l == chinese {
		return zh
	}
	return en
}

// hasCJK reports whether s contains a Han, kana or Hangul character.
func hasCJK(s string) bool {
	for _, r := range s {
		if isCJK(r) {
			return true
		}
	}
	return false
}

func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// cut shortens s to at most max runes, ending with "…" when it was cut, so
// values stay within the tools' schema limits.
func cut(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	if max <= 1 {
		return string([]rune(s)[:max])
	}
	return strings.TrimSpace(string([]rune(s)[:max-1])) + "…"
}

// oneLine collapses all runs of white space, newlines included, to one space.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// isTerminal reports whether r ends a sentence.
func isTerminal(r rune) bool {
	switch r {
	case '。', '！', '？', '!', '?', '.':
		return true
	}
	return false
}

// sentences splits text into sentences, each keeping its terminator. A '.'
// ends a sentence only before white space or the end, so "3.5" and "e.g."
// inside a sentence mostly survive; newlines always end one. Empty pieces
// are dropped and white space around each sentence is trimmed.
func sentences(text string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if s := strings.TrimSpace(b.String()); s != "" {
			out = append(out, s)
		}
		b.Reset()
	}
	rs := []rune(text)
	for i, r := range rs {
		if r == '\n' || r == '\r' {
			flush()
			continue
		}
		b.WriteRune(r)
		if !isTerminal(r) {
			continue
		}
		next := rune(0)
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		if isTerminal(next) || next == '"' || next == '”' || next == '）' || next == ')' {
			continue // keep "?!" and closing quotes with their sentence
		}
		if (r == '.' || r == '!' || r == '?') && next != 0 && !unicode.IsSpace(next) && !isCJK(next) {
			continue
		}
		flush()
	}
	flush()
	return out
}

// chunks splits an answer into the pieces Stream delivers: sentences with the
// white space that follows them, so that the pieces concatenate to exactly
// the answer.
func chunks(text string) []string {
	var out []string
	start := 0
	rs := []rune(text)
	for i := 0; i < len(rs); i++ {
		if !isTerminal(rs[i]) && rs[i] != '\n' {
			continue
		}
		j := i + 1
		for j < len(rs) && (isTerminal(rs[j]) || unicode.IsSpace(rs[j])) {
			j++
		}
		out = append(out, string(rs[start:j]))
		start = j
		i = j - 1
	}
	if start < len(rs) {
		out = append(out, string(rs[start:]))
	}
	return out
}

// isStopToken reports tokens too common to show that a sentence answers a
// question: English function words and the Chinese question scaffolding
// that tokens produces as bigrams.
func isStopToken(t string) bool {
	switch t {
	case "a", "an", "the", "is", "are", "was", "be", "what", "how", "when", "where", "which",
		"who", "why", "do", "does", "did", "i", "you", "we", "my", "me", "our", "your", "of", "to",
		"in", "for", "on", "at", "and", "or", "can", "could", "it", "this", "that", "with", "by",
		"from", "about", "much", "many", "there", "any", "get", "please", "tell",
		"if", "should", "would", "will", "shall", "may", "might", "must", "have", "has", "had", "been",
		"were", "am", "as", "so", "than", "then", "its", "they", "them", "their", "us", "s", "t", "d",
		"ll", "re", "ve", "m", "need",
		"什么", "多少", "怎么", "如何", "是否", "可以", "我们", "你们", "请问", "一下", "哪些", "是多",
		"是什", "么是", "的是", "是怎", "准是", "吗", "的", "了", "是", "我", "你", "有", "呢", "么", "请":
		return true
	}
	return false
}

// tokens returns the distinct content tokens of s: lower-cased words of
// letters and digits, and bigrams of each run of CJK characters (a lone CJK
// character stands for itself). Bigrams let Chinese match without a word
// segmenter: 住宿标准 and 出差住宿 share 住宿. English plurals are folded, so
// "refunds" matches "refund".
func tokens(s string) map[string]bool {
	out := map[string]bool{}
	add := func(t string) {
		if t != "" && !isStopToken(t) {
			out[t] = true
		}
	}
	var word []rune
	var han []rune
	flushWord := func() {
		// A stop word is dropped before plural folding too: "does" is not
		// the content word "doe".
		if w := strings.ToLower(string(word)); !isStopToken(w) {
			add(stem(w))
		}
		word = word[:0]
	}
	flushHan := func() {
		if len(han) == 1 {
			add(string(han))
		}
		for i := 0; i+1 < len(han); i++ {
			add(string(han[i : i+2]))
		}
		han = han[:0]
	}
	for _, r := range s {
		switch {
		case isCJK(r):
			flushWord()
			han = append(han, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushHan()
			word = append(word, r)
		default:
			flushWord()
			flushHan()
		}
	}
	flushWord()
	flushHan()
	return out
}

// overlap counts the tokens a and b share.
func overlap(a, b map[string]bool) int {
	if len(a) > len(b) {
		a, b = b, a
	}
	n := 0
	for t := range a {
		if b[t] {
			n++
		}
	}
	return n
}

// runeLen counts the characters of s.
func runeLen(s string) int { return utf8.RuneCountInString(s) }

// stem folds a plural English word to its singular, crudely but the same way
// on both sides of a comparison: "refunds" → "refund", "policies" → "policy".
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1]
	}
	return w
}
