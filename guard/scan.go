package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Finding is one prompt-injection pattern found in a text.
type Finding struct {
	// Pattern is the name of the pattern that matched, e.g.
	// "ignore-instructions" or "zh-reveal-system-prompt"; it is what
	// refusals and the audit log show.
	Pattern string
	// Match is the matched text in its normalised matching form, cut to
	// maxMatchRunes, so a reader can see why the text was refused.
	Match string
}

// String shows the pattern and the matched text, for logs.
func (f Finding) String() string { return fmt.Sprintf("%s (%q)", f.Pattern, f.Match) }

// maxMatchRunes bounds Finding.Match, so a huge match does not flood the
// audit log or a refusal.
const maxMatchRunes = 80

// pattern is a named regular expression whose matches start with one of
// a few literal words. Scanning looks for those words with strings.Index
// and runs the expression anchored at each occurrence: Go's regexp cannot
// skip ahead through a leading alternation, and an unanchored search of
// twenty alternatives ran at well under 1 MB/s on ordinary documents.
// English patterns run against the leet-decoded matching copies; Chinese
// ones against hanForm.
type pattern struct {
	name string
	// starts are the literal beginnings of every match.
	starts []string
	// wordStart requires a word boundary before the match (the \b of an
	// unanchored expression).
	wordStart bool
	// re is ^(?:starts)rest, run at each occurrence of a start.
	re *regexp.Regexp
	// slow is the same expression unanchored, the reference the tests
	// compare the fast scan against.
	slow *regexp.Regexp
}

func newPattern(name string, wordStart bool, starts []string, rest string) pattern {
	quoted := make([]string, len(starts))
	for i, st := range starts {
		if st == "" {
			// An empty start would run the pattern at every byte.
			panic("guard: pattern " + name + " has an empty start")
		}
		quoted[i] = regexp.QuoteMeta(st)
	}
	expr := `(?:` + strings.Join(quoted, "|") + `)` + rest
	slow := expr
	if wordStart {
		slow = `\b` + expr
	}
	return pattern{
		name:      name,
		starts:    starts,
		wordStart: wordStart,
		re:        regexp.MustCompile(`^` + expr),
		slow:      regexp.MustCompile(slow),
	}
}

// find returns a match of p in s, if there is one.
func (p *pattern) find(s string) (string, bool) {
	for _, st := range p.starts {
		for from := 0; from < len(s); {
			i := strings.Index(s[from:], st)
			if i < 0 {
				break
			}
			pos := from + i
			from = pos + 1
			if p.wordStart && pos > 0 && isWordByte(s[pos-1]) {
				continue
			}
			if m := p.re.FindString(s[pos:]); m != "" {
				return m, true
			}
		}
	}
	return "", false
}

// isWordByte is \b's notion of a word character.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// words splits a |-separated list of literal words.
func words(list string) []string { return strings.Split(list, "|") }

// Building blocks of the English patterns. sep is what may stand between
// two words: white space, punctuation and symbols, or nothing at all, since
// removing zero-width characters can glue words together.
const (
	sep = `[\s\p{P}\p{S}]*`
	// ignoreVerbs start an instruction to drop earlier instructions.
	ignoreVerbs = `ignore|disregard|forget|override|bypass|discard|abandon`
	// qualifier marks the instructions meant as earlier or system ones;
	// one is required so that "don't ignore the instructions on the box"
	// passes.
	qualifier = `(?:all|any|every|previous|prior|above|earlier|preceding|foregoing|former|original|initial|existing|your|system|developer|these|those|old)`
	// strictQualifier is for weak nouns like "rules", which customers use
	// in complaints ("you ignore all rules!").
	strictQualifier = `(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|system|developer|safety)`
	// filler words may stand around the qualifier.
	filler = `(?:all|any|every|previous|prior|above|earlier|preceding|foregoing|former|original|initial|existing|your|system|developer|these|those|old|the|of|my|and|or|to|you|that|were|was|have|been|given|received|set)`
	// strongNoun names instructions unambiguously.
	strongNoun = `(?:instructions?|prompts?|directives?|guardrails|programming)`
	weakNoun   = `(?:rules|guidelines|constraints|restrictions)`
	// revealVerbs ask for something to be shown.
	revealVerbs = `print|reveal|show|display|output|repeat|tell|give|leak|dump|expose|share|write|list|send|recite|disclose|return|spell`
	revealFill  = `(?:me|us|out|is|are|was|were|the|your|its|our|full|entire|complete|whole|exact|current|verbatim|all|of|back|word|for|by|up|what)`
	// secretThing is the system prompt under its usual names.
	secretThing = `(?:(?:system|developer)` + sep + `(?:prompts?|instructions?|messages?)|(?:hidden|secret|initial|original)` + sep + `prompts?|your` + sep + `(?:(?:full|entire|whole|initial|original|first|exact)` + sep + `)?prompts?)`
	// roleNoun is what "you are now a ..." turns the model into.
	roleNoun = `(?:ai|assistant|bot|chatbot|model|agent|character|persona|hacker|administrator|admin|llm|gpt|dan)`
	// chatToken is a chat template's special token between "<|" and "|>";
	// the parts of a name may be joined by spaces, "_" or "-", or nothing.
	chatToken = `(?:im[\s_-]*(?:start|end|sep)|system|user|assistant|end[\s_-]*of[\s_-]*text|(?:start|end)[\s_-]*header[\s_-]*id|eot[\s_-]*id|(?:begin|end)[\s_-]*of[\s_-]*(?:text|sentence))`
)

