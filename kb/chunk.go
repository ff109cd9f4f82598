package kb

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxChunkRunes is the size limit of a chunk in runes (characters). About
// 500 characters is a paragraph or two: small enough for a hit to be on one
// topic, large enough to carry the answer with its context.
const MaxChunkRunes = 500

// Chunk is one indexed piece of a document.
type Chunk struct {
	// Heading is the path of Markdown headings the chunk sits under, joined
	// by " › " (empty before the first heading). It is indexed with the
	// document title so every chunk of a section matches its heading.
	Heading string
	// Text is the chunk's text.
	Text string
}

// Indexed returns what the index holds of the chunk and what search
// quotes: its heading path, a newline and its text, or the text alone
// before the first heading.
func (c Chunk) Indexed() string {
	if c.Heading == "" {
		return c.Text
	}
	return c.Heading + "\n" + c.Text
}

// normalizeNewlines turns Windows (CRLF) and old Mac (CR) line endings into
// "\n" and drops a leading byte-order mark.
func normalizeNewlines(s string) string {
	s = strings.TrimPrefix(s, "\uFEFF")
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// SplitChunks cuts a document into chunks of at most max runes (max <= 0
// means MaxChunkRunes).
//
// Paragraphs (separated by blank lines; a fenced code block stays whole)
// are grouped into sections by Markdown headings, and a section's
// paragraphs are packed together while they fit, so a heading stays with
// its section when the section is small. A paragraph over the limit is split
// into sentences (ending in 。！？.!? or a line break), packed the same way,
// with the last sentence of a chunk repeated at the start of the next so a
// fact on the border is found whole. A single sentence over the limit is
// cut at the limit.
func SplitChunks(text string, max int) []Chunk {
	if max <= 0 {
		max = MaxChunkRunes
	}
	var out []Chunk
	for _, sec := range sections(paragraphs(normalizeNewlines(text))) {
		out = append(out, packSection(sec, max)...)
	}
	return out
}

// paragraphs splits text on blank lines, keeping fenced code blocks whole.
// Trailing spaces are trimmed from each line.
func paragraphs(text string) []string {
	var out []string
	var cur []string
	fence := ""
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, "\n"))
			cur = cur[:0]
		}
	}
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimRightFunc(line, unicode.IsSpace)
		trimmed := strings.TrimLeft(line, " ")
		if fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			fence = trimmed[:3]
		} else if fence != "" && strings.HasPrefix(trimmed, fence) {
			fence = ""
			cur = append(cur, line)
			continue
		}
		if fence == "" && trimmed == "" {
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return out
}

// headingLevel returns the level (1–6) and text of an ATX heading line
// ("## Text"), or 0.
func headingLevel(line string) (int, string) {
	line = strings.TrimLeft(line, " ")
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(line) && line[n] != ' ' && line[n] != '\t') {
		return 0, ""
	}
	title := strings.TrimSpace(line[n:])
	title = strings.TrimSpace(strings.TrimRight(title, "#"))
	if title == "" {
		return 0, ""
	}
	return n, title
}

// section is a run of paragraphs under one heading path.
type section struct {
	heading string
	paras   []string
}

// sections groups paragraphs by heading. A paragraph starting with a
// heading line opens a section; a section holding nothing but headings is
// merged into the next one, so a document title is not a chunk of its own.
func sections(paras []string) []section {
	var out []section
	var stack []string // heading texts by level - 1
	cur := section{}
	onlyHeadings := true
	for _, p := range paras {
		first, _, _ := strings.Cut(p, "\n")
		if level, title := headingLevel(first); level > 0 {
			if len(cur.paras) > 0 && !onlyHeadings {
				out = append(out, cur)
				cur = section{}
			}
			if len(stack) >= level {
				stack = stack[:level-1]
			}
			for len(stack) < level-1 {
				stack = append(stack, "")
			}
			stack = append(stack, title)
			cur.heading = joinHeadings(stack)
			cur.paras = append(cur.paras, p)
			onlyHeadings = !strings.Contains(p, "\n")
			continue
		}
		cur.paras = append(cur.paras, p)
		onlyHeadings = false
	}
	if len(cur.paras) > 0 {
		out = append(out, cur)
	}
	return out
}

