package web

import (
	"net/http"

	"github.com/agentapp/agentapp/internal/trust"
)

// checkHost refuses a request that reached a loopback address under a
// name that is not a loopback name, as serve --http does: that is how a
// page of another site, whose name was re-pointed at 127.0.0.1 (DNS
// rebinding), would reach a server on the user's own machine.
func checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if msg := trust.HostProblem(r); msg != "" {
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusForbidden, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
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
	want := trust.NewSecrets(s.opts.Token)
	return func(w http.ResponseWriter, r *http.Request) {
		if !want.Match(trust.Credential(r)) {
			w.Header().Set("WWW-Authenticate", `Basic realm="agentapp operator", charset="UTF-8"`)
			writeError(w, http.StatusUnauthorized, "the operator view needs the token the server was started with (AGENTAPP_WEB_TOKEN): send it as \"Authorization: Bearer <token>\", or as the password when the browser asks")
			return
		}
		next(w, r)
	}
}

// apiKeyOnly lets a /v1 request through when it carries one of
// Options.APIKeys as "Authorization: Bearer <key>", as OpenAI's clients
// send their key. Without keys configured, everything passes.
func (s *Server) apiKeyOnly(next http.HandlerFunc) http.HandlerFunc {
	keys := trust.NewSecrets(s.opts.APIKeys...)
	if keys.Empty() {
		return next
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if tok, _ := trust.BearerToken(r.Header.Get("Authorization")); !keys.Match(tok) {
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
	return trust.NewSecrets(s.opts.MetricsToken).Match(trust.Credential(r))
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