// englishPatterns run against matchForms. The patterns are compiled on
// first use, not at start-up: compiling them all takes milliseconds, and
// `agentapp serve` (and a chat with no guard on) never scans.
var englishPatterns = sync.OnceValue(func() []pattern {
	return []pattern{
		// The Chinese words let an English verb govern a Chinese phrase
		// (ignore 之前的指示); pure English matches as before.
		newPattern("ignore-instructions", true, words(ignoreVerbs), sep+`(?:(?:`+filler+`|`+zhFiller+`)`+sep+`){0,3}(?:`+qualifier+`|`+zhQualifier+`)`+sep+
			`(?:(?:`+filler+`|`+zhFiller+`|`+zhQualifier+`)`+sep+`){0,3}(?:`+strongNoun+`\b|`+zhNounHan+`)`),
		newPattern("ignore-instructions", true, words(ignoreVerbs), sep+`(?:`+filler+sep+`){0,3}`+strictQualifier+sep+`(?:`+filler+sep+`){0,3}`+weakNoun+`\b`),
		newPattern("ignore-above", true, words("ignore|disregard|forget"), sep+`(?:(?:all|everything|anything|of|the|that|what|is|was|written|stated|said)`+sep+`){0,3}(?:above|foregoing|preceding|before`+sep+`this|prior`+sep+`to`+sep+`this)\b`),
		newPattern("you-are-now", true, words("you"), sep+`(?:are|re|r)`+sep+`now`+sep+`(?:(?:a|an)`+sep+`(?:[a-z]+`+sep+`){0,2}`+roleNoun+`|no`+sep+`longer`+sep+`(?:a|an|an?`+sep+`ai|bound|restricted|limited)|free|unrestricted|unfiltered|uncensored|jailbroken|dan|in`+sep+`(?:developer|god|admin|dan|jailbreak|unrestricted)`+sep+`mode|called|named|known`+sep+`as)\b`),
		newPattern("you-are-now", true, words("from"), sep+`now`+sep+`on`+sep+`you`+sep+`(?:are|will|must|shall|should)`+sep+`(?:[a-z]+`+sep+`){0,2}(?:act|behave|pretend|roleplay|obey|answer`+sep+`as|respond`+sep+`as|be`+sep+`(?:a|an))\b`),
		newPattern("roleplay", true, words("role"), sep+`play(?:ing)?`+sep+`as\b`),
		newPattern("reveal-system-prompt", true, words(revealVerbs), sep+`(?:`+revealFill+sep+`){0,5}`+secretThing+`\b`),
		newPattern("system-tag", false, words("["), `\s*/?\s*(?:system|inst|sys|system\s*(?:message|prompt|instructions?)|developer)\s*\]`),
		// <system> and the like, and chat templates' special tokens, also
		// spaced out or with doubled bars: < | im_start | >.
		newPattern("system-tag", false, words("<"), `(?:\s*/?\s*(?:system|sys|system_prompt|instructions?|developer)\s*>|\s*\|+\s*`+chatToken+`\s*\|+\s*>)`),
		newPattern("system-tag", false, words("<<"), `\s*/?\s*sys\s*>>`),
		newPattern("system-tag", false, words("##"), `#*\s*(?:system|instructions?|new\s*instructions?|developer)\b`),
	}
})

