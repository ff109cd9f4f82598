package host

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// Source is a knowledge-base passage an answer cites as [No]. Every front
// end shows sources in this one shape: the chat's JSON output, the chat
// API's done event and the page's history.
//
// A document is listed once, at its first citation: when the answer cites
// two passages of one document ([1] and [3]), the entry is No 1 with Also
// [3], so every [n] of the answer (which is shown as it is streamed, and
// so cannot be renumbered) still finds its entry.
type Source struct {
	No    int    `json:"no"`
	DocID string `json:"docId"`
	Title string `json:"title"`
	// Also are the answer's other citation numbers of this document, in
	// citation order.
	Also []int `json:"also,omitempty"`
}

// citation matches [n] in an answer.
var citation = regexp.MustCompile(`\[(\d{1,3})\]`)

// maxCitations bounds the citations read from one answer.
const maxCitations = 64

// kbHits is the part of a knowledge-base search result that names the
// hits (the local search and our MCP server's searchKnowledge return it).
type kbHits struct {
	Hits []struct {
		No    int    `json:"no"`
		DocID string `json:"docId"`
		Title string `json:"title"`
	} `json:"hits"`
}

// Sources lists the knowledge-base documents the answer cites as [n], in
// the order first cited, each once (see Source.Also), never nil. Hits come from every tool output of the
// turn (outputs, in order) that has numbered hits with document ids; a
// later search's hit of the same number replaces an earlier one, as the
// model saw it last.
func Sources(answer string, outputs []string) []Source {
	hits := map[int]Source{}
	for _, out := range outputs {
		if !strings.Contains(out, `"hits"`) {
			continue
		}
		var h kbHits
		if json.Unmarshal([]byte(out), &h) != nil {
			continue
		}
		for _, hit := range h.Hits {
			if hit.DocID != "" {
				hits[hit.No] = Source{No: hit.No, DocID: hit.DocID, Title: hit.Title}
			}
		}
	}
	out := []Source{}
	seen := map[int]bool{}
	doc := map[string]int{} // document id → its index in out
	for _, m := range citation.FindAllStringSubmatch(answer, maxCitations) {
		n, _ := strconv.Atoi(m[1])
		s, ok := hits[n]
		if !ok || seen[n] {
			continue
		}
		seen[n] = true
		if i, ok := doc[s.DocID]; ok {
			out[i].Also = append(out[i].Also, n)
			continue
		}
		doc[s.DocID] = len(out)
		out = append(out, s)
	}
	return out
}
