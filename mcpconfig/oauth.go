package mcpconfig

import (
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
)

// oauthFields are the fields of a server's "oauth" object.
var oauthFields = []string{"clientId", "clientSecret", "clientMetadataUrl", "scopes", "callbackPort"}

// parseOAuth reads a server's "oauth" object. Strings are expanded like
// headers, so a client secret can come from the environment
// ("${MY_SECRET}") instead of sitting in the file.
func parseOAuth(raw json.RawMessage, ex expander, fail func(field, format string, args ...any) error) (*OAuth, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, fail("oauth", "want an object like {\"clientId\": \"…\", \"scopes\": [\"read\"]}")
	}
	o := &OAuth{}
	for k := range m {
		if !slices.Contains(oauthFields, k) {
			return nil, fail("oauth."+k, "unknown field; the oauth object takes %s", strings.Join(oauthFields, ", "))
		}
	}
	str := func(k string) (string, error) {
		v, ok := m[k]
		if !ok || isNull(v) {
			return "", nil
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "", fail("oauth."+k, "want a string")
		}
		return ex.expand("oauth."+k, s)
	}
	var err error
	if o.ClientID, err = str("clientId"); err != nil {
		return nil, err
	}
	if o.ClientSecret, err = str("clientSecret"); err != nil {
		return nil, err
	}
	if o.ClientSecret != "" && o.ClientID == "" {
		return nil, fail("oauth.clientSecret", "a client secret needs its clientId")
	}
	if o.ClientMetadataURL, err = str("clientMetadataUrl"); err != nil {
		return nil, err
	}
	if err := CheckClientMetadataURL(o.ClientMetadataURL); err != nil {
		return nil, fail("oauth.clientMetadataUrl", "%v", err)
	}
	if v, ok := m["scopes"]; ok && !isNull(v) {
		var list []string
		var one string
		switch {
		case json.Unmarshal(v, &list) == nil:
		case json.Unmarshal(v, &one) == nil:
			list = strings.Fields(one)
		default:
			return nil, fail("oauth.scopes", "want a list of scope names, like [\"read\", \"write\"]")
		}
		for _, s := range list {
			if s = strings.TrimSpace(s); s == "" || strings.ContainsAny(s, " \t\"\\") {
				return nil, fail("oauth.scopes", "%q is not a scope name (no spaces, quotes or backslashes)", s)
			}
			o.Scopes = append(o.Scopes, s)
		}
	}
	if v, ok := m["callbackPort"]; ok && !isNull(v) {
		var p float64
		if json.Unmarshal(v, &p) != nil || p != float64(int(p)) || p < 1 || p > 65535 {
			return nil, fail("oauth.callbackPort", "want a port number from 1 to 65535 (leave it out for a free port)")
		}
		o.CallbackPort = int(p)
	}
	return o, nil
}

// CheckClientMetadataURL checks a client ID metadata document URL: the
// authorization server fetches it to learn who the client is, and OAuth
// requires an https URL with a path. An empty URL is fine (none is used).
func CheckClientMetadataURL(u string) error {
	if u == "" {
		return nil
	}
	pu, err := url.Parse(u)
	if err != nil || pu.Scheme != "https" || pu.Host == "" || pu.Path == "" || pu.Path == "/" {
		return errors.New("a client metadata URL must be an https URL with a path, like https://example.com/client.json")
	}
	return nil
}
