package oauth

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
)

// maxMetadata bounds an authorization-server metadata document read by
// legacyIssuer; real ones are a few kilobytes.
const maxMetadata = 1 << 20

// legacyIssuer carries the requests of a login to the authorization
// server and applies one rule of the 2025-03-26 MCP authorization spec the
// SDK does not: a server without protected-resource metadata is its own
// authorization server, whose metadata sits at the root of its origin
// even when the issuer it names has a path (an authorization server
// mounted under /oauth, say). The SDK insists the issuer equal the URL it
// derived (the origin), as RFC 8414 wants for discovered servers; here,
// and only when no protected-resource metadata was found and the issuer
// is on the very origin the document came from, the issuer is taken to
// be that origin.
type legacyIssuer struct {
	base     http.RoundTripper
	foundPRM atomic.Bool
}

func (t *legacyIssuer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet {
		return resp, err
	}
	p := req.URL.Path
	if strings.HasPrefix(p, "/.well-known/oauth-protected-resource") && resp.StatusCode == http.StatusOK {
		t.foundPRM.Store(true)
		return resp, nil
	}
	if t.foundPRM.Load() || resp.StatusCode != http.StatusOK ||
		(p != "/.well-known/oauth-authorization-server" && p != "/.well-known/openid-configuration") {
		return resp, nil
	}
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxMetadata+1))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	if rerr != nil || len(data) > maxMetadata {
		return resp, nil
	}
	var doc map[string]json.RawMessage
	var issuer string
	if json.Unmarshal(data, &doc) != nil || json.Unmarshal(doc["issuer"], &issuer) != nil {
		return resp, nil
	}
	iu, perr := url.Parse(issuer)
	if perr != nil || iu.Scheme != req.URL.Scheme || !strings.EqualFold(iu.Host, req.URL.Host) || strings.Trim(iu.Path, "/") == "" {
		return resp, nil
	}
	doc["issuer"], _ = json.Marshal(req.URL.Scheme + "://" + req.URL.Host)
	out, merr := json.Marshal(doc)
	if merr != nil {
		return resp, nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header.Del("Content-Length")
	return resp, nil
}
