// Package budget keeps a model request within the model's context window:
// it estimates tokens for Chinese and English text, code and JSON without
// the provider's tokenizer, learns the estimate's error from the usage the
// provider reports, knows the window of common models, plans a request part
// by part, and chooses which turns of a long history to fold into a summary.
//
// It is a library: the host owns sessions and calls it once per request.
// Estimates are deliberately cheap (one pass over the text, no vocabulary)
// because they run on every request over the whole history.
package budget

import (
	"math"
	"unicode"
	"unicode/utf8"

	"github.com/agentapp/agentapp/internal/texttok"
)

// Counts are the features of a text the estimate weighs. They are what
// decides the token count of a byte-pair tokenizer: CJK characters cost
// about one token each (fewer in tokenizers trained on more Chinese),
// English words one or two by length, digits in groups of three,
// punctuation about one per mark, line breaks and indentation one per run.
type Counts struct {
	// CJK counts Han, kana and Hangul characters.
	CJK int
	// CJKPunct counts full-width punctuation (，。：、！？「」…).
	CJKPunct int
	// Words counts runs of ASCII letters; a lower-to-upper case change
	// (readFile) starts a new run, as tokenizers split there.
	Words int
	// Letters counts the letters of those runs.
	Letters int
	// Digits counts groups of up to three digits.
	Digits int
	// Punct counts runs of ASCII punctuation and symbols: a run such as
	// `":"` or `},{` is often one token.
	Punct int
	// PunctExtra counts the marks of those runs beyond the first.
	PunctExtra int
	// Breaks counts runs of white space other than one plain space
	// (line breaks, indentation, tabs).
	Breaks int
	// Other counts the bytes of everything else (accented and other
	// scripts' letters, emoji).
	Other int
	// Raw counts invalid UTF-8 bytes and control characters, which byte
	// pair tokenizers encode a byte at a time.
	Raw int
}

// Count returns the features of s in one pass.
func Count(s string) Counts {
	var c Counts
	word := 0   // letters in the current ASCII word
	digits := 0 // digits in the current run
	space := 0  // white space bytes in the current run
	nl := false // the current white space run has a line break or tab
	prevLow := false
	punct := 0 // marks in the current punctuation run
	endWord := func() {
		if word > 0 {
			c.Words++
			c.Letters += word
			word = 0
		}
		prevLow = false
	}
	endDigits := func() {
		if digits > 0 {
			c.Digits += (digits + 2) / 3
			digits = 0
		}
	}
	endPunct := func() {
		if punct > 0 {
			c.Punct++
			c.PunctExtra += punct - 1
			punct = 0
		}
	}
	endSpace := func() {
		if space > 1 || nl {
			c.Breaks++
		}
		space, nl = 0, false
	}
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			i++
			isLetter := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
			if !isLetter {
				endWord()
			}
			if b < '0' || b > '9' {
				endDigits()
			}
			if b != ' ' && b != '\n' && b != '\t' && b != '\r' {
				endSpace()
			}
			isPunct := b > ' ' && b < 0x7f && !isLetter && (b < '0' || b > '9')
			if !isPunct {
				endPunct()
			}
			switch {
			case isLetter:
				up := b <= 'Z'
				if up && prevLow {
					endWord()
				}
				word++
				prevLow = !up
			case '0' <= b && b <= '9':
				digits++
			case b == ' ':
				space++
			case b == '\n' || b == '\t' || b == '\r':
				space++
				nl = true
			case b < 0x20 || b == 0x7f:
				c.Raw++
			default:
				punct++
			}
			continue
		}
		endWord()
		endDigits()
		endSpace()
		endPunct()
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			c.Raw++
		case texttok.IsCJK(r):
			c.CJK++
		case r >= 0x3000 && r <= 0x303F, r >= 0xFF00 && r <= 0xFFEF, r >= 0x2010 && r <= 0x2027:
			c.CJKPunct++
		case unicode.IsSpace(r):
			c.Breaks++
		default:
			c.Other += size
		}
	}
	endWord()
	endDigits()
	endSpace()
	endPunct()
	return c
}

