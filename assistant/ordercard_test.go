package assistant_test

import (
	"crypto/sha256"
	"encoding/base64"
	"regexp"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/assistant"
)

// TestOrderCardIsSelfContained: the card loads nothing from anywhere, and
// its CSP says so and runs exactly its own script.
func TestOrderCardIsSelfContained(t *testing.T) {
	card := assistant.OrderCard()
	if card.URI != "ui://agentapp/order-status" || card.MIMEType != "text/html;profile=mcp-app" {
		t.Fatalf("card %s is %s", card.URI, card.MIMEType)
	}
	html := card.Text
	if m := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|\bsrc=|\bhref=|@import|url\(`).FindString(html); m != "" {
		t.Errorf("the card refers to something outside itself: %q", m)
	}
	csp := regexp.MustCompile(`http-equiv="Content-Security-Policy" content="([^"]*)"`).FindStringSubmatch(html)
	if csp == nil {
		t.Fatal("the card has no CSP")
	}
	for _, want := range []string{"default-src 'none'", "connect-src 'none'", "form-action 'none'", "base-uri 'none'"} {
		if !strings.Contains(csp[1], want) {
			t.Errorf("CSP %q lacks %q", csp[1], want)
		}
	}
	scripts := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindAllStringSubmatch(html, -1)
	if len(scripts) != 1 {
		t.Fatalf("%d scripts, want the one", len(scripts))
	}
	sum := sha256.Sum256([]byte(scripts[0][1]))
	if want := "script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(csp[1], want) {
		t.Errorf("CSP %q does not allow exactly the card's script (%s)", csp[1], want)
	}
	if strings.Contains(html, "innerHTML") || strings.Contains(html, "eval(") {
		t.Error("the card builds markup from strings; it must only set textContent")
	}
}
