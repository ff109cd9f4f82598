package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentapp/agentapp/internal/private"
	"golang.org/x/oauth2"
)

// maxLoginFile bounds a stored login read back from disk: a token file
// is a few kilobytes, and a damaged or planted one must not be read whole.
const maxLoginFile = 1 << 20

// TokenStore keeps the OAuth logins of HTTP servers between runs, one
// file per server URL in the oauth folder of a data directory. The files
// are the user's credentials: they are created 0600 in a 0700 folder and
// their contents never reach a log, a trace or an error message.
type TokenStore struct {
	dir string
	mu  sync.Mutex // one writer at a time within the process
}

// NewTokenStore returns the store kept under dataDir/oauth. Nothing is
// created until the first login is saved.
func NewTokenStore(dataDir string) *TokenStore {
	return &TokenStore{dir: filepath.Join(dataDir, "oauth")}
}

// storedLogin is what a login leaves behind: enough to refresh the access
// token without the browser (the client and the token endpoint), and the
// tokens themselves.
type storedLogin struct {
	Server       string           `json:"server"`
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	AuthURL      string           `json:"auth_url,omitempty"`
	TokenURL     string           `json:"token_url"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style"`
	Scopes       []string         `json:"scopes,omitempty"`
	Token        *oauth2.Token    `json:"token"`
}

// canonicalServerURL is the key of a server's login: scheme and host in
// lower case, no fragment, no trailing slash, so that the spellings of
// one URL a user may type share the login.
func canonicalServerURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.Fragment = ""
	u.Path = strings.TrimRight(u.Path, "/")
	return u.String()
}

// path returns the file of serverURL's login. The name is a hash of the
// URL: URLs hold characters no file name may, and the name should not
// tell which servers the user logs in to.
func (s *TokenStore) path(serverURL string) string {
	sum := sha256.Sum256([]byte(canonicalServerURL(serverURL)))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:16])+".json")
}

// Has reports whether a login is stored for serverURL.
func (s *TokenStore) Has(serverURL string) bool {
	_, err := os.Stat(s.path(serverURL))
	return err == nil
}

// Path returns the file serverURL's login is (or would be) stored in.
func (s *TokenStore) Path(serverURL string) string { return s.path(serverURL) }

// load returns the stored login of serverURL, nil when there is none.
func (s *TokenStore) load(serverURL string) (*storedLogin, error) {
	p := s.path(serverURL)
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the stored login for %s: %w", serverURL, err)
	}
	defer f.Close()
	var l storedLogin
	if err := json.NewDecoder(&limitedReader{r: f, n: maxLoginFile}).Decode(&l); err != nil || l.Token == nil || l.TokenURL == "" {
		// The error of a JSON decoder may quote the file, which holds
		// tokens: say only where it is.
		return nil, fmt.Errorf("the stored login for %s (%s) is damaged; run the login again", serverURL, p)
	}
	if canonicalServerURL(l.Server) != canonicalServerURL(serverURL) {
		return nil, nil
	}
	return &l, nil
}

// save writes serverURL's login: to a temporary file that is renamed over
// the old one, so that a crash never leaves half a file behind.
func (s *TokenStore) save(l *storedLogin) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", s.dir, err)
	}
	if err := private.Restrict(s.dir); err != nil {
		return err
	}
	data, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("encoding the login for %s: %v", l.Server, "unexpected value")
	}
	tmp, err := os.CreateTemp(s.dir, ".login-*")
	if err != nil {
		return fmt.Errorf("saving the login for %s: %w", l.Server, err)
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = private.Restrict(tmp.Name())
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), s.path(l.Server))
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("saving the login for %s in %s: %w", l.Server, s.dir, werr)
	}
	return nil
}

// Delete removes the stored login of serverURL and reports whether there
// was one.
func (s *TokenStore) Delete(serverURL string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := os.Remove(s.path(serverURL))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("removing the stored login for %s: %w", serverURL, err)
	}
}

type limitedReader struct {
	r interface{ Read([]byte) (int, error) }
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("file too large")
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}
