package openai

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Defaults: Zhipu GLM's OpenAI-compatible endpoint and its free model.
const (
	DefaultBaseURL = "https://open.bigmodel.cn/api/paas/v4"
	DefaultModel   = "glm-4-flash"
)

// The environment variables LoadConfig reads.
const (
	EnvAPIKey  = "OPENAI_API_KEY"
	EnvBaseURL = "OPENAI_BASE_URL"
	EnvModel   = "OPENAI_MODEL"
	// EnvOrgID and EnvProjectID pick the OpenAI organization and project
	// a request is billed to; other providers ignore them.
	EnvOrgID     = "OPENAI_ORG_ID"
	EnvProjectID = "OPENAI_PROJECT_ID"
)

// Source values of a setting that did not come from a .env file.
const (
	SourceEnv     = "environment"
	SourceDefault = "default"
	SourceUnset   = "unset"
)

// Config says which OpenAI-compatible endpoint to call.
type Config struct {
	APIKey  string
	BaseURL string
	Model   string
	// Organization and Project, when set, are sent as the
	// OpenAI-Organization and OpenAI-Project headers.
	Organization, Project string
	// Source tells where each value came from, for a banner: SourceEnv, the
	// path of the .env file, SourceDefault, or SourceUnset (no API key).
	Source Sources
}

// Sources holds the origin of each Config value.
type Sources struct {
	APIKey, BaseURL, Model string
}

// HasKey reports whether an API key is configured.
func (c Config) HasKey() bool { return c.APIKey != "" }

// String describes the configuration without revealing the key, so a Config
// can be logged or printed with %v safely.
func (c Config) String() string {
	key := "no API key"
	if c.HasKey() {
		key = "API key " + redact(c.APIKey)
		if c.Source.APIKey != "" {
			key += " from " + c.Source.APIKey
		}
	}
	return fmt.Sprintf("model %s at %s (%s)", or(c.Model, DefaultModel), or(c.BaseURL, DefaultBaseURL), key)
}

// GoString keeps %#v from printing the key too.
func (c Config) GoString() string { return "openai.Config{" + c.String() + "}" }

func redact(key string) string {
	if len(key) <= 8 {
		return "****"
	}
	return key[:3] + "…" + key[len(key)-4:]
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// LoadConfig reads OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL,
// OPENAI_ORG_ID and OPENAI_PROJECT_ID through
// lookup (os.LookupEnv in the program, a map in tests; nil means none is
// set) and, for each one that is unset or empty there, from the .env file
// in dir, else the one at the root of the repository holding dir (dir ""
// means the working directory; see findDotEnv). Base URL and model fall
// back to DefaultBaseURL and DefaultModel. A missing .env file is not an
// error; one that exists but cannot be read, or that another user owns or
// could have written, is.
//
// The .env format is the common one: KEY=VALUE lines, an optional "export "
// prefix, values in single or double quotes (double quotes understand \n,
// \t, \" and \\), "#" comments on their own line or after an unquoted value
// (preceded by a space), blank lines. Lines that are not assignments are
// skipped.
func LoadConfig(dir string, lookup func(string) (string, bool)) (Config, error) {
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	var dotenv map[string]string
	var dotenvPath string
	path, err := findDotEnv(dir)
	if err != nil {
		return Config{}, err
	}
	if path != "" {
		text, err := readDotEnv(path)
		if err != nil {
			return Config{}, err
		}
		dotenv = ParseDotEnv(text)
		dotenvPath = path
	}
	get := func(name, def string) (string, string) {
		if v, ok := lookup(name); ok && v != "" {
			return v, SourceEnv
		}
		if v := dotenv[name]; v != "" {
			return v, dotenvPath
		}
		if def == "" {
			return "", SourceUnset
		}
		return def, SourceDefault
	}
	var c Config
	c.APIKey, c.Source.APIKey = get(EnvAPIKey, "")
	c.BaseURL, c.Source.BaseURL = get(EnvBaseURL, DefaultBaseURL)
	c.Model, c.Source.Model = get(EnvModel, DefaultModel)
	c.Organization, _ = get(EnvOrgID, "")
	c.Project, _ = get(EnvProjectID, "")
	c.Organization = strings.TrimSpace(c.Organization)
	c.Project = strings.TrimSpace(c.Project)
	c.APIKey = strings.TrimSpace(c.APIKey)
	c.BaseURL = strings.TrimSpace(c.BaseURL)
	c.Model = strings.TrimSpace(c.Model)
	return c, nil
}

// findDotEnv returns the .env file LoadConfig reads for dir: dir/.env, else
// the one at the root of the repository holding dir (the nearest directory
// with a .git entry, dir included), else "". It does not look further up:
// a .env in a parent directory (a shared /tmp, a home directory, another
// user's checkout) would otherwise redirect the API key and the
// conversation to whatever base URL it names.
func findDotEnv(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("find .env: %w", err)
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find .env: %w", err)
	}
	if p, err := dotEnvIn(dir); p != "" || err != nil {
		return p, err
	}
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if d == dir {
				return "", nil
			}
			return dotEnvIn(d)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", nil
		}
		d = parent
	}
}

