package agentapp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/agentapp/agentapp"

// readmeOrder reads the package order the layout list of docs/development.md states: the
// packages named in backticks, in the order they first appear. A name is a
// package when its directory holds Go files, directly, under the package
// named just before it (`model` … `openai`), or under internal/ once the
// list says `internal/`.
func readmeOrder(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("docs", "development.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "Layout, one concern per package")
	if start < 0 {
		t.Fatal(`docs/development.md has no "Layout, one concern per package" list`)
	}
	text = text[start:]
	if list := strings.Index(text, "\n- "); list > 0 {
		if end := strings.Index(text[list:], "\n\n"); end > 0 {
			text = text[:list+end]
		}
	}
	isPkg := func(dir string) bool {
		m, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		return len(m) > 0
	}
	var order []string
	seen := map[string]bool{}
	parent, internal := "", false
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(text, -1) {
		name := m[1]
		if name == "internal/" {
			internal = true
			continue
		}
		pkg := ""
		switch {
		case strings.ContainsAny(name, " .-") || strings.HasPrefix(name, "/"):
		case isPkg(name) || (name == "bench" && isDir(name)):
			pkg = name
		case parent != "" && isPkg(parent+"/"+name):
			pkg = parent + "/" + name
		case internal && isPkg("internal/"+name):
			pkg = "internal/" + name
		}
		if pkg == "" {
			continue
		}
		if !strings.Contains(pkg, "/") || !strings.HasPrefix(pkg, parent+"/") {
			parent = pkg
		}
		if !seen[pkg] {
			seen[pkg] = true
			order = append(order, pkg)
		}
	}
	return order
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// TestLayering holds every package of the module to the order the
// layout list of docs/development.md states: a package imports only packages listed after its own
// entry, its own entry's subpackages, or its ancestors. A package the list
// does not place, or an import up the list, fails here rather than in a
// later review.
func TestLayering(t *testing.T) {
	order := readmeOrder(t)
	index := map[string]int{}
	for i, p := range order {
		index[p] = i
	}
	// entry is the longest listed path that p is or is under.
	entry := func(p string) (string, bool) {
		best := ""
		for _, e := range order {
			if (p == e || strings.HasPrefix(p, e+"/")) && len(e) > len(best) {
				best = e
			}
		}
		return best, best != ""
	}
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(bufio.NewReader(bytes.NewReader(out)))
	checked := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.ImportPath == module {
			continue // this test
		}
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		own, ok := entry(rel)
		if !ok {
			t.Errorf("package %s is not placed in the layout list (docs/development.md); name it there", rel)
			continue
		}
		checked++
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(imp, module+"/")
			to, ok := entry(dep)
			switch {
			case !ok:
				t.Errorf("%s imports %s, which the layout list (docs/development.md) does not place", rel, dep)
			case to == own, strings.HasPrefix(rel, dep+"/"):
			case index[to] < index[own]:
				t.Errorf("%s imports %s, which the layout list (docs/development.md) places above it (%s before %s)", rel, dep, to, own)
			}
		}
	}
	if checked < 30 {
		t.Errorf("only %d packages were checked; the layout list was read as %v", checked, order)
	}
	for _, must := range []string{"cmd/agentapp", "web", "chat", "host", "assistant", "mcpclient", "agent", "trace", "model", "internal/jsonscan"} {
		if _, ok := index[must]; !ok {
			t.Errorf("the layout list (docs/development.md) was read without %s: %v", must, order)
		}
	}
	if index["web"] >= index["host"] || index["chat"] >= index["host"] || index["trace"] >= index["agent"] {
		t.Errorf("the layout list (docs/development.md) reads in the wrong order: %v", order)
	}
}

// TestFrontEndsApart: neither front end depends on the other, nor on the
// command line.
func TestFrontEndsApart(t *testing.T) {
	for _, c := range []struct{ pkg, not string }{{"web", "chat"}, {"chat", "web"}, {"web", "cmd/agentapp"}, {"chat", "cmd/agentapp"}, {"host", "chat"}, {"host", "web"}} {
		out, err := exec.Command("go", "list", "-deps", module+"/"+c.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", c.pkg, err)
		}
		for _, d := range strings.Fields(string(out)) {
			if d == module+"/"+c.not {
				t.Errorf("%s depends on %s", c.pkg, c.not)
			}
		}
	}
}

// domain are the packages that know the customer-service domain, each with
// its subpackages.
var domain = []string{"kb", "support", "assistant", "model/offline"}

// TestCoreKnowsNoDomain: host, chat, web, agent and model (but model/offline,
// the scripted demo model, which is domain by nature) depend on no domain
// package, directly or through another package; the composition
// (cmd/agentapp, assistant) brings the domain in.
func TestCoreKnowsNoDomain(t *testing.T) {
	core := []string{"host", "chat", "web", "agent", "model", "model/openai", "model/scripted"}
	for _, pkg := range core {
		out, err := exec.Command("go", "list", "-deps", module+"/"+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, d := range strings.Fields(string(out)) {
			rel, ok := strings.CutPrefix(d, module+"/")
			if !ok {
				continue
			}
			for _, dom := range domain {
				if rel == dom || strings.HasPrefix(rel, dom+"/") {
					t.Errorf("%s depends on the domain package %s", pkg, rel)
				}
			}
		}
	}
	// The offline model is domain, but below the assistant: its caller
	// names the tools it calls.
	out, err := exec.Command("go", "list", "-deps", module+"/model/offline").Output()
	if err != nil {
		t.Fatalf("go list -deps model/offline: %v", err)
	}
	for _, d := range strings.Fields(string(out)) {
		if rel, _ := strings.CutPrefix(d, module+"/"); rel == "assistant" || strings.HasPrefix(rel, "assistant/") {
			t.Errorf("model/offline depends on %s", rel)
		}
	}
}

// TestMCPClientRootStaysSmall holds the mcpclient package itself to the
// size the split into subpackages by concern brought it to: new concerns
// go into packages of their own (oauth, tasks, skills, …), not the root.
func TestMCPClientRootStaysSmall(t *testing.T) {
	const limit = 4500
	files, err := filepath.Glob(filepath.Join("mcpclient", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(b, []byte("\n"))
	}
	if lines > limit {
		t.Errorf("package mcpclient has %d lines outside its tests, over %d: put the new concern in a subpackage", lines, limit)
	}
}
