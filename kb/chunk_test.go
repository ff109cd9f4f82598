package kb

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func chunkTexts(cs []Chunk) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Text
	}
	return out
}

func TestSplitChunksEmpty(t *testing.T) {
	for _, in := range []string{"", "   ", "\n\n\r\n\t\n"} {
		if got := SplitChunks(in, 100); len(got) != 0 {
			t.Errorf("SplitChunks(%q) = %q, want no chunks", in, chunkTexts(got))
		}
	}
}

func TestSplitChunksOneParagraph(t *testing.T) {
	got := SplitChunks("  A short paragraph.\nSecond line of it.  \n", 100)
	want := []Chunk{{Text: "A short paragraph.\nSecond line of it."}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

func TestSplitChunksPacksSmallParagraphsAndKeepsHeadingWithSection(t *testing.T) {
	doc := "# Guide\n\nIntro line.\n\n## Part A\n\nFirst para.\n\nSecond para.\n\n## Part B\n\nOther text."
	got := SplitChunks(doc, 100)
	want := []Chunk{
		{Heading: "Guide", Text: "# Guide\n\nIntro line."},
		{Heading: "Guide › Part A", Text: "## Part A\n\nFirst para.\n\nSecond para."},
		{Heading: "Guide › Part B", Text: "## Part B\n\nOther text."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

func TestSplitChunksTitleOnlySectionJoinsNext(t *testing.T) {
	got := SplitChunks("# Title\n\n## Sub\n\nBody.", 100)
	want := []Chunk{{Heading: "Title › Sub", Text: "# Title\n\n## Sub\n\nBody."}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

func TestSplitChunksParagraphsOverLimitStartNewChunk(t *testing.T) {
	a := strings.Repeat("a", 40)
	b := strings.Repeat("b", 40)
	got := chunkTexts(SplitChunks(a+"\n\n"+b, 60))
	if diff := cmp.Diff([]string{a, b}, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

func TestSplitChunksLongParagraphSentencesWithOverlap(t *testing.T) {
	s1 := "One is the first sentence here. "
	s2 := "Two follows it closely! "
	s3 := "Three asks a question? "
	s4 := "Four ends the paragraph."
	got := chunkTexts(SplitChunks(s1+s2+s3+s4, 60))
	want := []string{
		strings.TrimSpace(s1 + s2),
		strings.TrimSpace(s2 + s3),
		strings.TrimSpace(s3 + s4),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

func TestSplitChunksCJKPunctuation(t *testing.T) {
	s1 := "第一句话说明退货的条件。"
	s2 := "第二句话问退款多久到账？"
	s3 := "第三句话非常重要！"
	s4 := "「第四句带引号。」"
	s5 := "第五句结束"
	got := chunkTexts(SplitChunks(s1+s2+s3+s4+s5, 25))
	want := []string{s1 + s2, s2 + s3, s3 + s4 + s5}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

func TestSplitSentencesKeepsDecimalsAndClosers(t *testing.T) {
	got := splitSentences("Version 3.5 is out. He said \"yes.\" Then: 好的。」下一句？！最后")
	want := []string{"Version 3.5 is out. ", "He said \"yes.\" ", "Then: 好的。」", "下一句？！", "最后"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sentences (-want +got):\n%s", diff)
	}
}

func TestSplitChunksHugeSentenceIsCut(t *testing.T) {
	huge := strings.Repeat("长", 130) // no terminator at all
	got := chunkTexts(SplitChunks(huge, 50))
	want := []string{strings.Repeat("长", 50), strings.Repeat("长", 50), strings.Repeat("长", 30)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

func TestSplitChunksHugeSentenceAmongNormalOnes(t *testing.T) {
	p := "短句一。" + strings.Repeat("长", 60) + "。短句二。"
	got := chunkTexts(SplitChunks(p, 50))
	if strings.Join(got, "") != p {
		t.Errorf("chunks %q do not cover the paragraph %q exactly", got, p)
	}
	for _, c := range got {
		if n := utf8.RuneCountInString(c); n > 50 {
			t.Errorf("chunk of %d runes over the limit 50: %q", n, c)
		}
	}
}

func TestSplitChunksWindowsNewlines(t *testing.T) {
	unix := "# T\n\nPara one line one.\nline two.\n\nPara two."
	win := strings.ReplaceAll(unix, "\n", "\r\n")
	if diff := cmp.Diff(SplitChunks(unix, 30), SplitChunks(win, 30)); diff != "" {
		t.Errorf("CRLF input chunks differently (-LF +CRLF):\n%s", diff)
	}
	for _, c := range SplitChunks(win, 30) {
		if strings.Contains(c.Text, "\r") {
			t.Errorf("chunk keeps a CR: %q", c.Text)
		}
	}
}

func TestSplitChunksFencedCodeStaysWhole(t *testing.T) {
	doc := "Before.\n\n```\ncode line\n\nmore code\n```\n\nAfter."
	got := chunkTexts(SplitChunks(doc, 30))
	want := []string{"Before.", "```\ncode line\n\nmore code\n```", "After."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

func TestSplitChunksNeverExceedLimit(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		b.WriteString(strings.Repeat("字", i%37+1))
		b.WriteString([]string{"。", "！", "? ", ". ", "\n", "\n\n"}[i%6])
	}
	for _, c := range SplitChunks(b.String(), MaxChunkRunes) {
		if n := utf8.RuneCountInString(c.Text); n > MaxChunkRunes {
			t.Fatalf("chunk of %d runes over the limit: %q", n, c.Text)
		}
	}
}
