package openai

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

func TestLoadConfigDefaults(t *testing.T) {
	c, err := LoadConfig(t.TempDir(), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{BaseURL: DefaultBaseURL, Model: DefaultModel,
		Source: Sources{APIKey: SourceUnset, BaseURL: SourceDefault, Model: SourceDefault}}
	if !reflect.DeepEqual(c, want) || c.HasKey() {
		t.Errorf("got %#v", c)
	}
}

// TestLoadConfigDotEnvOfRepoRoot: from a subdirectory of a repository the
// .env at its root (the directory with .git) is read, alone: a .env in the
// working directory would win, and one above the root is never merged in.
func TestLoadConfigDotEnvOfRepoRoot(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, ".env"), "OPENAI_MODEL=from-root\n")
	writeFile(t, filepath.Join(root, "proj", ".git", "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(root, "proj", ".env"), strings.Join([]string{
		"# GLM settings",
		"export OPENAI_API_KEY=\"abc.def\"  # the key",
		"OPENAI_BASE_URL = 'https://api.deepseek.com/v1' ",
		"",
	}, "\n"))
	deep := filepath.Join(root, "proj", "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(deep, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	envFile := filepath.Join(root, "proj", ".env")
	want := Config{APIKey: "abc.def", BaseURL: "https://api.deepseek.com/v1", Model: DefaultModel,
		Source: Sources{APIKey: envFile, BaseURL: envFile, Model: SourceDefault}}
	if !reflect.DeepEqual(c, want) || !c.HasKey() {
		t.Errorf("got  %+v\nwant %+v", c.Source, want.Source)
	}
	if got, want := c.BaseURLNote(), "base URL from "+envFile; got != want {
		t.Errorf("BaseURLNote = %q, want %q", got, want)
	}
}

// TestLoadConfigIgnoresDotEnvAboveWorkdirAndRepo: a .env two directories
// above the working directory (outside any repository, or above the
// repository's root) named a fake provider that then received the real key
// and the conversation. It is not read any more.
func TestLoadConfigIgnoresDotEnvAboveWorkdirAndRepo(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, ".env"), "OPENAI_BASE_URL=http://attacker.example/v1\n")
	plain := filepath.Join(root, "a", "b")
	repoSub := filepath.Join(root, "repo", "sub")
	writeFile(t, filepath.Join(root, "repo", ".git"), "gitdir: /elsewhere\n") // a worktree's .git file
	for _, dir := range []string{plain, repoSub} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		c, err := LoadConfig(dir, env(map[string]string{EnvAPIKey: "sk-real"}))
		if err != nil {
			t.Fatal(err)
		}
		if c.BaseURL != DefaultBaseURL || c.Source.BaseURL != SourceDefault || c.BaseURLNote() != "" {
			t.Errorf("from %s: base URL %q from %q (note %q); want the default, the .env above is not ours to read",
				dir, c.BaseURL, c.Source.BaseURL, c.BaseURLNote())
		}
	}
}

// TestLoadConfigRefusesDotEnvOthersCanWrite: a .env that group or others
// may write, or that another user owns, is an error naming the file and the
// command that fixes it, not settings to use.
func TestLoadConfigRefusesDotEnvOthersCanWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ".env")
	writeFile(t, p, "OPENAI_BASE_URL=http://attacker.example/v1\n")
	for _, mode := range []os.FileMode{0o666, 0o620, 0o602} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		_, err := LoadConfig(dir, env(nil))
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "chmod go-w "+p) {
			t.Errorf("mode %04o: err = %v; want a refusal naming %s and chmod go-w", mode, err, p)
		}
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := LoadConfig(dir, env(nil)); err != nil || c.BaseURL != "http://attacker.example/v1" {
		t.Errorf("mode 0644: %+v, %v; want it read", c, err)
	}
	if os.Geteuid() != 0 {
		return // only root can give the file to another user
	}
	if err := os.Chown(p, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(dir, env(nil))
	if err == nil || !strings.Contains(err.Error(), "belongs to user id 4242") || !strings.Contains(err.Error(), p) {
		t.Errorf("a .env of user 4242: err = %v; want a refusal naming the owner and the file", err)
	}
}

