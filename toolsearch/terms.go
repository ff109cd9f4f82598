package toolsearch

import (
	"strings"
	"unicode"

	"github.com/agentapp/agentapp/internal/texttok"
)

// splitName turns an identifier into words: read_text_file, get-env,
// readFile and server__tool all become space-separated lower-case words.
func splitName(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	var prev rune
	for _, r := range s {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ':' || r == '/':
			b.WriteByte(' ')
		case unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			b.WriteByte(' ')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}

// stem strips the common English endings so that "files", "filed",
// "file", "creating", "created" and "create" meet. It is deliberately
// crude: the same function cuts documents and queries, so it only has to
// be consistent, not to give real stems ("creat", "issu").
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && (strings.HasSuffix(w, "ies") || strings.HasSuffix(w, "ied")):
		w = w[:n-3] + "y" // modifies, modified: modify
	case n > 6 && (strings.HasSuffix(w, "tions") || strings.HasSuffix(w, "sions")):
		w = w[:n-4] // locations: locat(e)
	case n > 5 && (strings.HasSuffix(w, "tion") || strings.HasSuffix(w, "sion")):
		w = w[:n-3] // creation meets create(d), location locate, relation related
	case n > 5 && strings.HasSuffix(w, "ing"):
		w = w[:n-3]
	case n > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		w = w[:n-2]
	case n > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes")):
		w = w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		w = w[:n-1]
	}
	n = len(w)
	switch {
	case n > 3 && w[n-1] == 'e':
		w = w[:n-1] // create, creat(ed): one form
	case n > 3 && w[n-1] == w[n-2] && strings.IndexByte("bdgmnprt", w[n-1]) >= 0:
		w = w[:n-1] // runn(ing), mapp(ed)
	}
	return w
}

// textTerms cuts text into index terms: stemmed Latin words (English stop
// words dropped) and, for CJK runs, their bigrams and the characters of
// runs of one, with texttok's folding so a full-width query still matches.
func textTerms(text string, dst []string) []string {
	return segmentTerms(texttok.Segments(splitName(text)), dst)
}

// segmentTerms is textTerms on text already cut into segments.
func segmentTerms(segs []texttok.Segment, dst []string) []string {
	for _, seg := range segs {
		rs := seg.Runes
		if !seg.CJK {
			w := string(rs)
			if !texttok.IsStopWord(w) {
				dst = append(dst, stem(w))
			}
			continue
		}
		if len(rs) == 1 {
			dst = append(dst, string(rs))
		}
		for i := 0; i+1 < len(rs); i++ {
			dst = append(dst, string(rs[i:i+2]))
		}
	}
	return dst
}
