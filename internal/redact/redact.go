// Package redact takes secrets out of text before it leaves the program's
// hands: a provider's error that echoes the API key ("Incorrect API key
// provided: sk-…"), a Bearer header quoted back, a URL with a password or
// a token in its query. Web users, trace lines and logs all see text that
// passed through Secrets, because any of them can end up in front of
// someone who must not hold the key.
//
// It is a safety net, not a parser: it replaces what looks like a key
// (sk-…, Bearer …, well-known token prefixes, the userinfo of a URL, the
// values of secret-named query parameters) and every occurrence of the
// secrets the caller knows (its configured key above all), and leaves the
// rest of the text as it was so the message still says what went wrong.
package redact

import (
	"io"
	"regexp"
	"strings"
	"sync"
)

// Mask is what a secret is replaced with.
const Mask = "[redacted]"

// minKnown is the shortest known secret that is replaced wherever it
// occurs; a shorter one would hit ordinary words.
const minKnown = 6

// The patterns are compiled on first use: every process links this package
// and most (serve answering initialize) never redact anything.
var (
	// Key-shaped tokens: OpenAI's and Anthropic's sk-…, GitHub's, Slack's,
	// Google's and AWS access key ids. The prefix is kept, so the reader
	// knows which kind of key it was.
	keyPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(sk-(?:proj-|ant-|live-|test-)?|ghp_|gho_|ghs_|github_pat_|xox[abprs]-|AIza|AKIA)[A-Za-z0-9_\-*]{6,}`)
	})
	// An Authorization value quoted back: Bearer and the token, or an
	// Authorization header of another scheme and its credentials.
	authPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(\bbearer\s+|\bauthorization:\s*[a-z]+\s+)[A-Za-z0-9_\-.~+/=*]{4,}`)
	})
	// The userinfo of a URL: scheme://user:password@ (the user is kept).
	userinfoPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.\-]*://)([^\s/@:]*):([^\s/@]*)@`)
	})
	// A secret-named query or form parameter: ?key=…, &access_token=….
	queryPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)([?&;](?:[a-z0-9_\-]*(?:key|token|secret|password|passwd|pwd|signature|sig|auth|credential)[a-z0-9_\-]*)=)[^&\s#"']+`)
	})
)

// Secrets returns s with everything key-like replaced by Mask, and every
// occurrence of each of known (at least six characters; shorter ones are
// ignored) as well.
func Secrets(s string, known ...string) string {
	for _, k := range known {
		if k = strings.TrimSpace(k); len(k) >= minKnown {
			s = strings.ReplaceAll(s, k, Mask)
		}
	}
	s = keyPattern().ReplaceAllString(s, "${1}"+Mask)
	s = authPattern().ReplaceAllString(s, "${1}"+Mask)
	s = userinfoPattern().ReplaceAllString(s, "${1}${2}:"+Mask+"@")
	s = queryPattern().ReplaceAllString(s, "${1}"+Mask)
	return s
}

// Writer returns a writer that redacts each Write before passing it on.
// It suits writers whose every Write is a whole line, as a trace's; a
// secret split across two writes would pass.
func Writer(w io.Writer, known ...string) io.Writer {
	return &writer{w: w, known: append([]string(nil), known...)}
}

type writer struct {
	w     io.Writer
	known []string
}

func (r *writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, Secrets(string(p), r.known...)); err != nil {
		return 0, err
	}
	return len(p), nil
}