func TestLoadConfigProcessEnvWinsPerVariable(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".env"), "OPENAI_API_KEY=file-key\nOPENAI_MODEL=file-model\nOPENAI_BASE_URL=http://file\n")
	c, err := LoadConfig(dir, env(map[string]string{"OPENAI_MODEL": "env-model", "OPENAI_API_KEY": ""}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "env-model" || c.Source.Model != SourceEnv {
		t.Errorf("model %q from %q", c.Model, c.Source.Model)
	}
	if c.APIKey != "file-key" || c.BaseURL != "http://file" { // an empty env value does not count
		t.Errorf("key %q base %q", c.APIKey, c.BaseURL)
	}
}

// With os.LookupEnv, as the program passes it, the process environment is
// read; with nil it is not.
func TestLoadConfigReadsOnlyTheLookupGiven(t *testing.T) {
	t.Setenv(EnvAPIKey, "sk-process")
	t.Setenv(EnvBaseURL, "http://127.0.0.1:11434/v1")
	t.Setenv(EnvModel, "qwen2.5")
	c, err := LoadConfig(t.TempDir(), os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.APIKey != "sk-process" || c.BaseURL != "http://127.0.0.1:11434/v1" || c.Model != "qwen2.5" ||
		c.Source != (Sources{SourceEnv, SourceEnv, SourceEnv}) {
		t.Errorf("got %+v %+v", c, c.Source)
	}
	c, err = LoadConfig(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.HasKey() || c.Model != DefaultModel || c.Source != (Sources{SourceUnset, SourceDefault, SourceDefault}) {
		t.Errorf("with a nil lookup: got %+v %+v, want the defaults and no key", c, c.Source)
	}
}

func TestLoadConfigUnreadableDotEnv(t *testing.T) {
	if os.Geteuid() == 0 {
		// root reads any file; use a .env that is a broken symlink's target
		// directory instead: a directory named .env is skipped, not an error.
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, ".env"), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadConfig(dir, env(nil)); err != nil {
			t.Errorf("a directory named .env: %v", err)
		}
		return
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".env"), "OPENAI_API_KEY=x\n")
	if err := os.Chmod(filepath.Join(dir, ".env"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(dir, env(nil)); err == nil {
		t.Error("an unreadable .env was ignored")
	}
}

func TestParseDotEnv(t *testing.T) {
	got := ParseDotEnv("\uFEFF" + strings.Join([]string{
		"A=plain",
		"B = spaced value ",
		"C=\"double # not a comment\" # comment",
		"D='single $x \\n'",
		`E="line\nnext \"q\" \\"`,
		"F=value # comment",
		"G=a#b",
		"export H=exported",
		"exportI=kept-name",
		"# K=commented",
		"not an assignment",
		"1BAD=x",
		"L=",
		"M=\"unterminated",
		"A=last wins",
		"N=https://open.bigmodel.cn/api/paas/v4?x=1",
	}, "\r\n"))
	want := map[string]string{
		"A": "last wins", "B": "spaced value", "C": "double # not a comment", "D": `single $x \n`,
		"E": "line\nnext \"q\" \\", "F": "value", "G": "a#b", "H": "exported", "exportI": "kept-name",
		"L": "", "M": `"unterminated`, "N": "https://open.bigmodel.cn/api/paas/v4?x=1",
	}
	if !reflect.DeepEqual(got, want) {
		for k := range merge(got, want) {
			if got[k] != want[k] {
				t.Errorf("%s = %q, want %q", k, got[k], want[k])
			}
		}
	}
}

func merge(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func TestConfigStringHidesKey(t *testing.T) {
	c := Config{APIKey: "0123456789abcdef.SECRETSECRET", BaseURL: DefaultBaseURL, Model: DefaultModel,
		Source: Sources{APIKey: "/home/u/.env"}}
	for _, s := range []string{c.String(), fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c)} {
		if strings.Contains(s, "SECRETSECRET") || strings.Contains(s, "456789") {
			t.Errorf("key shown: %s", s)
		}
		mustContain(t, s, "glm-4-flash", DefaultBaseURL, "/home/u/.env")
	}
	mustContain(t, Config{}.String(), "no API key")
}

// The organization and project come from the environment or .env, like
// the other settings, and are sent as OpenAI's headers; without them no
// such header is sent.
func TestOrganizationAndProject(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".env"), "OPENAI_PROJECT_ID=proj_file\n")
	c, err := LoadConfig(dir, env(map[string]string{"OPENAI_ORG_ID": " org-env "}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Organization != "org-env" || c.Project != "proj_file" {
		t.Fatalf("organization %q project %q", c.Organization, c.Project)
	}
	for _, tc := range []struct {
		cfg          Config
		org, project string
	}{
		{c, "org-env", "proj_file"},
		{Config{}, "", ""},
	} {
		f := newFakeProvider(t, replyJSON(200, completion(`{"role":"assistant","content":"ok"}`, "stop")))
		tc.cfg.BaseURL, tc.cfg.APIKey, tc.cfg.Model = f.srv.URL, "k", "m"
		if _, err := New(tc.cfg).Generate(context.Background(), userRequest("hi")); err != nil {
			t.Fatal(err)
		}
		h := f.headers[0]
		if h.Get("OpenAI-Organization") != tc.org || h.Get("OpenAI-Project") != tc.project {
			t.Errorf("headers %v, want organization %q and project %q", h, tc.org, tc.project)
		}
	}
}
