package web

import (
	"embed"
	"io/fs"
	"net/http"
)

// The page is plain HTML, CSS and JavaScript embedded in the binary: no
// build step at install time, no third-party script.
//
//go:embed static
var staticFS embed.FS

var staticRoot, _ = fs.Sub(staticFS, "static")

// pageCSP allows the page's own files and its own API, nothing else.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func staticFiles() http.Handler {
	files := http.StripPrefix("/static/", http.FileServerFS(staticRoot))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})
}

func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	csp := pageCSP
	if s.opts.SandboxOrigin != "" {
		// The views' proxy, and nothing else, may be framed.
		csp += "; frame-src " + s.opts.SandboxOrigin
	}
	w.Header().Set("Content-Security-Policy", csp)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeFileFS(w, r, staticRoot, "index.html")
}
