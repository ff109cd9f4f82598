package budget

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"
)

// sample is one text of testdata/corpus.json with its token counts under
// the real o200k_base and cl100k_base tokenizers (counted once with
// js-tiktoken 1.0.21; only the counts are kept here).
type sample struct {
	Kind   string `json:"kind"`
	Source string `json:"source"`
	Text   string `json:"text"`
	O200k  int    `json:"o200k"`
	CL100k int    `json:"cl100k"`
}

func loadCorpus(t testing.TB) []sample {
	t.Helper()
	b, err := os.ReadFile("testdata/corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var s []sample
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s) < 150 {
		t.Fatalf("corpus has %d samples", len(s))
	}
	return s
}

// errorStats is the relative error of the estimate on each kind of text.
type errorStats struct {
	n                   int
	sum, max, sumSigned float64
}

func corpusErrors(t testing.TB, f Family) map[string]*errorStats {
	e := NewEstimator(f)
	out := map[string]*errorStats{}
	for _, s := range loadCorpus(t) {
		want := s.O200k
		if f == FamilyCL100k {
			want = s.CL100k
		}
		rel := float64(e.Text(s.Text)-want) / float64(want)
		st := out[s.Kind]
		if st == nil {
			st = &errorStats{}
			out[s.Kind] = st
		}
		st.n++
		st.sum += math.Abs(rel)
		st.sumSigned += rel
		st.max = max(st.max, math.Abs(rel))
	}
	return out
}

// TestEstimateAgainstTokenizers holds the estimate to the real tokenizers'
// counts on the corpus: Chinese, English, Go code and tool-definition JSON.
// The bounds are what the fitted weights reach with some margin; a change
// to Count or the weights that makes the estimate worse fails here.
func TestEstimateAgainstTokenizers(t *testing.T) {
	limits := map[string][2]float64{ // mean and max relative error
		"zh": {0.10, 0.27}, "en": {0.06, 0.23}, "code": {0.05, 0.10}, "json": {0.05, 0.12},
	}
	for _, f := range []Family{FamilyO200k, FamilyCL100k} {
		stats := corpusErrors(t, f)
		kinds := make([]string, 0, len(stats))
		for k := range stats {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			st := stats[k]
			mean := st.sum / float64(st.n)
			t.Logf("%s %-4s n=%3d mean |err| %5.1f%%  max %5.1f%%  bias %+5.1f%%", f, k, st.n, 100*mean, 100*st.max, 100*st.sumSigned/float64(st.n))
			lim, ok := limits[k]
			if !ok {
				t.Errorf("corpus kind %q has no limit", k)
				continue
			}
			if mean > lim[0] || st.max > lim[1] {
				t.Errorf("%s on %s: mean error %.1f%%, max %.1f%%; want at most %.0f%% and %.0f%%", f, k, 100*mean, 100*st.max, 100*lim[0], 100*lim[1])
			}
		}
	}
}

// TestDumpFeatures writes the corpus's features and counts as TSV when
// BUDGET_FIT is set to a file name: the input of the weight fit.
func TestDumpFeatures(t *testing.T) {
	out := os.Getenv("BUDGET_FIT")
	if out == "" {
		t.Skip("set BUDGET_FIT=file to write the features for a new fit")
	}
	var b strings.Builder
	for _, s := range loadCorpus(t) {
		c := Count(s.Text)
		fmt.Fprintf(&b, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", s.Kind, s.O200k, s.CL100k,
			c.CJK, c.CJKPunct, c.Words, c.Letters, c.Digits, c.Punct, c.PunctExtra, c.Breaks, c.Other)
	}
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
