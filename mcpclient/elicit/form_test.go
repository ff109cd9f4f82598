package elicit

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The schema server-everything's trigger-elicitation-request sends, cut
// to one field of each kind.
const everythingForm = `{
  "type": "object",
  "properties": {
    "name": {"title": "String", "type": "string", "description": "Your full, legal name"},
    "check": {"title": "Boolean", "type": "boolean"},
    "email": {"type": "string", "format": "email"},
    "integer": {"title": "Integer", "type": "integer", "minimum": 1, "maximum": 100, "default": 42},
    "number": {"type": "number", "minimum": 0, "maximum": 1000, "default": 3.14},
    "friend": {"type": "string", "enum": ["Monica", "Rachel"], "default": "Monica"},
    "hero": {"type": "string", "oneOf": [{"const": "hero-1", "title": "Superman"}, {"const": "hero-2", "title": "Green Lantern"}], "default": "hero-1"},
    "fish": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"}, {"const": "fish-2", "title": "Salmon"}, {"const": "fish-3", "title": "Trout"}]}, "default": ["fish-1"]},
    "pet": {"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"], "default": "pet-1"}
  },
  "required": ["name"]
}`

func parseEverythingForm(t *testing.T) *Form {
	t.Helper()
	var schema any
	if err := json.Unmarshal([]byte(everythingForm), &schema); err != nil {
		t.Fatal(err)
	}
	f, err := ParseForm(schema)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func field(t *testing.T, f *Form, name string) FormField {
	t.Helper()
	for _, fl := range f.Fields {
		if fl.Name == name {
			return fl
		}
	}
	t.Fatalf("no field %s", name)
	return FormField{}
}

func TestParseFormKinds(t *testing.T) {
	f := parseEverythingForm(t)
	if f.Fields[0].Name != "name" || !f.Fields[0].Required {
		t.Errorf("the required field is not first: %+v", f.Fields[0])
	}
	hero := field(t, f, "hero")
	if want := []FormOption{{"hero-1", "Superman"}, {"hero-2", "Green Lantern"}}; !reflect.DeepEqual(hero.Options, want) {
		t.Errorf("titled enum options %+v", hero.Options)
	}
	if pet := field(t, f, "pet"); pet.Options[1] != (FormOption{"pet-2", "Dogs"}) {
		t.Errorf("legacy enumNames %+v", pet.Options)
	}
	cases := []struct {
		field, in string
		want      any
		errHas    string
	}{
		{"name", "", nil, "required"},
		{"name", "Ada", "Ada", ""},
		{"check", "y", true, ""},
		{"check", "no", false, ""},
		{"check", "maybe", nil, "y or n"},
		{"email", "not-an-address", nil, "e-mail"},
		{"email", "ada@example.com", "ada@example.com", ""},
		{"email", "", nil, ""},
		{"integer", "", int64(42), ""},
		{"integer", "7", int64(7), ""},
		{"integer", "7.5", nil, "whole number"},
		{"integer", "101", nil, "at most 100"},
		{"number", "", 3.14, ""},
		{"number", "abc", nil, "number"},
		{"hero", "2", "hero-2", ""},
		{"hero", "superman", "hero-1", ""},
		{"hero", "Batman", nil, "not one of the choices"},
		{"fish", "1, 3", []any{"fish-1", "fish-3"}, ""},
		{"fish", "1,2,3", nil, "at most 2"},
		{"fish", "", []any{"fish-1"}, ""},
		{"pet", "Dogs", "pet-2", ""},
	}
	for _, c := range cases {
		got, err := field(t, f, c.field).Parse(c.in)
		if c.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), c.errHas) {
				t.Errorf("%s %q: err %v, want one saying %q", c.field, c.in, err, c.errHas)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %q = %#v, %v; want %#v", c.field, c.in, got, err, c.want)
		}
	}
}

func TestFormDefaultsAndElicitors(t *testing.T) {
	f := parseEverythingForm(t)
	content, missing := f.defaults()
	if !reflect.DeepEqual(missing, []string{"name"}) {
		t.Errorf("missing %v", missing)
	}
	want := map[string]any{"integer": int64(42), "number": 3.14, "friend": "Monica", "hero": "hero-1", "fish": []any{"fish-1"}, "pet": "pet-1"}
	if !reflect.DeepEqual(content, want) {
		t.Errorf("defaults %#v", content)
	}
	var schema any
	json.Unmarshal([]byte(everythingForm), &schema)
	// A required field without a default: the defaults cannot answer.
	res, err := DefaultsElicitor{}.Elicit(context.Background(), "s", &mcp.ElicitParams{RequestedSchema: schema})
	if err != nil || res.Action != "decline" {
		t.Errorf("defaults with a required field missing: %+v, %v", res, err)
	}
	schema.(map[string]any)["required"] = []any{}
	res, err = DefaultsElicitor{}.Elicit(context.Background(), "s", &mcp.ElicitParams{RequestedSchema: schema})
	if err != nil || res.Action != "accept" || !reflect.DeepEqual(res.Content, want) {
		t.Errorf("defaults: %+v, %v", res, err)
	}
	if res, _ := (DecliningElicitor{}).Elicit(context.Background(), "s", &mcp.ElicitParams{}); res.Action != "decline" {
		t.Errorf("declining elicitor: %+v", res)
	}
	if _, err := ParseForm(map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "object"}}}); err == nil {
		t.Error("a nested object field was accepted")
	}
}
