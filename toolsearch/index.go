// Package toolsearch lets a model find tools it has not been shown: when
// the MCP servers' tool definitions would take too much of the context,
// the host defers them, offers a searchTools tool instead, and loads the
// tools the model finds. Loaded tools join later requests.
//
// The index ranks tools by name, title, description and parameter names
// for queries in English and Chinese (texttok, the knowledge base's
// tokenizer, plus a glossary from Chinese to the English words tool
// definitions use). A query that is a tool's exact name, alone or with its
// server (server__tool, server:tool), always ranks that tool first: a model
// that knows the name must get that tool.
package toolsearch

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/internal/texttok"
)

// Entry is one tool as the index sees it.
type Entry struct {
	// Server is the MCP server's name ("" for a local tool).
	Server string
	// Name is what the model calls the tool by.
	Name  string
	Title string
	// Description is the tool's description, which the index searches and
	// whose first sentence the search result shows.
	Description string
	// Params are the names of the input schema's top-level properties.
	Params []string
}

// EntryOf returns the index entry of a tool: its origin as the server and
// its input schema's property names as the parameters.
func EntryOf(t *agent.Tool) Entry {
	e := Entry{Server: t.Origin, Name: t.Name, Title: t.Title, Description: t.Description}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(t.InputSchema, &s) == nil {
		for p := range s.Properties {
			e.Params = append(e.Params, p)
		}
		sort.Strings(e.Params)
	}
	return e
}

// MaxEntries bounds an index; a host with more tools than this has a
// configuration problem the index should not hide.
const MaxEntries = 50_000

// MaxQueryBytes bounds a query; the rest is ignored.
const MaxQueryBytes = 1000

// field weights: a word in a tool's name says more than one in its
// description.
const (
	wName   = 3.0
	wTitle  = 2.0
	wServer = 1.5
	wParams = 1.0
	wDesc   = 1.0
	nFields = 5
	bm25K   = 1.2
	bm25B   = 0.5
)

var fieldWeights = [nFields]float64{wName, wTitle, wServer, wParams, wDesc}

// posting is one entry's term frequencies, per field, of one term, and
// the BM25 score they give the entry for that term, which depends on the
// index only and so is computed once, when the index is built.
type posting struct {
	doc   int
	tf    [nFields]int
	score float64
}

// Index is an immutable search index over tool entries, safe for
// concurrent use. Build a new one when the tools change.
type Index struct {
	entries []Entry
	// postings maps a term to the entries that have it.
	postings map[string][]posting
	// lens are each entry's field lengths in terms.
	lens   [][nFields]int
	avgLen [nFields]float64
	// exact maps lower-case "name", "server__name", "server:name",
	// "server/name" and "server.name" to entries.
	exact map[string][]int
	// names maps a lower-case name to entries, for names quoted inside a
	// longer query.
	names map[string][]int
	// deprecated marks entries whose description says they are
	// deprecated.
	deprecated []bool
}

// deprecatedFactor scales the ranked score of a deprecated tool: its
// server says to use another one, which usually matches the same words
// ("read_file: DEPRECATED, use read_text_file"), so it should come after
// it. A query that names it still finds it first.
const deprecatedFactor = 0.5

// deprecatedRE finds a description that calls its tool deprecated.
var deprecatedRE = regexp.MustCompile(`(?i)\bdeprecated\b`)