// dotEnvIn returns dir/.env if it is a regular file, else "".
func dotEnvIn(dir string) (string, error) {
	p := filepath.Join(dir, ".env")
	st, err := os.Stat(p)
	switch {
	case err == nil && st.Mode().IsRegular():
		return p, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission):
		return "", fmt.Errorf("find .env: %w", err)
	}
	return "", nil
}

// readDotEnv reads a .env file after checking, on the file it opened, that
// nobody else could have written it: it must belong to the user running
// the program and not be writable by group or others (see checkPrivate).
// Such a file is refused, since its base URL would receive the API key.
func readDotEnv(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if err := checkPrivate(path, st); err != nil {
		return "", err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxDotEnvBytes+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxDotEnvBytes {
		return "", fmt.Errorf("read %s: larger than %d KiB, which is not a .env file of settings", path, maxDotEnvBytes>>10)
	}
	return string(data), nil
}

// maxDotEnvBytes bounds the .env file LoadConfig reads.
const maxDotEnvBytes = 1 << 20

// BaseURLNote says where the base URL came from when that was a .env file
// ("base URL from /src/proj/.env"), and is "" when it came from the
// environment or is the default. A front end shows it wherever it starts
// a conversation, so that a base URL nobody exported is never used
// silently.
func (c Config) BaseURLNote() string {
	switch c.Source.BaseURL {
	case SourceEnv, SourceDefault, SourceUnset, "":
		return ""
	}
	return "base URL from " + c.Source.BaseURL
}

// ParseDotEnv parses the text of a .env file (see LoadConfig for the
// format). Later assignments of a key win.
func ParseDotEnv(text string) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(strings.TrimPrefix(text, "\uFEFF")))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "export"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			line = strings.TrimSpace(rest)
		}
		key, val, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || !validEnvName(key) {
			continue
		}
		out[key] = dotEnvValue(strings.TrimSpace(val))
	}
	return out
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		case r == '.' || r == '-':
		default:
			return false
		}
	}
	return true
}

func dotEnvValue(v string) string {
	if v == "" {
		return ""
	}
	switch q := v[0]; q {
	case '"', '\'':
		end := -1
		for i := 1; i < len(v); i++ {
			if q == '"' && v[i] == '\\' {
				i++
				continue
			}
			if v[i] == q {
				end = i
				break
			}
		}
		if end < 0 { // unterminated: take the text as it is
			return v
		}
		inner := v[1:end]
		if q == '\'' {
			return inner
		}
		return unescapeDouble(inner)
	}
	// Unquoted: a " #" starts a comment.
	for i := 1; i < len(v); i++ {
		if v[i] == '#' && (v[i-1] == ' ' || v[i-1] == '\t') {
			return strings.TrimSpace(v[:i])
		}
	}
	return v
}

func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '"', '\\', '$':
			b.WriteByte(s[i])
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
