package web

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestSandboxProxyBlocksWebRTC (issue 43, item 6): the view's policy has
// CSP's webrtc 'block', and the view's document starts with the script
// that removes the WebRTC constructors, before the view's own code, and
// whose end tag does not end the proxy's script. (TestBrowserApps checks
// in Chromium that the view cannot make a peer connection.)
func TestSandboxProxyBlocksWebRTC(t *testing.T) {
	e, _, _ := appsEnv(t, nil, nil, nil)
	ts := httptest.NewServer(e.srv.SandboxHandler())
	defer ts.Close()
	resp, err := ts.Client().Get(ts.URL + "/proxy")
	if err != nil {
		t.Fatal(err)
	}
	body := readBody(t, resp)
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "webrtc 'block'") {
		t.Errorf("the view's policy %q has no webrtc 'block'", csp)
	}
	if !strings.Contains(body, "inner.srcdoc = meta() + noRTC + p.html;") || !strings.Contains(body, `"RTCPeerConnection"`) {
		t.Errorf("the view's document does not start with the WebRTC removal:\n%s", body)
	}
	if strings.Count(body, "</script>") != 1 {
		t.Errorf("the proxy page has %d script end tags; want 1 (its own)", strings.Count(body, "</script>"))
	}
}
