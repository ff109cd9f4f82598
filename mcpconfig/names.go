package mcpconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// MaxToolName is the longest tool name the bridge offers: model providers
// take function names of 1 to 64 letters, digits, '_' and '-', and refuse
// a whole request over one name that is not.
const MaxToolName = 64

// ValidToolName reports whether name is one model providers accept:
// 1 to MaxToolName characters, each an ASCII letter or digit, '_' or '-'.
func ValidToolName(name string) bool {
	if len(name) == 0 || len(name) > MaxToolName {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !validNameByte(name[i]) {
			return false
		}
	}
	return true
}

func validNameByte(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// nameHashLen is the length of the hash that ends a mapped name.
const nameHashLen = 8

// ExposedName returns the name a server's tool called remote is offered
// under with the given toolPrefix, and whether it had to be changed for
// that. A valid prefix+remote is kept. Any other name (spaces, dots,
// newlines, escape sequences, letters outside ASCII, or too long) is
// mapped: each character that is not allowed becomes '_', the result is
// cut to fit, and '_' and the first 8 hex digits of the SHA-256 of remote
// are appended. The mapping depends on the name alone, so a tool keeps its
// name across restarts and re-listings whatever else the server offers,
// and two names that differ only in forbidden characters ("a b", "a.b")
// stay apart. An empty remote name maps to "" (such a tool is skipped).
func ExposedName(prefix, remote string) (name string, mapped bool) {
	if remote == "" {
		return "", false
	}
	if full := prefix + remote; ValidToolName(full) {
		return full, false
	}
	sum := sha256.Sum256([]byte(remote))
	suffix := "_" + hex.EncodeToString(sum[:])[:nameHashLen]
	room := MaxToolName - len(prefix) - len(suffix)
	var b strings.Builder
	for i := 0; i < len(remote) && b.Len() < room; {
		r, w := utf8.DecodeRuneInString(remote[i:])
		if r < utf8.RuneSelf && validNameByte(byte(r)) {
			b.WriteByte(byte(r))
		} else {
			b.WriteByte('_')
		}
		i += w
	}
	return prefix + b.String() + suffix, true
}