// Building blocks of the Chinese patterns.
const (
	zhIgnoreVerbs = `忽略|忽视|无视|漠视|不要理会|不用理会|别理会|不理会|不要管|别管|忘记|忘掉|抛开|抛弃|丢弃|放弃|跳过|绕过|覆盖|推翻`
	zhQualifier   = `(?:之前|以前|先前|此前|以上|上面|上述|前面|前述|原来|原先|原有|原始|初始|所有|全部|一切|任何|其他|其它|系统|开发者|默认|预设)`
	zhFiller      = `(?:的|你|您|收到|得到|接收|接到|被|给|设定|设置|了|过|掉|所|这些|那些)`
	zhNounHan     = `(?:指令|指示|提示词|提示|规则|设定|命令|约束|限制)`
	zhNoun        = `(?:指令|指示|提示词|提示|规则|设定|命令|约束|限制|prompt|instructions?)`
	// zhRevealFill may stand between the verb and the system prompt.
	zhRevealFill = `(?:一下|出来|出|你|您|的|完整|全部|所有|原始|初始|隐藏|内部|真实|当前|这些|最初|被设定|好|给我|我|把)`
	// zhSecret is the system prompt; a bare 系统提示 is also a device's
	// "system notice", so it counts only when not followed by a word that
	// makes it one (提示音, 提示框, 提示信息 ...).
	zhSecret = `(?:(?:系统|开发者|初始|原始|隐藏|内部)(?:提示词|prompt|指令)|(?:开发者|初始|隐藏|内部)设定|系统提示(?:$|[^信音框语栏窗]))`
	// zhBecome follows 你现在 in zh-you-are-now: "is / becomes" and a role.
	zhBecome = `(?:就|将|要|已经)?(?:是|成为|变成|变为|充当|作为)(?:[^不否?吗么呢嘛还或,.!;][^?吗么呢嘛还或,.!;]{0,9})?` + zhRole + `(?:$|[^吗么呢嘛?])`
	// zhRole is what "你现在是 ..." turns the model into.
	zhRole = `(?:ai|助手|机器人|模型|管理员|开发者|黑客|dan|gpt|chatgpt|角色|人格|猫娘|系统|没有限制|没有任何限制|不受限制|不受任何限制|无限制|无约束|不受约束)`
)

// chinesePatterns run against hanForm; compiled on first use like
// englishPatterns.
var chinesePatterns = sync.OnceValue(func() []pattern {
	return []pattern{
		// The English words let a Chinese verb govern an English phrase
		// (忽略 previous instructions); hanForm has no spaces, so they are
		// glued together there. Chinese text matches as before.
		newPattern("zh-ignore-instructions", false, words(zhIgnoreVerbs), `(?:`+zhFiller+`|`+filler+`){0,3}(?:`+zhQualifier+`|`+qualifier+`)`+
			`(?:`+zhFiller+`|`+zhQualifier+`|`+filler+`){0,4}(?:`+zhNoun+`|`+strongNoun+`)`),
		newPattern("zh-reveal-system-prompt", false, words("输出|打印|泄露|泄漏|透露|复述|重复|告诉我|说出|写出|公开|列出|发给我|念出|给出"), zhRevealFill+`{0,4}`+zhSecret),
		newPattern("zh-reveal-system-prompt", false, words("显示|展示|给我看|看看|查看"), zhRevealFill+`{0,4}(?:系统|开发者|初始|原始|隐藏|内部)(?:提示词|prompt)`),
		// 你现在是… only as a statement: the gap after 是 may not start with
		// 不/否 (你现在是不是…) nor hold a question word, and the role may not
		// be followed by a question particle (你现在是机器人吗？).
		newPattern("zh-you-are-now", false, words("从现在起|从现在开始"), `,?(?:你|您)`+zhBecome),
		newPattern("zh-you-are-now", false, words("你|您"), `(?:现在|从现在起|从现在开始|接下来|今后|此后)`+zhBecome),
		newPattern("zh-roleplay", false, words("请|你|您|现在|接下来|从现在起|从现在开始"), `(?:你|您)?(?:来|要|将|就|需要|必须)?扮演`),
	}
})

