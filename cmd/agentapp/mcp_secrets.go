package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/agentapp/agentapp/internal/textsafe"
)

// The patterns below are compiled on first use (sync.OnceValue): only the
// mcp subcommands need them, and every serve start would pay otherwise.

// secretName matches the name of an environment variable, header, flag or
// URL parameter that usually holds a secret.
var secretName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(token|secret|passw|pwd|api[-_]?key|apikey|access[-_]?key|private[-_]?key|auth|credential|cookie|session|bearer|signature)`)
})

// secretValue matches a value that looks like a credential whatever its
// name: a scheme and a token, or a well-known key prefix.
var secretValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?i:bearer|basic|token)\s+\S{6,}|^(sk-|sk_live_|ghp_|gho_|github_pat_|xox[abpr]-|AKIA|AIza|glpat-)\S{6,}`)
})

// urlPassword matches the password of a URL's user information anywhere
// in a value (postgres://app:PASSWORD@db/app): a connection string holds
// a secret whatever its variable is called. Groups: what comes before the
// password, the password, the "@".
var urlPassword = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^/@:\s]*:)([^@/\s]+)(@)`)
})

// varRef is a ${VAR} or ${VAR:-default} reference, which keeps the secret
// out of the file.
var varRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{[^}]*\}`) })

// holdsSecret reports whether the value of name is a secret written in
// the clear: a secret-looking name or value, not only ${VAR} references
// and an auth scheme.
func holdsSecret(name, value string) bool {
	rest := strings.TrimSpace(varRef().ReplaceAllString(value, ""))
	for _, scheme := range []string{"Bearer", "Basic", "Token"} {
		if len(rest) >= len(scheme) && strings.EqualFold(rest[:len(scheme)], scheme) {
			rest = strings.TrimSpace(rest[len(scheme):])
		}
	}
	if rest == "" {
		return false
	}
	return secretName().MatchString(name) || secretValue().MatchString(value) || urlPassword().MatchString(rest)
}

// maskURLPasswords hides the passwords of the URLs in s, keeping ${VAR}
// references.
func maskURLPasswords(s string) string {
	return urlPassword().ReplaceAllStringFunc(s, func(m string) string {
		g := urlPassword().FindStringSubmatch(m)
		if varRef().MatchString(g[2]) {
			return m
		}
		return g[1] + "****" + g[3]
	})
}

// maskValue hides a secret value, keeping an auth scheme and ${VAR}
// references so the shape stays readable.
func maskValue(name, value string) string {
	if !holdsSecret(name, value) {
		return value
	}
	if scheme, _, ok := strings.Cut(value, " "); ok && (strings.EqualFold(scheme, "bearer") || strings.EqualFold(scheme, "basic") || strings.EqualFold(scheme, "token")) {
		return scheme + " ****"
	}
	if !secretName().MatchString(name) && !secretValue().MatchString(value) {
		// Only a URL's password is secret: keep the rest readable.
		return maskURLPasswords(value)
	}
	return "****"
}

// maskEntry returns a server entry with the secret values of env, headers,
// args and url masked, for `mcp get` and `mcp list --json`: the output is
// pasted into issues and chats.
func maskEntry(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	for _, field := range []string{"env", "headers"} {
		if kv, ok := m[field].(map[string]any); ok {
			for k, v := range kv {
				if s, ok := v.(string); ok {
					kv[k] = maskValue(k, s)
				}
			}
		}
	}
	if args, ok := m["args"].([]any); ok {
		for i, a := range args {
			s, ok := a.(string)
			if !ok {
				continue
			}
			if name, val, eq := strings.Cut(s, "="); eq && strings.HasPrefix(name, "-") {
				args[i] = name + "=" + maskValue(name, val)
			} else if i > 0 {
				if prev, ok := args[i-1].(string); ok && strings.HasPrefix(prev, "-") && !strings.Contains(prev, "=") && secretName().MatchString(prev) && !strings.HasPrefix(s, "-") {
					args[i] = maskValue(prev, s)
				}
			} else {
				args[i] = maskValue("", s)
			}
			if a, ok := args[i].(string); ok {
				args[i] = maskURLPasswords(a)
			}
		}
	}
	if u, ok := m["url"].(string); ok {
		m["url"] = maskURL(u)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}

// maskURL masks a password in the URL and secret-looking query values.
func maskURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	changed := false
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "****")
		changed = true
	}
	q := u.Query()
	for k, vs := range q {
		for i, v := range vs {
			if mv := maskValue(k, v); mv != v {
				vs[i], changed = mv, true
			}
		}
	}
	if !changed {
		return s
	}
	u.RawQuery = q.Encode()
	return strings.NewReplacer("%2A", "*", "%24%7B", "${", "%7D", "}").Replace(u.String())
}

// maskArgs masks --flag=SECRET and --token SECRET in a command line.
func maskArgs(line string) string {
	words := strings.Fields(line)
	for i, w := range words {
		if name, val, ok := strings.Cut(w, "="); ok && strings.HasPrefix(name, "-") {
			words[i] = name + "=" + maskValue(name, val)
		} else if i > 0 && strings.HasPrefix(words[i-1], "-") && !strings.Contains(words[i-1], "=") && secretName().MatchString(words[i-1]) && !strings.HasPrefix(w, "-") {
			words[i] = maskValue(words[i-1], w)
		}
		words[i] = maskURLPasswords(words[i])
	}
	return strings.Join(words, " ")
}

// warnSharedSecrets warns when an entry about to go into a shared file
// (the project's .mcp.json) holds a secret in the clear, and advises the
// ${VAR} form.
func warnSharedSecrets(w io.Writer, path string, raw json.RawMessage) {
	var e struct {
		Env     map[string]string `json:"env"`
		Headers map[string]string `json:"headers"`
		Args    []string          `json:"args"`
		URL     string            `json:"url"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return
	}
	n := 0
	check := func(flag string, kv map[string]string) {
		keys := make([]string, 0, len(kv))
		for k := range kv {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !holdsSecret(k, kv[k]) {
				continue
			}
			n++
			v := envVarName(k)
			advice := fmt.Sprintf("-e '%s=${%s}'", k, v)
			if flag == "-H" {
				advice = fmt.Sprintf("-H '%s: %s'", k, strings.Replace(maskValue(k, kv[k]), "****", "${"+v+"}", 1))
			}
			fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("agentapp: warning: %s is shared with everyone who works on the project, and %s %s puts a secret in it; write %s instead and set %s in your environment",
				path, flag, k, advice, v)))
		}
	}
	check("-e", e.Env)
	check("-H", e.Headers)
	// A password in a URL: an argument (a connection string) or the
	// server's own URL.
	inURL := func(what, value string) {
		if urlPassword().MatchString(varRef().ReplaceAllString(value, "")) {
			n++
			fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("agentapp: warning: %s is shared with everyone who works on the project, and %s %s holds a password; write the password as ${VAR} (%s) and set that variable in your environment",
				path, what, maskURLPasswords(value), urlPassword().ReplaceAllString(maskURLPasswords(value), "${1}$${PASSWORD}${3}"))))
		}
	}
	for _, a := range e.Args {
		inURL("the argument", a)
	}
	inURL("the URL", e.URL)
	if n > 0 {
		fmt.Fprintln(w, "agentapp: ${VAR} is expanded from the environment when the server starts; or keep the server to yourself with --scope local (the default).")
	}
}

// envVarName turns a header or variable name into an environment variable
// name: Authorization → AUTHORIZATION, X-Api-Key → X_API_KEY.
func envVarName(k string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_':
			return r
		}
		return '_'
	}, k)
}