// NewIndex indexes entries. More than MaxEntries is an error.
func NewIndex(entries []Entry) (*Index, error) {
	if len(entries) > MaxEntries {
		return nil, fmt.Errorf("%d tools to index, more than the %d the tool search takes: connect fewer servers or narrow their tools", len(entries), MaxEntries)
	}
	ix := &Index{
		entries:    append([]Entry(nil), entries...),
		postings:   map[string][]posting{},
		lens:       make([][nFields]int, len(entries)),
		exact:      map[string][]int{},
		names:      map[string][]int{},
		deprecated: make([]bool, len(entries)),
	}
	var total [nFields]int
	for i, e := range ix.entries {
		fields := [nFields][]string{
			textTerms(e.Name, nil),
			textTerms(e.Title, nil),
			textTerms(e.Server, nil),
			textTerms(strings.Join(e.Params, " "), nil),
			textTerms(e.Description, nil),
		}
		for f, ts := range fields {
			for _, t := range ts {
				ps := ix.postings[t]
				if len(ps) == 0 || ps[len(ps)-1].doc != i {
					ps = append(ps, posting{doc: i})
				}
				ps[len(ps)-1].tf[f]++
				ix.postings[t] = ps
			}
			ix.lens[i][f] = len(ts)
			total[f] += len(ts)
		}
		name := strings.ToLower(e.Name)
		keys := []string{name}
		if e.Server != "" {
			s := strings.ToLower(e.Server)
			keys = append(keys, s+"__"+name, s+":"+name, s+"/"+name, s+"."+name)
		}
		for _, k := range keys {
			ix.exact[k] = append(ix.exact[k], i)
		}
		ix.names[name] = append(ix.names[name], i)
		ix.deprecated[i] = deprecatedRE.MatchString(e.Description)
	}
	for f := range total {
		if len(entries) > 0 {
			ix.avgLen[f] = max(1, float64(total[f])/float64(len(entries)))
		}
	}
	N := float64(len(entries))
	for _, ps := range ix.postings {
		df := float64(len(ps))
		idf := math.Log(1 + (N-df+0.5)/(df+0.5))
		for k := range ps {
			p := &ps[k]
			s := 0.0
			for f, tf := range p.tf {
				if tf == 0 {
					continue
				}
				norm := 1 - bm25B + bm25B*float64(ix.lens[p.doc][f])/ix.avgLen[f]
				s += fieldWeights[f] * float64(tf) * (bm25K + 1) / (float64(tf) + bm25K*norm)
			}
			p.score = idf * s
			if ix.deprecated[p.doc] {
				p.score *= deprecatedFactor
			}
		}
	}
	return ix, nil
}

// Len returns the number of entries.
func (ix *Index) Len() int { return len(ix.entries) }

// Lookup returns the entry a tool call's name means: a tool's exact name,
// or its name with its server (server__tool, server:tool, server/tool,
// server.tool), case-insensitive. A name that two entries answer to is
// not resolved: running the wrong tool is worse than asking.
func (ix *Index) Lookup(name string) (Entry, bool) {
	if len(name) > MaxQueryBytes {
		return Entry{}, false
	}
	is := ix.exact[strings.ToLower(strings.TrimSpace(name))]
	if len(is) != 1 {
		return Entry{}, false
	}
	return ix.entries[is[0]], true
}

// Hit is one search result.
type Hit struct {
	Entry
	// Score orders hits; only its order means anything.
	Score float64
	// Exact reports that the query named this tool.
	Exact bool
}

// exactBonus puts a tool named by the query above every ranked one.
const exactBonus = 1e9

// maxWeightedTerms bounds the terms one query is scored with, which
// bounds its cost.
const maxWeightedTerms = texttok.MaxQueryTerms * 4

// nameBonus puts a tool whose name appears as a word in a longer query
// above tools that only share words with it.
const nameBonus = 1e6

