package openai

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// recordedTools reads a tools/list result recorded by testdata/record.mjs.
func recordedTools(t *testing.T, server string) []struct {
	Name         string          `json:"name"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
} {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "tools-"+server+".json"))
	if err != nil {
		t.Fatalf("%v (re-record with: node model/openai/testdata/record.mjs)", err)
	}
	var rec struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	return rec.Tools
}

// The real schemas of three reference MCP servers come out valid, typed
// object with properties, free of $ref/$schema, with every property kept.
func TestSanitizeRecordedServerSchemas(t *testing.T) {
	want := map[string]int{"everything": 10, "memory": 9, "filesystem": 14} // at least
	for server, min := range want {
		t.Run(server, func(t *testing.T) {
			tools := recordedTools(t, server)
			if len(tools) < min {
				t.Fatalf("%d tools recorded, expected at least %d", len(tools), min)
			}
			for _, tool := range tools {
				in := append(json.RawMessage(nil), tool.InputSchema...)
				got := Sanitize(tool.InputSchema)
				if !bytes.Equal(in, tool.InputSchema) {
					t.Errorf("%s: input modified", tool.Name)
				}
				checkProviderSchema(t, tool.Name, got)
				if a, b := propertyNames(t, tool.InputSchema), propertyNames(t, got); strings.Join(a, ",") != strings.Join(b, ",") {
					t.Errorf("%s: properties %v became %v", tool.Name, a, b)
				}
				if strings.Contains(string(tool.InputSchema), `"required"`) && !strings.Contains(string(got), `"required"`) {
					t.Errorf("%s: required list lost: %s", tool.Name, got)
				}
				if len(tool.OutputSchema) > 0 { // richer schemas: same guarantees
					checkProviderSchema(t, tool.Name+" (output schema)", Sanitize(tool.OutputSchema))
				}
			}
		})
	}
}

// checkProviderSchema asserts what every provider needs of parameters.
func checkProviderSchema(t *testing.T, name string, s json.RawMessage) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(s, &m); err != nil {
		t.Errorf("%s: not valid JSON: %v: %s", name, err, s)
		return
	}
	if m["type"] != "object" {
		t.Errorf("%s: type = %v", name, m["type"])
	}
	if _, ok := m["properties"].(map[string]any); !ok {
		t.Errorf("%s: no properties object: %s", name, s)
	}
	for _, k := range []string{`"$ref"`, `"$schema"`, `"$defs"`, `"definitions":{"`} {
		if strings.Contains(string(s), k) {
			t.Errorf("%s: still contains %s: %s", name, k, s)
		}
	}
	walkSchemas(m, func(node map[string]any) {
		if node["type"] == "array" && node["items"] == nil {
			t.Errorf("%s: array without items: %v", name, node)
		}
		if r, ok := node["required"]; ok && r == nil {
			t.Errorf("%s: required: null", name)
		}
	})
}

// walkSchemas calls f on every object in v (schemas and data alike, which is
// good enough for the checks above).
func walkSchemas(v any, f func(map[string]any)) {
	switch t := v.(type) {
	case map[string]any:
		f(t)
		for _, e := range t {
			walkSchemas(e, f)
		}
	case []any:
		for _, e := range t {
			walkSchemas(e, f)
		}
	}
}

func propertyNames(t *testing.T, s json.RawMessage) []string {
	t.Helper()
	v, err := decodeOrdered(s)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := v.(*object).m["properties"].(*object)
	if p == nil {
		return nil
	}
	return p.keys
}

