package oauth

import (
	"context"
	"fmt"
	"html"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// openerWait bounds how long a browser opener may run once the login is
// over: xdg-open and open return at once, a $BROWSER script that fetches
// the URL ends with the redirect; one that does not is stopped.
const openerWait = 2 * time.Second

// openBrowser opens url with the command in $BROWSER when it is set (the
// URL replaces a %s in it, or is added at the end), else with the
// platform's opener: xdg-open, open, or rundll32 on Windows. It returns
// once the opener exits or ctx ends, and never leaves the opener running.
func openBrowser(ctx context.Context, url string) error {
	var argv []string
	if b := strings.TrimSpace(os.Getenv("BROWSER")); b != "" {
		argv = strings.Fields(b)
		replaced := false
		for i, a := range argv {
			if strings.Contains(a, "%s") {
				argv[i], replaced = strings.ReplaceAll(a, "%s", url), true
			}
		}
		if !replaced {
			argv = append(argv, url)
		}
	} else {
		switch runtime.GOOS {
		case "darwin":
			argv = []string{"open", url}
		case "windows":
			argv = []string{"rundll32", "url.dll,FileProtocolHandler", url}
		default:
			argv = []string{"xdg-open", url}
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	// The opener's output is not ours to show: on `agentapp mcp` stdout
	// carries the JSON result.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%s: %w", argv[0], err)
		}
		return nil
	case <-ctx.Done():
	}
	t := time.NewTimer(openerWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		_ = cmd.Process.Kill()
		<-done
	}
	return nil
}

// loopback is the redirect target of a login: an HTTP server on
// 127.0.0.1 that takes the authorization code the browser brings back.
// The port is taken when the connection is prepared (the redirect URL is
// part of the client's registration) and held until it is closed.
type loopback struct {
	port int
	mu   sync.Mutex
	ln   net.Listener
}

func newLoopback(port int) (*loopback, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		if port != 0 {
			return nil, fmt.Errorf("the OAuth callback port %d is not free (%v); free it or change oauth.callbackPort", port, err)
		}
		return nil, fmt.Errorf("opening a loopback port for the OAuth callback: %w", err)
	}
	return &loopback{port: ln.Addr().(*net.TCPAddr).Port, ln: ln}, nil
}

func (l *loopback) redirectURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/callback", l.port)
}

type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

// wait serves the callback until a redirect with the expected state
// arrives or ctx ends. A request with another state (a stale tab, or a
// page trying to plant its own code) is refused and the wait goes on.
func (l *loopback) wait(ctx context.Context, state string) (*auth.AuthorizationResult, error) {
	l.mu.Lock()
	ln := l.ln
	l.ln = nil
	l.mu.Unlock()
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(l.port))); err != nil {
			return nil, fmt.Errorf("the OAuth callback port %d is no longer free: %w", l.port, err)
		}
	}
	got := make(chan callbackResult, 1)
	var once sync.Once
	finish := func(r callbackResult) { once.Do(func() { got <- r }) }
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if state == "" || q.Get("state") != state {
			page(w, http.StatusBadRequest, "This login link does not belong to the login agentapp is waiting for. Start the login again from agentapp.")
			return
		}
		if e := q.Get("error"); e != "" {
			msg := e
			if d := q.Get("error_description"); d != "" {
				msg += ": " + d
			}
			page(w, http.StatusOK, "The login was refused. You can close this tab.")
			finish(callbackResult{err: fmt.Errorf("the authorization server refused the login (%s)", textsafe.Preview(msg, 300))})
			return
		}
		if q.Get("code") == "" {
			page(w, http.StatusBadRequest, "The redirect carries no authorization code. Start the login again from agentapp.")
			return
		}
		page(w, http.StatusOK, "Logged in. You can close this tab and return to agentapp.")
		finish(callbackResult{res: &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}})
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	select {
	case r := <-got:
		// Let the page reach the browser before the server goes.
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = srv.Shutdown(sctx)
		cancel()
		return r.res, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func page(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><title>agentapp</title><p>%s</p>\n", html.EscapeString(msg))
}

func (l *loopback) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ln != nil {
		_ = l.ln.Close()
		l.ln = nil
	}
}