// Scan reports the first prompt-injection pattern found in s, after
// Normalize, HTML character references decoded, and the look-alike,
// spelled-out letter, leet and traditional Chinese rewrites. It is the one
// scanner behind tool arguments, user messages and ingested documents, so
// a phrase refused in one place is refused in all.
func Scan(s string) (Finding, bool) {
	if s == "" {
		return Finding{}, false
	}
	norm := scanText(s)
	for _, form := range matchForms(norm) {
		english := englishPatterns()
		for i := range english {
			p := &english[i]
			if m, ok := p.find(form); ok {
				return Finding{Pattern: p.name, Match: clip(m)}, true
			}
		}
	}
	han := hanForm(norm)
	chinese := chinesePatterns()
	for i := range chinese {
		p := &chinese[i]
		if m, ok := p.find(han); ok {
			return Finding{Pattern: p.name, Match: clip(m)}, true
		}
	}
	return Finding{}, false
}

// scanText is the normalised text the matching forms are made from: s
// normalised, with its HTML character references decoded (a model reads
// &#105;gnore as ignore) and normalised again, since a reference may spell
// an upper-case, full-width or invisible character. One level is decoded,
// as a browser would: &amp;lt; is the text "&lt;", not "<".
func scanText(s string) string {
	norm := Normalize(s)
	if strings.IndexByte(norm, '&') >= 0 {
		if d, ok := decodeReferences(norm); ok {
			norm = Normalize(d)
		}
	}
	return norm
}

// ScanInput scans a user message. It is Scan under the name the chat uses,
// kept separate so a caller reads which surface is being checked; the
// patterns are deliberately the same as for tool arguments.
func ScanInput(msg string) (Finding, bool) { return Scan(msg) }

// ScanArgs scans tool arguments: every string of the JSON, object keys
// included, recursively, each on its own. Strings are decoded first, so a
// phrase hidden behind \u escapes is found. Arguments that are not valid
// JSON are scanned as one text.
func ScanArgs(args json.RawMessage) (Finding, bool) {
	if len(bytes.TrimSpace(args)) == 0 {
		return Finding{}, false
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return Scan(string(args))
	}
	return scanValue(v)
}

func scanValue(v any) (Finding, bool) {
	switch x := v.(type) {
	case string:
		return Scan(x)
	case map[string]any:
		// Keys in order, so the same arguments always report the same
		// finding.
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if f, ok := Scan(k); ok {
				return f, true
			}
			if f, ok := scanValue(x[k]); ok {
				return f, true
			}
		}
	case []any:
		for _, e := range x {
			if f, ok := scanValue(e); ok {
				return f, true
			}
		}
	}
	return Finding{}, false
}

// InjectionError is the error of a text refused because it contains a
// prompt-injection pattern. Source says what was refused ("message",
// "document NAME"); Chunk is the 1-based chunk number for a document, 0
// otherwise.
type InjectionError struct {
	Source  string
	Chunk   int
	Chunks  int
	Finding Finding
}

// Error names what was refused, where, and the pattern, so the user can
// find and fix the text.
func (e *InjectionError) Error() string {
	if e.Chunk > 0 {
		return fmt.Sprintf("%s was refused: chunk %d of %d contains a prompt-injection pattern (%s: %q); nothing was ingested",
			e.Source, e.Chunk, e.Chunks, e.Finding.Pattern, e.Finding.Match)
	}
	return fmt.Sprintf("%s was refused: it contains a prompt-injection pattern (%s: %q)", e.Source, e.Finding.Pattern, e.Finding.Match)
}

// CheckDocument scans every chunk of a document about to be ingested and
// refuses the whole document at the first chunk that holds an injection
// pattern: a poisoned passage would later be quoted to the model as a
// trusted search hit. The error is an *InjectionError naming the document,
// the chunk number (1-based) and the pattern.
func CheckDocument(name string, chunks []string) error {
	for i, c := range chunks {
		if f, ok := Scan(c); ok {
			return &InjectionError{Source: "document " + name, Chunk: i + 1, Chunks: len(chunks), Finding: f}
		}
	}
	return nil
}

// clip cuts s to maxMatchRunes runes.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= maxMatchRunes {
		return s
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == maxMatchRunes {
			break
		}
		b.WriteRune(r)
		n++
	}
	return b.String() + "…"
}
