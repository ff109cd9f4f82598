package mcpserver

import "testing"

func TestDocURI(t *testing.T) {
	for id, want := range map[string]string{
		"travel.md-88c32834": "docs://kb/travel.md-88c32834",
		"报销 政策.md-0a1b2c3d":  "docs://kb/%E6%8A%A5%E9%94%80%20%E6%94%BF%E7%AD%96.md-0a1b2c3d",
		"a/b?c#d":            "docs://kb/a%2Fb%3Fc%23d",
	} {
		if got := DocURI(id); got != want {
			t.Errorf("DocURI(%q) = %q, want %q", id, got, want)
		}
		back, ok := docIDFromURI(want)
		if id == "a/b?c#d" {
			if ok {
				t.Errorf("an id with a slash must not resolve, got %q", back)
			}
			continue
		}
		if !ok || back != id {
			t.Errorf("docIDFromURI(%q) = %q, %v; want %q", want, back, ok, id)
		}
	}
}
