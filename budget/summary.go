package budget

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentapp/agentapp/model"
)

// Summarizer folds turns into a summary. The host gives it the previous
// summary (empty at first), the messages to fold and a bound; the result
// replaces the previous summary. A model-backed summarizer lives in the
// host (it needs a model call with its own budget); Extractive is the one
// for the offline model and the fallback when that call fails.
type Summarizer interface {
	Summarize(ctx context.Context, previous string, msgs []model.Message, maxTokens int) (string, error)
}

// Extractive summarizes without a model: the first sentence of each user
// message, and the identifiers and figures of the answers and tool results
// (order and ticket numbers, ids, amounts, dates, addresses), which are
// what later questions refer back to. It never fails and its result is
// within maxTokens by the estimator's count; when the whole does not fit,
// the oldest lines go first.
type Extractive struct {
	// Estimator counts tokens; nil means o200k's.
	Estimator *Estimator
}

// Limits of one line of an extractive summary.
const (
	maxQuestionRunes = 160
	maxFacts         = 8
	maxFactRunes     = 64
)

// factRE finds what is worth keeping from an answer: ids such as A-1024,
// T-20260101-7, #123 or a hex/uuid-like run, e-mail addresses, URLs, dates
// and amounts with their unit. It is compiled on first use, not at
// package init: its counted repetitions of Unicode classes make a large
// program (about 5 ms and 370 KB to compile), which every process linking
// this package, `agentapp serve` included, paid at start-up.
var factRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[A-Za-z]{1,6}-\d[\w-]{1,30}|#\d{1,12}|\b[0-9a-f]{8,40}\b|[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}|https?://[^\s"'<>)\]]{1,200}|\d{4}-\d{2}-\d{2}|[¥$€£]\s?\d[\d,.]*|\d[\d,.]*\s?(?:元|块|天|小时|分钟|%|kg|km|GB|MB|USD|CNY)`)
})

// Summarize implements Summarizer.
func (x Extractive) Summarize(_ context.Context, previous string, msgs []model.Message, maxTokens int) (string, error) {
	e := x.Estimator
	if e == nil {
		e = NewEstimator(FamilyO200k)
	}
	var lines []string
	for _, l := range strings.Split(previous, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	var facts []string
	seen := map[string]bool{}
	flush := func() {
		if len(facts) > 0 {
			lines = append(lines, "  facts: "+strings.Join(facts, ", "))
			facts = nil
		}
	}
	for _, m := range msgs {
		switch m.Role {
		case model.RoleUser:
			flush()
			if q := firstSentence(m.Content, maxQuestionRunes); q != "" {
				lines = append(lines, "- user: "+q)
			}
		case model.RoleAssistant, model.RoleTool:
			text := m.Content
			for _, c := range m.ToolCalls {
				text += " " + string(c.Arguments)
			}
			for _, f := range factRE().FindAllString(text, 64) {
				f = clip(f, maxFactRunes)
				if len(facts) < maxFacts && !seen[f] {
					seen[f] = true
					facts = append(facts, f)
				}
			}
		}
	}
	flush()
	if maxTokens <= 0 {
		return "", nil
	}
	// Keep the newest lines that fit; the oldest go first. Each line
	// costs its estimate plus one for its line break.
	used, first := 0, len(lines)
	for first > 0 {
		n := e.Text(lines[first-1]) + 1
		if used+n > maxTokens {
			break
		}
		used += n
		first--
	}
	return strings.Join(lines[first:], "\n"), nil
}

// firstSentence returns the first sentence of s on one line, at most max
// runes, with invalid UTF-8 and control characters replaced.
func firstSentence(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if i := strings.IndexAny(s, "。！？!?\n"); i >= 0 {
		_, size := utf8.DecodeRuneInString(s[i:])
		if s[i] == '\n' {
			size = 0
		}
		s = s[:i+size]
	} else if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	return clip(strings.TrimSpace(s), max)
}

// clip cuts s to at most max runes, marking the cut.
func clip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}
