package host

import (
	"slices"
	"testing"
)

// TestParseToolUI: the "ui" object and the older flat key are read; a
// resourceUri that is not ui:// and unknown visibility values are
// dropped; no visibility means both model and app, an empty list neither.
func TestParseToolUI(t *testing.T) {
	for _, c := range []struct {
		name          string
		meta          map[string]any
		uri           string
		model, app    bool
		wantVisibilty []string
	}{
		{"none", nil, "", true, true, nil},
		{"view", map[string]any{"ui": map[string]any{"resourceUri": "ui://a/v.html"}}, "ui://a/v.html", true, true, nil},
		{"flat key", map[string]any{"ui/resourceUri": "ui://a/v.html"}, "ui://a/v.html", true, true, nil},
		{"not ui://", map[string]any{"ui": map[string]any{"resourceUri": "https://evil.example/v.html"}}, "", true, true, nil},
		{"app only", map[string]any{"ui": map[string]any{"visibility": []any{"app"}}}, "", false, true, []string{"app"}},
		{"model only", map[string]any{"ui": map[string]any{"visibility": []any{"model", "model"}}}, "", true, false, []string{"model"}},
		{"nobody", map[string]any{"ui": map[string]any{"visibility": []any{}}}, "", false, false, []string{}},
		{"junk values", map[string]any{"ui": map[string]any{"visibility": []any{"admin", 3}}}, "", false, false, []string{}},
		{"ui not an object", map[string]any{"ui": "ui://a/v.html"}, "", true, true, nil},
	} {
		u := parseToolUI(c.meta)
		if u.ResourceURI != c.uri || u.forModel() != c.model || u.ForApp() != c.app || !slices.Equal(u.Visibility, c.wantVisibilty) {
			t.Errorf("%s: %+v (model %v app %v)", c.name, u, u.forModel(), u.ForApp())
		}
	}
}
