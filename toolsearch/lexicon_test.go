package toolsearch

import (
	"strings"
	"testing"

	"github.com/agentapp/agentapp/internal/texttok"
)

// lexiconIndex is a small index of tools from several domains, described
// the way servers describe them, none in the words the tests ask with.
func lexiconIndex(t *testing.T) *Index {
	t.Helper()
	ix, err := NewIndex([]Entry{
		{Server: "hub", Name: "fork_repo", Description: "Fork a repository into your account.", Params: []string{"owner", "repo"}},
		{Server: "hub", Name: "create_repo", Description: "Create a repository.", Params: []string{"name"}},
		{Server: "hub", Name: "find_people", Description: "Search users by login.", Params: []string{"q"}},
		{Server: "geo", Name: "elevation", Description: "Elevation of points on the earth.", Params: []string{"points"}},
		{Server: "geo", Name: "route", Description: "Directions between an origin and a destination.", Params: []string{"origin", "destination", "mode"}},
		{Server: "geo", Name: "geocode", Description: "Geocode an address to coordinates.", Params: []string{"address"}},
		{Server: "chat", Name: "react", Description: "Add an emoji reaction to a message.", Params: []string{"channel", "ts", "name"}},
		{Server: "chat", Name: "post", Description: "Post a message to a channel.", Params: []string{"channel", "text"}},
		{Server: "fs", Name: "read_media", Description: "Read an image or audio file as base64.", Params: []string{"path"}},
		{Server: "fs", Name: "read_text", Description: "Read a text file.", Params: []string{"path"}},
		{Server: "kg", Name: "read_graph", Description: "Read the entire knowledge graph."},
		{Server: "kg", Name: "search_nodes", Description: "Search nodes of the knowledge graph.", Params: []string{"query"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// TestLexiconParaphrases: requests that share no word with the tool they
// need (or only words every tool has) find it first through the lexicon's
// concepts, in English and in Chinese; without the lexicon each of them
// ranks another tool first or finds nothing.
func TestLexiconParaphrases(t *testing.T) {
	ix := lexiconIndex(t)
	for q, want := range map[string]string{
		"I want a personal copy of that project":   "fork_repo",
		"which account goes by the handle octocat": "find_people",
		"how tall is Kilimanjaro":                  "elevation",
		"meters above sea level at the summit":     "elevation",
		"上海到杭州坐高铁要多久":                              "route",
		"从公司到机场怎么走":                                "route",
		"thumbs up Dana's announcement":            "react",
		"display this jpeg":                        "read_media",
		"听一下这段录音":                                  "read_media",
		"dump all you remember":                    "read_graph",
		"what street is at 51.5007, -0.1246":       "geocode",
		"where on the globe is 221 Baker Street":   "geocode",
		"把别人的项目复制一份到我名下":                           "fork_repo",
		"GitHub 上有没有一个叫 octocat 的人":                "find_people",
		"ping #ops that the deploy is done":        "post",
	} {
		hits := ix.Search(q, 3)
		if len(hits) == 0 || hits[0].Name != want {
			var got []string
			for _, h := range hits {
				got = append(got, h.Name)
			}
			t.Errorf("Search(%q) = %v, want %s first", q, got, want)
		}
	}
}

// TestLexiconLiteralFirst: a tool whose text has the query's own words
// ranks above one the lexicon only relates to it, and an exact name stays
// first.
func TestLexiconLiteralFirst(t *testing.T) {
	ix, err := NewIndex([]Entry{
		{Server: "geo", Name: "directions", Description: "Directions between two points.", Params: []string{"origin", "destination"}},
		{Server: "trip", Name: "plan_route", Description: "Plan a route for a trip.", Params: []string{"stops"}},
		{Server: "fs", Name: "read_media", Description: "Read an image or audio file."},
		{Server: "pics", Name: "photo_album", Description: "List the photos of an album."},
	})
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"route to the zoo":    "plan_route",
		"my holiday photos":   "photo_album",
		"directions":          "directions",
		"geo__directions":     "directions",
		"read_media":          "read_media",
		"a picture of a road": "read_media",
	} {
		if hits := ix.Search(q, 4); len(hits) == 0 || hits[0].Name != want {
			t.Errorf("Search(%q) = %v, want %s first", q, hits, want)
		}
	}
}

// TestLexiconCompiled checks the lexicon's data: every concept has terms
// that survive the index's cutting and at least one trigger, and every
// trigger is short enough to be compiled (a longer one would be dropped
// without a word).
func TestLexiconCompiled(t *testing.T) {
	if len(concepts) < 150 {
		t.Errorf("%d concepts", len(concepts))
	}
	triggers := 0
	for _, c := range concepts {
		if len(textTerms(c.terms, nil)) == 0 {
			t.Errorf("concept %q: no index terms", c.terms)
		}
		en, zh := splitList(c.en), splitList(c.zh)
		if len(en)+len(zh) == 0 {
			t.Errorf("concept %q: no triggers", c.terms)
		}
		for _, p := range en {
			var ws []string
			for _, seg := range texttok.Segments(p) {
				if seg.CJK {
					t.Errorf("concept %q: English trigger %q has CJK", c.terms, p)
				}
				ws = append(ws, stem(string(seg.Runes)))
			}
			if len(ws) == 0 || len(ws) > maxPhraseWords {
				t.Errorf("concept %q: English trigger %q has %d words, want 1 to %d", c.terms, p, len(ws), maxPhraseWords)
			} else if _, ok := lex().en[strings.Join(ws, " ")]; !ok {
				t.Errorf("concept %q: trigger %q not compiled", c.terms, p)
			}
		}
		for _, w := range zh {
			for _, r := range w {
				if !texttok.IsCJK(r) {
					t.Errorf("concept %q: Chinese trigger %q has %q, which a CJK run never holds: it would never match", c.terms, w, r)
					break
				}
			}
			if n := len([]rune(w)); n > maxZhRunes {
				t.Errorf("concept %q: Chinese trigger %q has %d characters, more than %d", c.terms, w, n, maxZhRunes)
			} else if _, ok := lex().zh[strings.Map(texttok.Fold, w)]; !ok {
				t.Errorf("concept %q: trigger %q not compiled", c.terms, w)
			}
		}
		triggers += len(en) + len(zh)
	}
	t.Logf("%d concepts, %d triggers, %d English and %d Chinese keys", len(concepts), triggers, len(lex().en), len(lex().zh))
}

// TestLexiconQuestionWords: question words, which the index drops as stop
// words, still say what is asked for.
func TestLexiconQuestionWords(t *testing.T) {
	for q, want := range map[string]string{
		"who":         "user",
		"how far":     "distanc",
		"how long":    "duration",
		"when":        "dat",
		"谁":           "user",
		"多久":          "duration",
		"什么时候":        "dat",
		"from a to b": "destinat",
	} {
		var got []string
		f := strings.Map(texttok.Fold, q)
		for _, g := range lex().expand(f, texttok.Segments(splitName(f))) {
			got = append(got, g...)
		}
		if !contains(got, stem(want)) {
			t.Errorf("expand(%q) = %v, want %q among them", q, got, want)
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestLexiconBounded: a query made of nothing but triggers names at most
// maxGroups concepts, and its search still returns at most n hits; a
// query of question words alone still finds what they ask for.
func TestLexiconBounded(t *testing.T) {
	var b strings.Builder
	var words []string
	for _, c := range concepts {
		words = append(words, splitList(c.en)[0])
		if zh := splitList(c.zh); len(zh) > 0 {
			words = append(words, zh[0])
		}
	}
	for i := 0; b.Len() < MaxQueryBytes; i++ {
		b.WriteString(words[i%len(words)])
		b.WriteByte(' ')
	}
	q := b.String()
	f := strings.Map(texttok.Fold, q)
	if gs := lex().expand(f, texttok.Segments(splitName(f))); len(gs) != maxGroups {
		t.Errorf("a query of %d triggers names %d concepts, want the cap %d", len(words), len(gs), maxGroups)
	}
	ix := lexiconIndex(t)
	if hits := ix.Search(q, 5); len(hits) != 5 {
		t.Errorf("a query of triggers: %d hits, want 5", len(hits))
	}
	for q, want := range map[string]string{"who?": "find_people", "how high?": "elevation", "谁？": "find_people"} {
		if hits := ix.Search(q, 1); len(hits) == 0 || hits[0].Name != want {
			t.Errorf("Search(%q) = %v, want %s", q, hits, want)
		}
	}
}