func joinHeadings(stack []string) string {
	var parts []string
	for _, h := range stack {
		if h != "" {
			parts = append(parts, h)
		}
	}
	return strings.Join(parts, " › ")
}

// unit is a piece that packing never splits: a whole paragraph, a sentence
// of a long paragraph, or a cut piece of an over-long sentence.
type unit struct {
	text  string
	runes int
	para  int  // index of the paragraph it comes from
	sent  bool // a whole sentence of a split paragraph: may be overlapped
}

// packSection turns a section into chunks of at most max runes.
func packSection(sec section, max int) []Chunk {
	var units []unit
	for i, p := range sec.paras {
		n := utf8.RuneCountInString(p)
		if n <= max {
			units = append(units, unit{text: p, runes: n, para: i})
			continue
		}
		for _, s := range splitSentences(p) {
			sn := utf8.RuneCountInString(s)
			if sn <= max {
				units = append(units, unit{text: s, runes: sn, para: i, sent: true})
				continue
			}
			for _, piece := range cutRunes(s, max) {
				units = append(units, unit{text: piece, runes: utf8.RuneCountInString(piece), para: i})
			}
		}
	}

	var out []Chunk
	var cur []unit
	size := 0
	emit := func() {
		if text := joinUnits(cur); text != "" {
			out = append(out, Chunk{Heading: sec.heading, Text: text})
		}
	}
	for _, u := range units {
		add := u.runes
		if len(cur) > 0 && cur[len(cur)-1].para != u.para {
			add += 2 // the blank line between paragraphs
		}
		if len(cur) == 0 || size+add <= max {
			cur = append(cur, u)
			size += add
			continue
		}
		emit()
		last := cur[len(cur)-1]
		cur, size = cur[:0], 0
		if last.sent && u.sent && last.para == u.para && last.runes+u.runes <= max {
			cur = append(cur, last)
			size = last.runes
		}
		cur = append(cur, u)
		size += u.runes
	}
	if len(cur) > 0 {
		emit()
	}
	return out
}

// joinUnits joins units: pieces of one paragraph as they were, different
// paragraphs with a blank line.
func joinUnits(units []unit) string {
	var b strings.Builder
	for i, u := range units {
		if i > 0 && units[i-1].para != u.para {
			trimmed := strings.TrimRightFunc(b.String(), unicode.IsSpace)
			b.Reset()
			b.WriteString(trimmed)
			b.WriteString("\n\n")
		}
		b.WriteString(u.text)
	}
	return strings.TrimSpace(b.String())
}

// closers may follow a sentence terminator and still belong to the
// sentence.
const closers = "\"'”’」』）)]】》"

// splitSentences splits a paragraph after each 。！？!? (and a full-width
// ．), after a "." followed by a space or the end, and after each line
// break. Closing quotes and brackets and the following spaces stay with the
// sentence, so concatenating the sentences gives the paragraph back.
func splitSentences(p string) []string {
	var out []string
	start := 0
	rs := []rune(p)
	pos := 0 // byte offset of rs[i]
	offsets := make([]int, len(rs)+1)
	for i, r := range rs {
		offsets[i] = pos
		pos += utf8.RuneLen(r)
	}
	offsets[len(rs)] = pos
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		end := false
		switch r {
		case '。', '！', '？', '!', '?', '．', '\n':
			end = true
		case '.':
			end = i+1 == len(rs) || unicode.IsSpace(rs[i+1]) || strings.ContainsRune(closers, rs[i+1])
		}
		if !end {
			continue
		}
		j := i + 1
		if r != '\n' {
			// A run of terminators ("？！", "...") ends the sentence once.
			for j < len(rs) && strings.ContainsRune("。！？!?．.", rs[j]) {
				j++
			}
			for j < len(rs) && strings.ContainsRune(closers, rs[j]) {
				j++
			}
			for j < len(rs) && (rs[j] == ' ' || rs[j] == '\t' || rs[j] == '\u3000') {
				j++
			}
		}
		out = append(out, p[offsets[start]:offsets[j]])
		start = j
		i = j - 1
	}
	if start < len(rs) {
		out = append(out, p[offsets[start]:])
	}
	return out
}

// cutRunes cuts s into pieces of at most max runes.
func cutRunes(s string, max int) []string {
	var out []string
	for s != "" {
		n, i := 0, 0
		for i < len(s) && n < max {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			n++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}
