package web

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// checkHost refuses a request that reached a loopback address under a
// name that is not a loopback name, as serve --http does: that is how a
// page of another site, whose name was re-pointed at 127.0.0.1 (DNS
// rebinding), would reach a server on the user's own machine.
func checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if local != nil && isLoopbackHost(hostOnly(local.String())) && !isLoopbackHost(hostOnly(r.Host)) {
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusForbidden, fmt.Sprintf("Host %s is not a loopback name; this server only answers requests addressed to localhost, 127.0.0.1 or [::1]", strconv.Quote(r.Host)))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// crossOrigin refuses state-changing requests a browser sent from another
// origin (net/http's CrossOriginProtection: Sec-Fetch-Site, else Origin
// against Host). Requests without those headers, from curl or an SDK, are
// not a browser's and pass.
func crossOrigin(next http.Handler) http.Handler {
	p := http.NewCrossOriginProtection()
	p.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusForbidden, "cross-origin request refused: this endpoint only accepts requests from pages served by this server")
	}))
	return p.Handler(next)
}

// operatorOnly lets a request through when it carries the token, as a
// Bearer token or as the password of HTTP Basic (which a browser asks for
// and then sends by itself). Without a token configured, everything
// passes: the command line allows that on loopback only.
func (s *Server) operatorOnly(next http.HandlerFunc) http.HandlerFunc {
	if s.opts.Token == "" {
		return next
	}
	want := sha256.Sum256([]byte(s.opts.Token))
	return func(w http.ResponseWriter, r *http.Request) {
		var got string
		if _, pass, ok := r.BasicAuth(); ok {
			got = pass
		} else if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
			got = strings.TrimSpace(tok)
		}
		sum := sha256.Sum256([]byte(got))
		if got == "" || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="agentapp operator", charset="UTF-8"`)
			writeError(w, http.StatusUnauthorized, "the operator view needs the token the server was started with (AGENTAPP_WEB_TOKEN): send it as \"Authorization: Bearer <token>\", or as the password when the browser asks")
			return
		}
		next(w, r)
	}
}

// bearerOrBasic is the credential a request carries: a Bearer token, or
// the password of HTTP Basic.
func bearerOrBasic(r *http.Request) string {
	if _, pass, ok := r.BasicAuth(); ok {
		return pass
	}
	if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(tok)
	}
	return ""
}

// matchesAny reports whether got is one of the sums, in time that does not
// depend on which one or how much of it matched.
func matchesAny(got string, sums [][sha256.Size]byte) bool {
	if got == "" {
		return false
	}
	sum := sha256.Sum256([]byte(got))
	ok := 0
	for _, w := range sums {
		ok |= subtle.ConstantTimeCompare(sum[:], w[:])
	}
	return ok == 1
}

func sumsOf(keys ...string) [][sha256.Size]byte {
	var sums [][sha256.Size]byte
	for _, k := range keys {
		if k = strings.TrimSpace(k); k != "" {
			sums = append(sums, sha256.Sum256([]byte(k)))
		}
	}
	return sums
}

// apiKeyOnly lets a /v1 request through when it carries one of
// Options.APIKeys as "Authorization: Bearer <key>", as OpenAI's clients
// send their key. Without keys configured, everything passes.
func (s *Server) apiKeyOnly(next http.HandlerFunc) http.HandlerFunc {
	sums := sumsOf(s.opts.APIKeys...)
	if len(sums) == 0 {
		return next
	}
	return func(w http.ResponseWriter, r *http.Request) {
		scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || !matchesAny(strings.TrimSpace(tok), sums) {
			msg := "this endpoint needs an API key: send \"Authorization: Bearer <key>\" with one of the keys the server was started with"
			if tok != "" {
				msg = "the API key is not one this server accepts; send \"Authorization: Bearer <key>\" with one of the keys the server was started with"
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="agentapp"`)
			writeJSON(w, http.StatusUnauthorized, oaError{Error: oaErrorBody{Message: msg, Type: "invalid_request_error", Code: "invalid_api_key"}})
			return
		}
		next(w, r)
	}
}

// metricsAllowed reports whether r may read the metrics and the details of
// /readyz: always without a metrics token, else with it.
func (s *Server) metricsAllowed(r *http.Request) bool {
	if s.opts.MetricsToken == "" {
		return true
	}
	return matchesAny(bearerOrBasic(r), sumsOf(s.opts.MetricsToken))
}

// metricsOnly guards /metrics with Options.MetricsToken.
func (s *Server) metricsOnly(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.metricsAllowed(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="agentapp metrics", charset="UTF-8"`)
			writeError(w, http.StatusUnauthorized, "the metrics need the server's metrics token: send it as \"Authorization: Bearer <token>\"")
			return
		}
		next(w, r)
	}
}