// Family names a tokenizer family. Models of one family count the same text
// alike; the estimate's weights are fitted per family.
type Family string

// The families the estimate knows. O200k and CL100k are fitted against the
// real tokenizers (testdata/corpus.json holds the texts and their counts).
// CJKDense stands for tokenizers trained on much Chinese (GLM, Qwen,
// DeepSeek): o200k's weights, with a Chinese character at 0.65 token as
// their published vocabularies give; the Calibrator corrects the rest from
// the usage those providers report.
const (
	FamilyO200k    Family = "o200k"
	FamilyCL100k   Family = "cl100k"
	FamilyCJKDense Family = "cjk-dense"
)

// weights are the tokens per unit of each feature of Counts.
type weights struct {
	cjk, cjkPunct, word, letter, digits, punct, punctExtra, breaks, other, raw float64
}

// familyWeights are least-squares fits of Count's features to the real
// tokenizers' counts on testdata/corpus.json (relative error minimised,
// each kind of text weighted alike; a fit on half the samples is as good on
// the other half). Other is set by hand to 0.3 a byte (an emoji about 1.2
// tokens, an accented letter 0.6): the corpus has too little such text for
// a fit, and overestimating it is the safe side. Raw bytes cost one token
// each, as in a byte-level vocabulary.
var familyWeights = map[Family]weights{
	FamilyO200k: {cjk: 0.747, cjkPunct: 0.920, word: 0.804, letter: 0.058, digits: 1.880,
		punct: 0.800, punctExtra: 0.037, breaks: 0.615, other: 0.3, raw: 1},
	FamilyCL100k: {cjk: 1.074, cjkPunct: 1.306, word: 0.828, letter: 0.052, digits: 1.891,
		punct: 0.748, punctExtra: 0.029, breaks: 0.889, other: 0.3, raw: 1},
	FamilyCJKDense: {cjk: 0.65, cjkPunct: 0.920, word: 0.804, letter: 0.058, digits: 1.880,
		punct: 0.800, punctExtra: 0.037, breaks: 0.615, other: 0.3, raw: 1},
}

// Estimator estimates token counts for one tokenizer family. The zero
// value is not usable; make one with NewEstimator. It is safe for
// concurrent use (its only mutable state is an optional Memo, which locks).
type Estimator struct {
	family Family
	w      weights
	memo   *Memo // nil: count every time
}

// NewEstimator returns the estimator of a family; an unknown family gets
// o200k's weights, the most common tokenizer of current models.
func NewEstimator(f Family) *Estimator {
	w, ok := familyWeights[f]
	if !ok {
		f = FamilyO200k
		w = familyWeights[f]
	}
	return &Estimator{family: f, w: w}
}

// Family returns the family whose weights the estimator uses.
func (e *Estimator) Family() Family { return e.family }

// Counts returns the estimate for features already counted.
func (e *Estimator) Counts(c Counts) int {
	w := e.w
	t := w.cjk*float64(c.CJK) + w.cjkPunct*float64(c.CJKPunct) + w.word*float64(c.Words) +
		w.letter*float64(c.Letters) + w.digits*float64(c.Digits) +
		w.punct*float64(c.Punct) + w.punctExtra*float64(c.PunctExtra) + w.breaks*float64(c.Breaks) + w.other*float64(c.Other) + w.raw*float64(c.Raw)
	return int(math.Ceil(t))
}

// Text estimates the tokens of s.
func (e *Estimator) Text(s string) int {
	if e.memo == nil || len(s) < memoMinText {
		return e.Counts(Count(s))
	}
	if n, ok := e.memo.text(s); ok {
		return n
	}
	n := e.Counts(Count(s))
	e.memo.putText(s, n)
	return n
}
