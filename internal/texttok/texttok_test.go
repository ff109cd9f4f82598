package texttok

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestIndexTokens(t *testing.T) {
	for in, want := range map[string]string{
		"住宿标准：一线城市 600 元/晚":    "住宿 宿标 标准 准 一线 线城 城市 市 600 元 晚 ",
		"Refund within 7-Days": "refund within 7 days ",
		"ＡＢＣ１２３假":              "abc123 假 ",
		"":                     "",
		"。！\xff":               "",
	} {
		if got := IndexTokens(in); got != want {
			t.Errorf("IndexTokens(%q) = %q, want %q", in, got, want)
		}
		if got := IndexTokensRunes(in); got != IndexTokens(in) {
			t.Errorf("IndexTokensRunes(%q) = %q, differs from IndexTokens", in, got)
		}
	}
}

func TestQuery(t *testing.T) {
	q := Query("请问怎么读取文件 read_file?")
	if want := []string{"读取", "取文", "文件", "read", "file"}; !slices.Equal(q.Words, want) {
		t.Errorf("Query words = %q, want %q", q.Words, want)
	}
	if q := Query("what is it"); !slices.Equal(q.Words, []string{"what", "is", "it"}) {
		t.Errorf("a query of stop words only keeps them: %q", q.Words)
	}
	var many []string
	for i := range 200 {
		many = append(many, fmt.Sprintf("w%d", i))
	}
	if q := Query(strings.Join(many, " ")); len(q.Words) != MaxQueryTerms {
		t.Errorf("%d terms of 200 distinct words, want MaxQueryTerms", len(q.Words))
	}
	if !IsStopWord("the") || IsStopWord("file") {
		t.Error("IsStopWord")
	}
}

func TestSegmentsCutsLongWords(t *testing.T) {
	segs := Segments(strings.Repeat("a", 100) + "中文")
	if len(segs) != 2 || len(segs[0].Runes) != MaxWordRunes || !segs[1].CJK {
		t.Errorf("Segments = %+v", segs)
	}
}
