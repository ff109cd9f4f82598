// Package compose wires the assistant into a host: its local tools, its
// system prompt and the hook that finds an answer's sources. It is apart
// from package assistant, which knows no host, so that what the assistant
// is made of can be used below the host too (an MCP client's tests).
package compose

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentapp/agentapp/assistant"
	"github.com/agentapp/agentapp/host"
)

// The sources of an answer are the knowledge-base hits it cites as [n]:
// the host runs this hook (host.Options.Sources) after every turn and when
// a front end shows a stored answer.

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
// the order first cited, each once (see host.Source.Also), never nil. Hits come from every tool output of the
// turn (outputs, in order) that has numbered hits with document ids; a
// later search's hit of the same number replaces an earlier one, as the
// model saw it last.
func Sources(answer string, outputs []string) []host.Source {
	hits := map[int]host.Source{}
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
				hits[hit.No] = host.Source{No: hit.No, DocID: hit.DocID, Title: hit.Title}
			}
		}
	}
	out := []host.Source{}
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

// Host fills in what the assistant brings to a host: its local tools, its
// system prompt and the hook that finds an answer's sources. The command
// line opens its hosts with it, and so do the front ends' tests, so they
// test the host production runs.
func Host(o *host.Options) *host.Options {
	o.LocalTools, o.System, o.Sources = assistant.LocalTools, assistant.SystemPrompt, Sources
	return o
}