func TestSanitizeRules(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"absent", ``, `{"type":"object","properties":{}}`},
		{"null", `null`, `{"type":"object","properties":{}}`},
		{"invalid JSON", `{"type":`, `{"type":"object","properties":{}}`},
		{"not an object", `["a"]`, `{"type":"object","properties":{}}`},
		{"boolean schema", `true`, `{"type":"object","properties":{}}`},
		{"empty object", `{}`, `{"type":"object","properties":{}}`},
		{"clean schema unchanged",
			`{"type":"object","properties":{"b":{"type":"string","enum":["x","y"]},"a":{"type":"number","minimum":1}},"required":["b"],"additionalProperties":false}`,
			`{"type":"object","properties":{"b":{"type":"string","enum":["x","y"]},"a":{"type":"number","minimum":1}},"required":["b"],"additionalProperties":false}`},
		{"type added first", `{"properties":{"a":{"type":"string"}}}`,
			`{"type":"object","properties":{"a":{"type":"string"}}}`},
		{"properties added after type", `{"description":"no args","type":"object"}`,
			`{"description":"no args","type":"object","properties":{}}`},
		{"nullable top type", `{"type":["object","null"],"properties":{}}`,
			`{"type":"object","properties":{}}`},
		{"meta keywords dropped", `{"$schema":"http://json-schema.org/draft-07/schema#","$id":"urn:x","$comment":"c","type":"object","properties":{"a":{"$comment":"x","type":"string"}}}`,
			`{"type":"object","properties":{"a":{"type":"string"}}}`},
		{"required null removed", `{"type":"object","properties":{"a":{"type":"object","properties":{},"required":null}},"required":null}`,
			`{"type":"object","properties":{"a":{"type":"object","properties":{}}}}`},
		{"required empty or odd removed", `{"type":"object","properties":{},"required":[]}`,
			`{"type":"object","properties":{}}`},
		{"required deduplicated, non-strings dropped", `{"type":"object","properties":{"a":{}},"required":["a",1,"a"]}`,
			`{"type":"object","properties":{"a":{}},"required":["a"]}`},
		{"array gets items", `{"type":"object","properties":{"tags":{"type":"array","description":"t"},"m":{"type":["array","null"]},"ok":{"type":"array","items":{"type":"string"}}}}`,
			`{"type":"object","properties":{"tags":{"type":"array","description":"t","items":{}},"m":{"type":["array","null"],"items":{}},"ok":{"type":"array","items":{"type":"string"}}}}`},
		{"items true", `{"type":"object","properties":{"a":{"type":"array","items":true}}}`,
			`{"type":"object","properties":{"a":{"type":"array","items":{}}}}`},
		{"nested arrays get items", `{"type":"object","properties":{"grid":{"type":"array","items":{"type":"array"}}}}`,
			`{"type":"object","properties":{"grid":{"type":"array","items":{"type":"array","items":{}}}}}`},
		{"$defs ref inlined", `{"type":"object","properties":{"user":{"$ref":"#/$defs/User"}},"$defs":{"User":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`,
			`{"type":"object","properties":{"user":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`},
		{"definitions ref inlined", `{"type":"object","properties":{"p":{"$ref":"#/definitions/P"}},"definitions":{"P":{"type":"integer"}}}`,
			`{"type":"object","properties":{"p":{"type":"integer"}}}`},
		{"ref siblings win", `{"type":"object","properties":{"p":{"$ref":"#/$defs/P","description":"own"}},"$defs":{"P":{"type":"string","description":"shared"}}}`,
			`{"type":"object","properties":{"p":{"type":"string","description":"own"}}}`},
		{"ref chain and escaped pointer", `{"type":"object","properties":{"a":{"$ref":"#/$defs/a~1b"}},"$defs":{"a/b":{"$ref":"#/$defs/c"},"c":{"type":"array"}}}`,
			`{"type":"object","properties":{"a":{"type":"array","items":{}}}}`},
		{"top-level ref (pydantic style)", `{"$ref":"#/definitions/Args","definitions":{"Args":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}}`,
			`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`},
		{"refs inside items and unions", `{"type":"object","properties":{"xs":{"type":"array","items":{"$ref":"#/$defs/X"}},"u":{"anyOf":[{"$ref":"#/$defs/X"},{"type":"null"}]}},"$defs":{"X":{"type":"string","format":"date"}}}`,
			`{"type":"object","properties":{"xs":{"type":"array","items":{"type":"string","format":"date"}},"u":{"anyOf":[{"type":"string","format":"date"},{"type":"null"}]}}}`},
		{"recursive ref cut to a stub", `{"type":"object","properties":{"tree":{"$ref":"#/$defs/Node"}},"$defs":{"Node":{"type":"object","description":"a node","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/Node"}}}}}}`,
			`{"type":"object","properties":{"tree":{"type":"object","description":"a node","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"type":"object","description":"a node","properties":{}}}}}}}`},
		{"mutual recursion cut", `{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"type":"object","properties":{"b":{"$ref":"#/$defs/B"}}},"B":{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}}}}}`,
			`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"object","properties":{"a":{"type":"object","properties":{}}}}}}}}`},
		{"self reference to root", `{"type":"object","properties":{"next":{"$ref":"#"}}}`,
			`{"type":"object","properties":{"next":{"type":"object","properties":{}}}}`},
		{"unresolvable and remote refs dropped", `{"type":"object","properties":{"a":{"$ref":"#/$defs/Missing","description":"d"},"b":{"$ref":"https://example.com/s.json"}}}`,
			`{"type":"object","properties":{"a":{"description":"d"},"b":{}}}`},
		{"keyword-named properties and data kept", `{"type":"object","properties":{"definitions":{"type":"string","default":"$ref"},"$schema":{"type":"string"}},"required":["definitions"]}`,
			`{"type":"object","properties":{"definitions":{"type":"string","default":"$ref"},"$schema":{"type":"string"}},"required":["definitions"]}`},
		{"anyOf union flattened", `{"anyOf":[{"type":"object","properties":{"id":{"type":"string"},"kind":{"const":"byId"}},"required":["id","kind"]},{"type":"object","properties":{"name":{"type":"string"},"kind":{"const":"byName"}},"required":["name","kind"]}]}`,
			`{"type":"object","properties":{"id":{"type":"string"},"kind":{"anyOf":[{"const":"byId"},{"const":"byName"}]},"name":{"type":"string"}},"required":["kind"]}`},
		{"oneOf with refs, own properties and description", `{"type":"object","description":"search","properties":{"limit":{"type":"integer"}},"required":["limit"],"oneOf":[{"$ref":"#/$defs/A"},{"$ref":"#/$defs/B"},{"type":"null"}],"$defs":{"A":{"properties":{"q":{"type":"string"}},"required":["q"]},"B":{"properties":{"q":{"type":"string"},"tag":{"type":"string"}},"required":["q","tag"]}}}`,
			`{"type":"object","description":"search","properties":{"limit":{"type":"integer"},"q":{"type":"string"},"tag":{"type":"string"}},"required":["limit","q"]}`},
		{"allOf merged with union of required", `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"object","properties":{"b":{"type":"string"}},"required":["b"]}]}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a","b"]}`},
		{"nested unions untouched", `{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"number"}]}}}`,
			`{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"number"}]}}}`},
		{"unicode and HTML characters kept", `{"type":"object","properties":{"q":{"type":"string","description":"订单号 <A-1024> & more"}}}`,
			`{"type":"object","properties":{"q":{"type":"string","description":"订单号 <A-1024> & more"}}}`},
		{"numbers kept exactly", `{"type":"object","properties":{"n":{"type":"number","maximum":1e400,"multipleOf":0.1000000000000000000001}}}`,
			`{"type":"object","properties":{"n":{"type":"number","maximum":1e400,"multipleOf":0.1000000000000000000001}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			got := Sanitize(in)
			if string(got) != tc.want {
				t.Errorf("Sanitize(%s)\n got %s\nwant %s", tc.in, got, tc.want)
			}
			if string(in) != tc.in {
				t.Errorf("input modified: %s", in)
			}
			if !json.Valid(got) {
				t.Errorf("output is not JSON: %s", got)
			}
		})
	}
}

// A schema whose definitions each use the next one twice would expand to
// 2^40 nodes; the expansion budget keeps it small.
func TestSanitizeExpansionIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"x":{"$ref":"#/$defs/d0"}},"$defs":{`)
	const n = 40
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		next := `{"type":"string"}`
		if i < n-1 {
			next = `{"$ref":"#/$defs/d` + strconv.Itoa(i+1) + `"}`
		}
		b.WriteString(`"d` + strconv.Itoa(i) + `":{"type":"object","properties":{"l":` + next + `,"r":` + next + `}}`)
	}
	b.WriteString("}}")
	got := Sanitize(json.RawMessage(b.String()))
	if !json.Valid(got) || len(got) > 4<<20 || strings.Contains(string(got), "$ref") {
		t.Fatalf("output of %d bytes (valid %v)", len(got), json.Valid(got))
	}
}

func FuzzSanitize(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"type":"array"}}}`))
	f.Add([]byte(`{"anyOf":[{"properties":{"a":{}}},{"$ref":"#"}]}`))
	f.Add([]byte(`{"$ref":"#/properties/a","properties":{"a":{"$ref":"#"}}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		cp := append([]byte(nil), in...)
		out := Sanitize(in)
		if !bytes.Equal(cp, in) {
			t.Fatal("input modified")
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("invalid output %s: %v", out, err)
		}
		if m["type"] != "object" {
			t.Fatalf("type %v", m["type"])
		}
		if _, ok := m["properties"].(map[string]any); !ok {
			t.Fatalf("properties missing: %s", out)
		}
	})
}
