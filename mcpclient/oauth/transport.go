package oauth

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"golang.org/x/oauth2"
)

// Transport logs in for the legacy SSE transport, whose SDK client,
// unlike the streamable one, takes no OAuth handler: it puts the flow's
// bearer token on every request and, when the server answers 401 (or 403,
// which the flow takes for a login request only with insufficient_scope),
// runs the flow's Authorize and sends the request once more, as the SDK's
// streamable transport does. It sits in front of the header transport, so
// that a refusal is still recorded there for the error the user sees.
type Transport struct {
	base http.RoundTripper
	flow *Flow
	// resource is the server's configured URL. A login is for the server,
	// not for the session's message endpoint the POSTs go to (which
	// carries a session ID), so Authorize is given this URL: it names the
	// resource to the authorization server and is checked against the
	// protected-resource metadata.
	resource *url.URL
}

func NewTransport(base http.RoundTripper, flow *Flow) (*Transport, error) {
	u, err := url.Parse(flow.server.URL)
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: invalid URL: %v", flow.server.Name, err)
	}
	return &Transport{base: base, flow: flow, resource: u}, nil
}

func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.send(req)
	if err != nil || resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return resp, err
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		// Sent once already, such a body cannot be sent again after the
		// login; the SDK's requests all have one that can.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		return nil, fmt.Errorf("the server answered %s, and the request cannot be sent again after a login because its body cannot be read twice", resp.Status)
	}
	areq := req.Clone(req.Context())
	areq.URL = t.resource
	if err := t.flow.Authorize(req.Context(), areq, resp); err != nil {
		return nil, err
	}
	again := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("sending the request again after the login: %w", err)
		}
		again.Body = body
	}
	return t.send(again)
}

// send sends req with the flow's current access token, which the token
// source refreshes when it has expired.
func (t *Transport) send(req *http.Request) (*http.Response, error) {
	ts, err := t.flow.TokenSource(req.Context())
	if err != nil {
		return nil, err
	}
	if ts != nil {
		tok, err := ts.Token()
		var re *oauth2.RetrieveError
		switch {
		case err == nil:
			req = req.Clone(req.Context())
			req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		case errors.As(err, &re) && re.ErrorCode == "invalid_grant":
			// The refresh token is no longer valid: send the request
			// without a token, and the 401 it gets starts a new login
			// (as the SDK's streamable transport does).
		default:
			return nil, err
		}
	}
	return t.base.RoundTrip(req)
}

// CloseIdleConnections closes the idle connections of the transport
// below, as the http.Client that holds this one expects.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
