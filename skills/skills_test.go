package skills_test

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agentapp/agentapp/skills"
	"github.com/google/go-cmp/cmp"
)

const refundMD = "---\nname: refunds\ndescription: How to handle a refund request\nmetadata:\n  version: 2\n  tags: [money, \"退款\"]\n---\n\n# Refunds\nSee references/policy.md.\n"

func folder(t *testing.T, files map[string]string) (*skills.Folder, []error) {
	t.Helper()
	fsys := fstest.MapFS{}
	for p, s := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(s)}
	}
	f, skipped, err := skills.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return f, skipped
}

func TestLoadAndVerify(t *testing.T) {
	f, skipped := folder(t, map[string]string{
		"support/refunds/SKILL.md":             refundMD,
		"support/refunds/references/policy.md": "30 days.\n",
		"support/refunds/.hidden":              "not served",
		"bad/SKILL.md":                         "no front matter",
		"misnamed/SKILL.md":                    "---\nname: other\ndescription: x\n---\n",
	})
	if len(skipped) != 2 {
		t.Fatalf("skipped %d skills, want 2: %v", len(skipped), skipped)
	}
	es := f.Entries()
	if len(es) != 1 || es[0].URI != "skill://support/refunds/SKILL.md" {
		t.Fatalf("entries: %+v", es)
	}
	e := es[0]
	// Through JSON, as a client receives it.
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var got skills.Entry
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if err := got.Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
	md, _ := f.File(got.URI)
	body, err := got.VerifySkillMD(md.Data)
	if err != nil {
		t.Fatalf("VerifySkillMD: %v", err)
	}
	if !strings.HasPrefix(string(body), "\n# Refunds") {
		t.Errorf("body %q", body)
	}
	if md.MIMEType != skills.MIMEType {
		t.Errorf("mime type %q", md.MIMEType)
	}
	for name, tc := range map[string]struct {
		uri, data, want string
	}{
		"tampered":  {got.URI, strings.Replace(refundMD, "refund request", "refund requesT", 1), "digest"},
		"resized":   {got.URI, refundMD + "x", "bytes read"},
		"unlisted":  {"skill://support/refunds/.hidden", "not served", "not one of the skill's listed files"},
		"reference": {"skill://support/refunds/references/policy.md", "31 days.\n", "digest"},
	} {
		if err := got.VerifyFile(tc.uri, []byte(tc.data)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: VerifyFile = %v, want an error with %q", name, err, tc.want)
		}
	}
	// Front matter that differs from the entry's, though the file
	// matches its digest (a server that publishes a wrong entry).
	got.Frontmatter["description"] = "Something else"
	if _, err := got.VerifySkillMD(md.Data); err == nil || !strings.Contains(err.Error(), `field "description"`) {
		t.Errorf("VerifySkillMD with other front matter = %v", err)
	}
	children, ok := f.Children("skill://support/refunds")
	if !ok {
		t.Fatal("no children")
	}
	want := []skills.File{
		{URI: "skill://support/refunds/SKILL.md", MIMEType: "text/markdown"},
		{URI: "skill://support/refunds/references", MIMEType: skills.DirectoryMIMEType},
	}
	if diff := cmp.Diff(want, children); diff != "" {
		t.Errorf("children (-want +got):\n%s", diff)
	}
	if _, ok := f.Children("skill://support/refunds/SKILL.md"); ok {
		t.Error("a file has children")
	}
}

func TestEntryCheck(t *testing.T) {
	d := skills.Digest([]byte("x"))
	for name, tc := range map[string]struct {
		json, want string
	}{
		"no resources":     {`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"}}`, "no resources"},
		"resources number": {`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":3}`, "want an array"},
		"name mismatch":    {`{"uri":"skill://b/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":"dynamic"}`, "must end in /a/SKILL.md"},
		"bad name":         {`{"uri":"skill://A--b/SKILL.md","frontmatter":{"name":"A--b","description":"d"},"resources":"dynamic"}`, "lowercase"},
		"no description":   {`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a"},"resources":"dynamic"}`, "no description"},
		"incomplete":       {`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":[]}`, "does not include"},
		"outside":          {`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":[{"uri":"skill://a/SKILL.md","digest":"` + d + `","size":1},{"uri":"skill://b/x","digest":"` + d + `","size":1}]}`, "outside the skill"},
		"bad digest":       {`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":[{"uri":"skill://a/SKILL.md","digest":"sha256:AB","size":1}]}`, "64 lowercase hex"},
		"too big":          {`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":[{"uri":"skill://a/SKILL.md","digest":"` + d + `","size":16777217}]}`, "over the limit"},
	} {
		var e skills.Entry
		err := json.Unmarshal([]byte(tc.json), &e)
		if err == nil {
			err = e.Check()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
		}
	}
	var e skills.Entry
	if err := json.Unmarshal([]byte(`{"uri":"skill://x/y/a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":"dynamic"}`), &e); err != nil || e.Check() != nil {
		t.Errorf("a dynamic nested entry: %v %v", err, e.Check())
	}
}

func TestParse(t *testing.T) {
	fm, body, err := skills.Parse([]byte("\ufeff---\r\nname: a\r\ndescription: \"d: e\"\r\nn: 3\r\n---\r\nbody"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"name": "a", "description": "d: e", "n": float64(3)}, fm); diff != "" {
		t.Error(diff)
	}
	if string(body) != "body" {
		t.Errorf("body %q", body)
	}
	for _, bad := range []string{"", "name: a", "---\nname: a\ndescription: d\n", "---\n- a\n---\n", "---\nname: a\n---\n", "---\n: : :\n---\n"} {
		if _, _, err := skills.Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) accepted it", bad)
		}
	}
}