// Search returns at most n entries for query, best first. A query that is
// a tool's name (case-insensitive, alone or as server__tool, server:tool,
// server/tool or server.tool) returns that tool first, marked Exact; a
// tool name quoted inside a longer query comes next; the rest are ranked
// by BM25 over name, title, server, parameter names and description. Ties
// keep the index's order. An empty query finds nothing.
func (ix *Index) Search(query string, n int) []Hit {
	if n <= 0 || len(ix.entries) == 0 {
		return nil
	}
	if len(query) > MaxQueryBytes {
		cut := MaxQueryBytes
		for cut > 0 && !utf8.RuneStart(query[cut]) {
			cut--
		}
		query = query[:cut]
	}
	q := strings.ToLower(strings.TrimSpace(strings.Trim(strings.TrimSpace(query), "`'\"")))
	if q == "" {
		return nil
	}
	// Scores are kept per entry in one slice, with the list of entries
	// that have one, so that a query costs the entries it touches.
	docs := make([]docScore, len(ix.entries))
	var touched []int
	add := func(i int, s float64) {
		if docs[i].score == 0 {
			touched = append(touched, i)
		}
		docs[i].score += s
	}
	for _, i := range ix.exact[q] {
		add(i, exactBonus)
		docs[i].exact = true
	}
	// A name inside a longer query: "use read_file on x", "call `echo`".
	for _, tok := range strings.FieldsFunc(q, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == ',' || r == '`' || r == '"' || r == '\'' || r == '(' || r == ')' || r == '，' || r == '。' || r == '？' || r == '?'
	}) {
		for _, i := range ix.exact[tok] {
			if !docs[i].exact {
				add(i, nameBonus)
			}
		}
		for _, i := range ix.names[tok] {
			if !docs[i].exact && docs[i].score < nameBonus {
				add(i, nameBonus)
			}
		}
	}
	// Ranked part.
	folded := phrases.Replace(strings.Map(texttok.Fold, q))
	segs := texttok.Segments(splitName(folded))
	words := segmentTerms(segs, nil)
	// A term counts once, with the highest weight it has: the query's own
	// words, the glossary's translations, then the English synonyms.
	weight := make(map[string]float64, 2*len(words)+16)
	addTerms := func(ts []string, w float64) {
		for _, t := range ts {
			if old, ok := weight[t]; ok {
				weight[t] = max(old, w)
			} else if len(weight) < maxWeightedTerms {
				weight[t] = w
			}
		}
	}
	addTerms(words, 1)
	translated, synonym := expand(folded, words)
	addTerms(translated, glossaryWeight)
	addTerms(synonym, synonymWeight)
	for t, w := range weight {
		for _, p := range ix.postings[t] {
			add(p.doc, w*p.score)
		}
	}
	// Each concept the query names counts as one word: its best term for
	// an entry, and a little of its others. Terms the query has already
	// are counted above.
	var inGroup []int
	for _, g := range lex().expand(folded, segs) {
		inGroup = inGroup[:0]
		for _, t := range g {
			if _, ok := weight[t]; ok {
				continue
			}
			for _, p := range ix.postings[t] {
				d := &docs[p.doc]
				if d.sum == 0 {
					inGroup = append(inGroup, p.doc)
				}
				d.best = max(d.best, p.score)
				d.sum += p.score
			}
		}
		for _, i := range inGroup {
			d := &docs[i]
			add(i, conceptWeight*(d.best+conceptRest*(d.sum-d.best)))
			d.best, d.sum = 0, 0
		}
	}
	top := topN(docs, touched, n)
	hits := make([]Hit, 0, len(top))
	for _, i := range top {
		hits = append(hits, Hit{Entry: ix.entries[i], Score: docs[i].score, Exact: docs[i].exact})
	}
	return hits
}

// docScore is one entry's score during a search.
type docScore struct {
	score float64
	exact bool
	// best and sum are the entry's best and total term scores for the
	// concept being scored.
	best, sum float64
}

// topN returns the n entries of touched with the highest scores, best
// first, ties in index order.
func topN(docs []docScore, touched []int, n int) []int {
	better := func(a, b int) bool {
		if docs[a].score != docs[b].score {
			return docs[a].score > docs[b].score
		}
		return a < b
	}
	if n >= len(touched) || n > 16 {
		sort.Slice(touched, func(a, b int) bool { return better(touched[a], touched[b]) })
		return touched[:min(n, len(touched))]
	}
	// A short list kept in order by insertion: n is usually 5.
	top := make([]int, 0, n+1)
	for _, i := range touched {
		if len(top) == n && !better(i, top[n-1]) {
			continue
		}
		k := len(top)
		for k > 0 && better(i, top[k-1]) {
			k--
		}
		top = append(top, 0)
		copy(top[k+1:], top[k:])
		top[k] = i
		if len(top) > n {
			top = top[:n]
		}
	}
	return top
}
