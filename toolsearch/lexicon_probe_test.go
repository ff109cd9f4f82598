package toolsearch

import (
	"strings"
	"testing"
)

// TestProbesLexicon runs the lexicon's own probe questions, written
// against the fixtures' tool lists in everyday wording: requests that
// rarely use the words of the tool they need (testdata/probes, apart from
// the fixtures). first.json was written before the concept lexicon,
// second.json after its first version and before the concepts added
// since, third.json after those (not tuned on). It logs every
// probe's top 5 and holds the share with the right tool in the top 5.
func TestProbesLexicon(t *testing.T) {
	for _, f := range []struct {
		name    string
		minTop5 float64
	}{{"first.json", minProbeTop5}, {"second.json", minProbeTop5}, {"third.json", minProbeTop5Third}} {
		t.Run(f.name, func(t *testing.T) { probeFile(t, "testdata/probes/"+f.name, f.minTop5) })
	}
}

func probeFile(t *testing.T, name string, minTop5 float64) {
	qs := loadQueryFile(t, name)
	if len(qs) < 60 {
		t.Fatalf("%d probes, want at least 60", len(qs))
	}
	ix, tools := fixtureIndex(t)
	known := map[string]bool{}
	for _, tl := range tools {
		known[tl.Origin+":"+tl.Name] = true
	}
	var n, top1, top5 [2]int // [en, zh]
	for _, q := range qs {
		if !known[q.Tool] {
			t.Errorf("probe %q expects %s, which no fixture has", q.Query, q.Tool)
			continue
		}
		lang := 0
		if hanRE.MatchString(q.Query) {
			lang = 1
		}
		hits := ix.Search(q.Query, 5)
		rank := 0
		var got []string
		for i, h := range hits {
			id := h.Server + ":" + h.Name
			got = append(got, id)
			if id == q.Tool && rank == 0 {
				rank = i + 1
			}
		}
		n[lang]++
		if rank == 1 {
			top1[lang]++
		}
		if rank > 0 {
			top5[lang]++
		}
		mark := "ok  "
		if rank == 0 {
			mark = "MISS"
		}
		t.Logf("%s rank %d %q want %s; top 5: %s", mark, rank, q.Query, q.Tool, strings.Join(got, " "))
	}
	for lang, name := range []string{"en", "zh"} {
		t.Logf("%s: %d probes, top 1 %.1f%%, top 5 %.1f%%", name, n[lang], pct(top1[lang], n[lang]), pct(top5[lang], n[lang]))
	}
	all5, all1, alln := top5[0]+top5[1], top1[0]+top1[1], n[0]+n[1]
	t.Logf("all: %d probes, top 1 %.1f%%, top 5 %.1f%%", alln, pct(all1, alln), pct(all5, alln))
	if p := pct(all5, alln); p < minTop5 {
		t.Errorf("right tool in the top 5 for %.1f%% of the probes, want at least %.0f%%", p, minTop5)
	}
}

// minProbeTop5 is the share of probes that must find their tool in the
// top 5. Without the lexicon the two sets reach 64.8 % and 63.8 %.
const minProbeTop5 = 92.0

// minProbeTop5Third is the bound of the third set, which no change was
// made for: its first run (top 5 90.6 %, 76.6 % without the lexicon) is
// the honest figure for wording nobody tuned for; the bound only keeps it
// from getting worse. The phrasal verbs added after it (lexicon_data.go)
// took it to 93.8 %.
const minProbeTop5Third = 88.0

// BenchmarkSearchProbes searches the fixtures with the probe questions,
// which exercise the lexicon's expansions.
func BenchmarkSearchProbes(b *testing.B) {
	ix, _ := fixtureIndex(b)
	qs := loadQueryFile(b, "testdata/probes/first.json")
	i := 0
	for b.Loop() {
		ix.Search(qs[i%len(qs)].Query, 5)
		i++
	}
}
