// Package trust holds the checks agentapp's HTTP servers (serve --http and
// the web front end) make at their trust boundary: which host names and
// addresses are this machine's (loopback), whether a request that reached
// a loopback address names a foreign host or comes from a foreign page
// (DNS rebinding, cross-site requests), and whether it carries a secret
// the server was started with. One copy, so that the servers cannot drift
// apart on what "localhost" means.
package trust

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// IsLoopbackHost reports whether host (a name or an IP, without port;
// brackets allowed) is "localhost", a name under .localhost (RFC 6761), or
// a loopback address, IPv4-mapped ones included. A name may end in the
// root's dot ("localhost."), which names the same host.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// IsLocalhostSubdomain reports whether host is a name under .localhost
// (not "localhost" itself), with or without the root's dot.
func IsLocalhostSubdomain(host string) bool {
	return strings.HasSuffix(strings.TrimSuffix(strings.ToLower(host), "."), ".localhost")
}

// HostOnly returns the host part of a Host header value or a HOST:PORT
// address ("[::1]:80" → "::1", "localhost" → "localhost").
func HostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// IsLoopbackAddr reports whether a HOST:PORT address (or a bare host)
// names a loopback host.
func IsLoopbackAddr(hostport string) bool { return IsLoopbackHost(HostOnly(hostport)) }

// Quote quotes a request's header value for an error message: Go syntax,
// at most 200 bytes of it, so that a client's control characters and
// lengths reach no terminal or log as they were sent.
func Quote(s string) string {
	const limit = 200
	if len(s) > limit {
		return strconv.Quote(s[:limit]) + "…"
	}
	return strconv.Quote(s)
}

// HostProblem says why r, which reached a loopback address, names a host
// that is not a loopback name, or returns "". That is how a page of
// another site whose name was re-pointed at 127.0.0.1 (DNS rebinding)
// reaches a server on the user's machine. A server reached on another
// address has no such rule: its Host is whatever the network calls it.
func HostProblem(r *http.Request) string {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local != nil && IsLoopbackAddr(local.String()) && !IsLoopbackAddr(r.Host) {
		return fmt.Sprintf("Host %s is not a loopback name; this server only answers requests addressed to localhost, 127.0.0.1 or [::1]", Quote(r.Host))
	}
	return ""
}

// OriginProblem says why a browser's request r comes from a page that may
// not call the server, or returns "": without an Origin header it is not a
// browser's; with one, the page must be served from a loopback host or
// from the server itself (the same host and port as r.Host).
func OriginProblem(r *http.Request) string {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("Origin %s is not allowed", Quote(origin))
	}
	if IsLoopbackHost(u.Hostname()) || strings.EqualFold(u.Host, r.Host) {
		return ""
	}
	return fmt.Sprintf("Origin %s is not allowed; only pages served from localhost or from this server may call it", Quote(origin))
}

// BearerToken returns the token of an Authorization header of the Bearer
// scheme (the scheme's name in any case, white space around the token
// dropped), and whether there is one.
func BearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// Credential is the secret r carries: the password of HTTP Basic (which a
// browser asks for once and then sends by itself), else a Bearer token,
// else "".
func Credential(r *http.Request) string {
	if _, pass, ok := r.BasicAuth(); ok {
		return pass
	}
	tok, _ := BearerToken(r.Header.Get("Authorization"))
	return tok
}

// Secrets are the secrets a server accepts, kept as SHA-256 sums:
// comparing fixed-size sums in constant time tells a client through
// timing neither a secret's bytes nor its length, nor which one matched.
type Secrets struct{ sums [][sha256.Size]byte }

// NewSecrets accepts each of secrets, white space around it dropped. A
// secret that is only white space is kept as it is, so that it matches no
// client instead of meaning "no secret": a server must fail closed.
func NewSecrets(secrets ...string) Secrets {
	var s Secrets
	for _, k := range secrets {
		if t := strings.TrimSpace(k); t != "" {
			k = t
		}
		if k != "" {
			s.sums = append(s.sums, sha256.Sum256([]byte(k)))
		}
	}
	return s
}

// Empty reports whether no secret is accepted (the server asks for none).
func (s Secrets) Empty() bool { return len(s.sums) == 0 }

// Match reports whether got is one of the secrets. Every sum is compared,
// whichever matches. The empty string matches nothing.
func (s Secrets) Match(got string) bool {
	if got == "" {
		return false
	}
	sum := sha256.Sum256([]byte(got))
	ok := 0
	for _, w := range s.sums {
		ok |= subtle.ConstantTimeCompare(sum[:], w[:])
	}
	return ok == 1
}

// MatchBearer reports whether an Authorization header carries one of the
// secrets as a Bearer token.
func (s Secrets) MatchBearer(header string) bool {
	tok, ok := BearerToken(header)
	return ok && s.Match(tok)
}
