package guard

import (
	"html"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Normalize folds text into the form the injection patterns are written
// against, so that look-alike spellings of a phrase cannot slip past them:
//
//   - compatibility forms are folded as NFKC folds them
//     (golang.org/x/text/unicode/norm): full-width ASCII and the
//     ideographic space, mathematical alphanumerics, circled letters, the
//     Unicode space characters, ligatures such as ﬁ, superscripts, Kangxi
//     radicals, half-width katakana;
//   - invisible characters are removed: zero-width space, joiners and
//     non-joiner (U+200B..U+200D), word joiner (U+2060), byte order mark
//     (U+FEFF), soft hyphen, bidirectional controls and variation
//     selectors;
//   - Unicode tag characters (U+E0020..U+E007E), which some models read
//     although they display as nothing, are turned into the ASCII they
//     encode, so hidden text is scanned like visible text;
//   - everything is lower-cased;
//   - accents are folded away: a Latin letter with accents becomes its
//     base letter (é → e, ǘ → u), as do the letters of Latin-1 and Latin
//     Extended-A that carry no decomposition (ı → i, ł → l, ø → o;
//     ligatures such as æ and ß stay), and combining marks are dropped, so
//     "ignoré" and "igno\u0301re" read as "ignore".
//
// Normalize does not undo leet spellings, look-alike letters of other
// scripts or letters spelled out one by one: those rewrites are ambiguous
// (1 may stand for i or l) or change ordinary text (order ids, "a b c"), so
// the scanner applies them to private copies used for matching only. Nor
// does it decode HTML character references, which would make it change its
// own output (&amp;lt; is &lt;, which is <); Scan decodes them once.
//
// The result is always valid UTF-8; invalid input bytes become U+FFFD.
func Normalize(s string) string {
	if !isASCII(s) {
		// NFKC composes too, so a letter and its accent meet as one
		// character for the fold below.
		s = norm.NFKC.String(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < utf8.RuneSelf {
			// ASCII is most text and needs only lower-casing.
			if r >= 'A' && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteByte(byte(r))
			continue
		}
		if isInvisible(r) || isCombiningMark(r) {
			continue
		}
		b.WriteRune(foldLatin(unicode.ToLower(foldTag(r))))
	}
	return b.String()
}

// isCombiningMark reports the combining diacritical marks (the main block,
// its extension and supplement, the marks for symbols and the half marks),
// which put accents on a letter without changing what the letter is.
func isCombiningMark(r rune) bool {
	return r >= 0x0300 && r <= 0x036F || r >= 0x1AB0 && r <= 0x1AFF || r >= 0x1DC0 && r <= 0x1DFF ||
		r >= 0x20D0 && r <= 0x20FF || r >= 0xFE20 && r <= 0xFE2F
}

// latinFold is the base letter of each character from U+00C0 to U+017F,
// lower case, or '.' for those that are not a letter with an accent
// (×, ÷, the ligatures Æ Œ Ĳ, Þ, ß).
const latinFold = "" +
	"aaaaaa.ceeeeiiiidnooooo.ouuuuy.." + // U+00C0 ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖ×ØÙÚÛÜÝÞß
	"aaaaaa.ceeeeiiiidnooooo.ouuuuy.y" + // U+00E0 àáâãäåæçèéêëìíîïðñòóôõö÷øùúûüýþÿ
	"aaaaaaccccccccddddeeeeeeeeeegggg" + // U+0100 ĀāĂăĄąĆćĈĉĊċČčĎďĐđĒēĔĕĖėĘęĚěĜĝĞğ
	"gggghhhhiiiiiiiiii..jjkkklllllll" + // U+0120 ĠġĢģĤĥĦħĨĩĪīĬĭĮįİıĲĳĴĵĶķĸĹĺĻļĽľĿ
	"lllnnnnnnnnnoooooo..rrrrrrssssss" + // U+0140 ŀŁłŃńŅņŇňŉŊŋŌōŎŏŐőŒœŔŕŖŗŘřŚśŜŝŞş
	"ssttttttuuuuuuuuuuuuwwyyyzzzzzzs" //   U+0160 ŠšŢţŤťŦŧŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽžſ

// foldLatin returns the base letter of an accented Latin letter: from the
// table for Latin-1 and Latin Extended-A (which also folds the letters that
// have no decomposition, such as ł), else the ASCII letter the rune's
// canonical decomposition starts with when the rest is combining marks
// (ǘ, ṩ). Any other rune is returned unchanged.
func foldLatin(r rune) rune {
	if r >= 0xC0 && r <= 0x17F {
		if c := latinFold[r-0xC0]; c != '.' {
			return rune(c)
		}
		return r
	}
	if r < 0x180 || r > 0x24F && r < 0x1E00 || r > 0x1EFF {
		return r // only Latin Extended-B and Latin Extended Additional are left
	}
	d := norm.NFD.String(string(r))
	base, n := utf8.DecodeRuneInString(d)
	if base >= 0x80 || !unicode.IsLetter(base) {
		return r
	}
	for _, m := range d[n:] {
		if !unicode.Is(unicode.Mn, m) {
			return r
		}
	}
	return base
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isInvisible reports characters that render as nothing and are used to
// break a phrase apart without changing how it looks.
func isInvisible(r rune) bool {
	switch {
	case r == 0x00AD, // soft hyphen
		r == 0x034F,              // combining grapheme joiner
		r == 0x061C,              // Arabic letter mark
		r == 0x115F, r == 0x1160, // Hangul fillers
		r == 0x17B4, r == 0x17B5, // Khmer inherent vowels
		r >= 0x180B && r <= 0x180F, // Mongolian variation selectors, vowel separator
		r >= 0x200B && r <= 0x200F, // zero-width space, non-joiner, joiner, LRM, RLM
		r >= 0x202A && r <= 0x202E, // bidirectional embeddings and overrides
		r >= 0x2060 && r <= 0x2064, // word joiner, invisible operators
		r >= 0x2066 && r <= 0x206F, // bidirectional isolates, deprecated format characters
		r == 0x3164, r == 0xFFA0,   // Hangul fillers
		r >= 0xFE00 && r <= 0xFE0F,   // variation selectors
		r == 0xFEFF,                  // byte order mark, zero-width no-break space
		r >= 0xE0100 && r <= 0xE01EF, // variation selectors supplement
		r >= 0xE0000 && r <= 0xE001F, // tag characters outside the ASCII mirror
		r == 0xE007F:                 // cancel tag
		return true
	}
	return false
}

// foldTag turns a Unicode tag character, which mirrors ASCII, into the
// ASCII it encodes (NFKC leaves tags alone); every other rune is returned
// unchanged.
func foldTag(r rune) rune {
	if r >= 0xE0020 && r <= 0xE007E {
		return r - 0xE0000
	}
	return r
}

// confusable returns the ASCII look-alike of r from confusables. Most text
// is ASCII or CJK ideographs, neither of which is in the table, so those
// skip the map.
func confusable(r rune) (rune, bool) {
	if r < 0x80 || r >= 0x4E00 && r <= 0x9FFF {
		return r, false
	}
	c, ok := confusables[r]
	return c, ok
}

// confusables maps letters that look like Latin ones (after lower-casing):
// Cyrillic, Greek and Armenian letters, Latin small capitals and other
// Latin shapes; and CJK brackets and bars that look like ASCII ones. It is
// applied to matching copies only.
var confusables = map[rune]rune{
	'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x',
	'і': 'i', 'ј': 'j', 'ѕ': 's', 'ԁ': 'd', 'ӏ': 'l', 'һ': 'h', 'ԛ': 'q', 'ԝ': 'w',
	'α': 'a', 'ε': 'e', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x', 'ϲ': 'c',
	// Armenian.
	'օ': 'o', 'ս': 'u', 'ց': 'g', 'հ': 'h', 'ո': 'n', 'ք': 'p', 'զ': 'q',
	// Latin small capitals, which are lower-case letters of their own.
	'ᴀ': 'a', 'ʙ': 'b', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e', 'ꜰ': 'f', 'ɢ': 'g', 'ʜ': 'h', 'ɪ': 'i',
	'ᴊ': 'j', 'ᴋ': 'k', 'ʟ': 'l', 'ᴍ': 'm', 'ɴ': 'n', 'ᴏ': 'o', 'ᴘ': 'p', 'ʀ': 'r', 'ꜱ': 's',
	'ᴛ': 't', 'ᴜ': 'u', 'ᴠ': 'v', 'ᴡ': 'w', 'ʏ': 'y', 'ᴢ': 'z',
	// Other Latin shapes of a, g, j and l.
	'ɑ': 'a', 'ɡ': 'g', 'ȷ': 'j', 'ℓ': 'l',
	'【': '[', '】': ']', '〔': '[', '〕': ']', '〖': '[', '〗': ']', '〘': '[', '〙': ']',
	'〈': '<', '〉': '>', '《': '<', '》': '>', '‹': '<', '›': '>', '«': '<', '»': '>',
	'｜': '|', '︱': '|', '│': '|', '＃': '#',
	// The word-start mark of SentencePiece tokens (<｜begin▁of▁sentence｜>).
	'▁': '_',
}

// matchForms returns the copies of normalised text the English patterns
// run against: look-alike letters replaced, traditional Chinese characters
// simplified (for an English verb before a Chinese phrase), letters spelled
// out one by one joined into words (see joinSpelledOut), and leet digits
// and symbols read as letters, but only inside tokens that already contain
// a letter, so that numbers (order ids like A-1024, amounts, dates) stay
// numbers. Leet "1" is ambiguous, so a second copy reads it as "l" when
// that differs.
func matchForms(norm string) []string {
	base := []rune(norm)
	for i, r := range base {
		if c, ok := confusable(r); ok {
			base[i] = c
		} else if c, ok := simplified(r); ok {
			base[i] = c
		}
	}
	base = joinSpelledOut(base)
	asI := make([]rune, len(base))
	asL := make([]rune, len(base))
	copy(asI, base)
	copy(asL, base)
	for start := 0; start < len(base); {
		if !isLeetTokenRune(base[start]) {
			start++
			continue
		}
		end, hasLetter := start, false
		for end < len(base) && isLeetTokenRune(base[end]) {
			hasLetter = hasLetter || base[end] >= 'a' && base[end] <= 'z'
			end++
		}
		if hasLetter {
			for i := start; i < end; i++ {
				if l, ok := leetLetter(base[i]); ok {
					asI[i], asL[i] = l, l
					if base[i] == '1' {
						asL[i] = 'l'
					}
				}
			}
		}
		start = end
	}
	i, l := string(asI), string(asL)
	if i == l {
		return []string{i}
	}
	return []string{i, l}
}

// leetLetter maps the common leet substitutions to letters; "1" maps to
// "i" here and to "l" in the second matching copy.
func leetLetter(r rune) (rune, bool) {
	switch r {
	case '0':
		return 'o', true
	case '1':
		return 'i', true
	case '3':
		return 'e', true
	case '4', '@':
		return 'a', true
	case '5', '$':
		return 's', true
	case '7':
		return 't', true
	}
	return r, false
}

func isLeetTokenRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '@' || r == '$'
}

// minSpelledLetters is how many letters a spelled-out run needs before
// joinSpelledOut joins it: "e.g." and "i.e." stay as they are.
const minSpelledLetters = 3

// joinSpelledOut joins words spelled out letter by letter with one space,
// dot or hyphen between the letters ("i g n o r e", "i.g.n.o.r.e",
// "i-g-n-o-r-e" become "ignore"). A run is joined only when each of its
// tokens is a single character (a letter or a leet digit or symbol) and it
// has at least minSpelledLetters letters, so words, numbers and initials
// such as "T-shirt", "A-1024" or "e.g." are left alone; the letters of
// ordinary text that it does join ("a b c", "U.S.A.") only become a word
// nobody's pattern names. rs is changed in place and returned when there is
// nothing to join.
func joinSpelledOut(rs []rune) []rune {
	var out []rune // nil until the first join
	copied := 0    // rs[copied:] is not yet in out
	for i := 0; i < len(rs); {
		if !isSpelledChar(rs, i) {
			i++
			continue
		}
		end, letters := i, 0
		if rs[i] >= 'a' && rs[i] <= 'z' {
			letters++
		}
		for end+2 < len(rs) && isSpellSeparator(rs[end+1]) && isSpelledChar(rs, end+2) {
			end += 2
			if rs[end] >= 'a' && rs[end] <= 'z' {
				letters++
			}
		}
		if letters >= minSpelledLetters {
			if out == nil {
				out = make([]rune, 0, len(rs))
			}
			out = append(out, rs[copied:i]...)
			for k := i; k <= end; k += 2 {
				out = append(out, rs[k])
			}
			copied = end + 1
		}
		i = end + 1
	}
	if out == nil {
		return rs
	}
	return append(out, rs[copied:]...)
}

// isSpelledChar reports whether rs[i] is a token of one character: a
// letter, digit, @ or $ with none of those on either side.
func isSpelledChar(rs []rune, i int) bool {
	return isLeetTokenRune(rs[i]) && (i == 0 || !isLeetTokenRune(rs[i-1])) && (i+1 == len(rs) || !isLeetTokenRune(rs[i+1]))
}

func isSpellSeparator(r rune) bool { return r == ' ' || r == '.' || r == '-' }

// hanForm is the copy the Chinese patterns run against: normalised, with
// look-alikes replaced, traditional characters written simplified (see
// simplified) and all white space removed (Chinese has no spaces between
// words, so spaces inside a Chinese phrase only serve to hide it).
// Punctuation is kept: it tells a question from an instruction.
func hanForm(norm string) string {
	var b strings.Builder
	b.Grow(len(norm))
	for _, r := range norm {
		if unicode.IsSpace(r) {
			continue
		}
		if c, ok := confusable(r); ok {
			r = c
		} else if c, ok := simplified(r); ok {
			r = c
		}
		b.WriteRune(r)
	}
	return b.String()
}

// traditional maps the traditional forms of the characters the Chinese
// patterns are written with to their simplified forms (and 妳, the "you"
// written to a woman, to 你). It is not a general conversion table: a
// character the patterns do not use needs no entry.
var traditional = map[rune]rune{
	'無': '无', '視': '视', '會': '会', '別': '别', '記': '记', '拋': '抛', '開': '开', '棄': '弃',
	'丟': '丢', '過': '过', '繞': '绕', '蓋': '盖', '來': '来', '統': '统', '發': '发', '認': '认',
	'預': '预', '給': '给', '設': '设', '這': '这', '詞': '词', '規': '规', '則': '则', '約': '约',
	'隱': '隐', '內': '内', '實': '实', '當': '当', '語': '语', '欄': '栏', '將': '将', '經': '经',
	'為': '为', '爲': '为', '變': '变', '嗎': '吗', '麼': '么', '麽': '么', '還': '还', '機': '机',
	'員': '员', '貓': '猫', '沒': '没', '輸': '输', '洩': '泄', '復': '复', '複': '复', '訴': '诉',
	'說': '说', '寫': '写', '唸': '念', '顯': '显', '從': '从', '現': '现', '後': '后', '請': '请',
	'須': '须', '妳': '你', '個': '个', '們': '们', '裡': '里', '裏': '里',
}

// traditionalSet has a bit for each key of traditional, so that hanForm
// skips the map for the many characters that are not in it.
var traditionalSet = func() (set [(0x9FFF - 0x4E00 + 64) / 64]uint64) {
	for r := range traditional {
		i := r - 0x4E00
		set[i/64] |= 1 << (i % 64)
	}
	return set
}()

// simplified returns the simplified form of a traditional character from
// traditional.
func simplified(r rune) (rune, bool) {
	if r < 0x4E00 || r > 0x9FFF {
		return r, false
	}
	if i := r - 0x4E00; traditionalSet[i/64]&(1<<(i%64)) == 0 {
		return r, false
	}
	c, ok := traditional[r]
	return c, ok
}

// decodeReferences decodes the HTML character references in s, one level,
// as html.UnescapeString does (numeric ones with or without the
// semicolon, every named one of HTML), and reports whether anything was
// decoded. s is normalised text, lower case, so the references that HTML
// spells only with capitals and that space or hide text (&Tab;,
// &ZeroWidthSpace;, …) are decoded in their lower-case spelling too.
func decodeReferences(s string) (string, bool) {
	d := html.UnescapeString(lowerOnlyReferences().Replace(s))
	return d, d != s
}

// capitalisedReferences are the HTML names of white space, invisible
// characters and the brackets and bars of chat tags that HTML spells only
// with capitals.
var capitalisedReferences = []string{
	"Tab", "NewLine", "NoBreak", "ZeroWidthSpace", "NegativeVeryThinSpace", "NegativeThinSpace",
	"NegativeMediumSpace", "NegativeThickSpace", "InvisibleTimes", "InvisibleComma", "ApplyFunction",
	"MediumSpace", "VeryThinSpace", "ThinSpace", "NonBreakingSpace", "VerticalLine", "VerticalBar",
	"LeftAngleBracket", "RightAngleBracket",
}

// lowerOnlyReferences decodes the lower-case spellings of
// capitalisedReferences into what HTML decodes the capitalised ones to. It
// runs before html.UnescapeString and so decodes one level with it:
// "&amp;tab;" holds no "&tab;". It is built on first use: building it
// fills html's table of references, which every start of the binary would
// otherwise pay for.
var lowerOnlyReferences = sync.OnceValue(func() *strings.Replacer {
	var pairs []string
	for _, name := range capitalisedReferences {
		pairs = append(pairs, "&"+strings.ToLower(name)+";", html.UnescapeString("&"+name+";"))
	}
	return strings.NewReplacer(pairs...)
})
