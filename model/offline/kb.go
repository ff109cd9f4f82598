package offline

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// hit is one knowledge-base search hit.
type hit struct {
	No    int    `json:"no"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// The fence the search puts around each chunk, marking it as data.
const (
	fenceOpen  = "<<<DATA"
	fenceClose = "DATA>>>"
)

// parseHits reads the search output {"notice", "hits": [...]} (or a bare
// array of hits). Output that is not JSON, as an MCP server might send, is
// read as fenced chunks numbered in order. Hits without a number get their
// position.
func parseHits(content string) []hit {
	var hits []hit
	var obj struct {
		Hits []hit `json:"hits"`
	}
	if err := json.Unmarshal([]byte(content), &obj); err == nil {
		hits = obj.Hits
	} else if err := json.Unmarshal([]byte(content), &hits); err != nil {
		hits = fencedHits(content)
	}
	for i := range hits {
		if hits[i].No <= 0 {
			hits[i].No = i + 1
		}
		hits[i].Text = stripFence(hits[i].Text)
	}
	return hits
}

// fencedHits cuts plain text into the fenced chunks it contains.
func fencedHits(content string) []hit {
	var hits []hit
	for {
		i := strings.Index(content, fenceOpen)
		if i < 0 {
			return hits
		}
		content = content[i+len(fenceOpen):]
		j := strings.Index(content, fenceClose)
		if j < 0 {
			return append(hits, hit{Text: content})
		}
		hits = append(hits, hit{Text: content[:j]})
		content = content[j+len(fenceClose):]
	}
}

// stripFence removes the data fence around a chunk.
func stripFence(text string) string {
	if i := strings.Index(text, fenceOpen); i >= 0 {
		text = text[i+len(fenceOpen):]
	}
	if j := strings.LastIndex(text, fenceClose); j >= 0 {
		text = text[:j]
	}
	return strings.TrimSpace(text)
}

// candidate is a sentence of a hit that may answer the question.
type candidate struct {
	no       int
	sentence string
	score    int
	// matched is how many of the question's concepts it has (score
	// without the bonus for numbers).
	matched int
	// rank is the position of its hit in the search results.
	rank int
	// section is the index of the hit and heading the sentence is under.
	section int
}

// maxHits and maxSentences bound what an answer quotes.
const (
	maxHits      = 3
	maxSentences = 3
)

// kbAnswer answers the question from the search output with [n] citations,
// or says it does not know: it quotes the sentences of the top hits that
// share the most words (CJK bigrams) with the question, and never adds
// anything of its own.
func kbAnswer(l lang, question, content string) string {
	picks := bestSentences(question, parseHits(content))
	if len(picks) == 0 {
		return l.pick("抱歉，知识库里没有找到相关信息。", "I don't know: I found nothing about that in the knowledge base.")
	}
	cited := make([]string, len(picks))
	for i, p := range picks {
		cited[i] = cite(p.sentence, p.no)
	}
	if l == chinese {
		return "根据知识库：" + strings.Join(cited, "")
	}
	for _, p := range picks {
		if hasCJK(p.sentence) {
			// Say why an English question gets Chinese text: the knowledge
			// base is quoted, never translated.
			return "According to the knowledge base (quoted in Chinese): " + strings.Join(cited, " ")
		}
	}
	return "According to the knowledge base: " + strings.Join(cited, " ")
}

// bestSentences scores the sentences of the top hits against the question.
// A heading or a question line in a chunk (FAQ style: "问：…？答：…") is not
// quoted but lends its words to the sentences after it, because the answer
// itself rarely repeats the question's words.
//
// The question is cut into concepts (see concepts): its tokens, and for an
// English question the glossary entries it uses, which a sentence has when
// it has the English phrase or one of the Chinese terms. A sentence
// qualifies when it has enough of them and at least one that is not weak
// (a glossary word for how the question is asked, or for something
// general): "how long" or 工作日 alone is no answer. Enough is two, or one
// for a question of at most three concepts. An English question with two
// topics needs both, short or not: the glossary's Chinese terms are broader
// than what the user typed, and "what is the wifi password?" is not
// answered by a sentence about passwords only.
//
// Qualified sentences are ranked by the concepts they have, plus a bonus
// for numbers when the question asks for an amount ("多少", "how long");
// among equals, sentences of the section that has more of the question's
// concepts come first. The best ones at or above half the top score are
// kept.
func bestSentences(question string, hits []hit) []candidate {
	q := concepts(question)
	if len(q) == 0 {
		return nil
	}
	need := min(2, (len(q)+2)/3)
	if langOf(question) == english {
		topics := 0
		for _, c := range q {
			if !c.weak {
				topics++
			}
		}
		need = max(need, min(2, topics))
	}
	bonus := 0
	if asksAmount(strings.ToLower(question)) {
		bonus = 2
	}
	var cands []candidate
	// covered holds, for each section, the concepts any of its sentences has.
	var covered []map[int]bool
	for rank, h := range hits[:min(maxHits, len(hits))] {
		var context map[string]bool
		covered = append(covered, map[int]bool{})
		for _, line := range strings.Split(h.Text, "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "#") {
				context = tokens(strings.TrimLeft(line, "# "))
				covered = append(covered, map[int]bool{})
				continue
			}
			for _, s := range sentences(stripBullet(line)) {
				if strings.HasSuffix(s, "？") || strings.HasSuffix(s, "?") {
					context = tokens(s)
					covered = append(covered, map[int]bool{})
					continue
				}
				s = stripAnswerLabel(s)
				st := tokens(s)
				for t := range context {
					st[t] = true
				}
				score, topical := 0, false
				for i, c := range q {
					if c.found(st) {
						score++
						topical = topical || !c.weak
						covered[len(covered)-1][i] = true
					}
				}
				if score < need || !topical {
					continue
				}
				matched := score
				if strings.ContainsAny(s, "0123456789") {
					score += bonus
				}
				cands = append(cands, candidate{no: h.No, sentence: s, score: score, matched: matched, rank: rank, section: len(covered) - 1})
			}
		}
	}
	// A sentence with one concept of a short question is weak evidence:
	// it is taken only from the best-ranked hit that has any, so that a
	// word the question shares with another document (VPN in a laptop
	// FAQ) does not add that document's sentence.
	if need == 1 && len(cands) > 0 {
		best := cands[0].rank
		for _, c := range cands {
			best = min(best, c.rank)
		}
		kept := cands[:0]
		for _, c := range cands {
			if c.matched > 1 || c.rank == best {
				kept = append(kept, c)
			}
		}
		cands = kept
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].score != cands[j].score {
			return cands[i].score > cands[j].score
		}
		return len(covered[cands[i].section]) > len(covered[cands[j].section])
	})
	var out []candidate
	seen := map[string]bool{}
	for _, c := range cands {
		if len(out) == maxSentences || c.score*2 < cands[0].score {
			break
		}
		if seen[c.sentence] {
			continue
		}
		seen[c.sentence] = true
		out = append(out, c)
	}
	return out
}

// asksAmount reports a question about a number: a price, a limit, a count or
// a duration.
func asksAmount(lower string) bool {
	return containsAny(lower, "多少", "几", "多久", "怎么算", "计算", "多长", "多大", "标准", "上限", "额度", "费用", "价格", "钱",
		"how much", "how many", "how long", "how soon", "limit", "cost", "price", "allowance", "standard")
}

// stripBullet removes a list marker at the start of a line.
func stripBullet(line string) string {
	for _, p := range []string{"- ", "* ", "• "} {
		if strings.HasPrefix(line, p) {
			return strings.TrimSpace(line[len(p):])
		}
	}
	return line
}

// stripAnswerLabel removes an FAQ answer label such as "答：" or "A:".
func stripAnswerLabel(s string) string {
	for _, p := range []string{"答：", "答:", "A：", "A:"} {
		if strings.HasPrefix(s, p) {
			return strings.TrimSpace(s[len(p):])
		}
	}
	return s
}

// cite puts a citation before the sentence's final punctuation, which is a
// full stop in the sentence's own script.
func cite(sentence string, no int) string {
	s := strings.TrimRight(sentence, "。！？!?.；;，,：: ")
	if hasCJK(s) {
		return fmt.Sprintf("%s[%d]。", s, no)
	}
	return fmt.Sprintf("%s [%d].", s, no)
}
