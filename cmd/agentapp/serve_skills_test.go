package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/skills"
)

// startServeArgs is startServe with serve's flags.
func startServeArgs(t *testing.T, bin, data string, args ...string) *serveProcess {
	t.Helper()
	s := &serveProcess{t: t, stderr: &testkit.SyncBuffer{}}
	s.cmd = exec.Command(bin, append([]string{"serve"}, args...)...)
	s.cmd.Env = serveEnv(data)
	s.cmd.Stderr = s.stderr
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.stdout = bufio.NewReader(out)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.stdin.Close()
		if err := s.cmd.Wait(); err != nil {
			t.Errorf("serve %v: %v; stderr:\n%s", args, err, s.stderr.String())
		}
	})
	s.request("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"skills-test","version":"1"}}`)
	if _, err := io.WriteString(s.stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	return s
}

// answer sends one request and returns its answer's error code (0 for a
// result) and its raw result or error.
func (s *serveProcess) answer(method, params string) (int, string) {
	s.t.Helper()
	s.id++
	if _, err := fmt.Fprintf(s.stdin, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", s.id, method, params); err != nil {
		s.t.Fatal(err)
	}
	line, err := s.stdout.ReadString('\n')
	if err != nil {
		s.t.Fatalf("reading the answer to %s: %v; stderr:\n%s", method, err, s.stderr.String())
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &msg); err != nil {
		s.t.Fatalf("stdout line is not JSON: %q", line)
	}
	if msg.Error != nil {
		return msg.Error.Code, line
	}
	return 0, string(msg.Result)
}

type skillList struct {
	Skills     []skills.Entry `json:"skills"`
	NextCursor string         `json:"nextCursor"`
}

func skillNames(t *testing.T, raw string) []string {
	t.Helper()
	var l skillList
	if err := json.Unmarshal([]byte(raw), &l); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range l.Skills {
		if err := e.Check(); err != nil {
			t.Errorf("entry %s: %v", e.URI, err)
		}
		names = append(names, e.Name())
	}
	return names
}

// TestServeSkills runs the built binary's serve and lists, gets and reads
// its skills: the built-in playbooks by default, a folder's with --skills
// DIR (a broken skill skipped with a warning), none with --skills none,
// and a clear refusal of a folder that cannot be read.
func TestServeSkills(t *testing.T) {
	bin := agentappBin(t)

	t.Run("default", func(t *testing.T) {
		s := startServeArgs(t, bin, t.TempDir())
		if names := skillNames(t, s.request("skills/list", `{}`)); strings.Join(names, ",") != "handoff,order-status,refunds" {
			t.Errorf("skills/list: %v", names)
		}
		var got struct {
			Skill skills.Entry `json:"skill"`
		}
		if err := json.Unmarshal([]byte(s.request("skills/get", `{"uri":"skill://refunds/SKILL.md"}`)), &got); err != nil {
			t.Fatal(err)
		}
		for _, f := range got.Skill.Resources.Files {
			var read struct {
				Contents []struct {
					Text string `json:"text"`
				} `json:"contents"`
			}
			if err := json.Unmarshal([]byte(s.request("resources/read", fmt.Sprintf(`{"uri":%q}`, f.URI))), &read); err != nil || len(read.Contents) != 1 {
				t.Fatalf("resources/read %s: %v", f.URI, err)
			}
			if err := got.Skill.VerifyFile(f.URI, []byte(read.Contents[0].Text)); err != nil {
				t.Error(err)
			}
		}
		var dir struct {
			Resources []struct{ URI, MIMEType string } `json:"resources"`
		}
		raw := s.request("resources/directory/read", `{"uri":"skill://refunds"}`)
		if err := json.Unmarshal([]byte(raw), &dir); err != nil {
			t.Fatal(err)
		}
		if len(dir.Resources) != 2 || dir.Resources[1].URI != "skill://refunds/references" || dir.Resources[1].MIMEType != skills.DirectoryMIMEType {
			t.Errorf("resources/directory/read skill://refunds: %s", raw)
		}
		if code, _ := s.answer("skills/get", `{"uri":"skill://nope/SKILL.md"}`); code != -32602 {
			t.Errorf("skills/get of an unknown skill: code %d, want -32602", code)
		}
		if !strings.Contains(s.stderr.String(), "skills:    handoff, order-status, refunds (built in)") {
			t.Errorf("the banner does not list the skills:\n%s", s.stderr.String())
		}
	})

	t.Run("folder", func(t *testing.T) {
		dir := t.TempDir()
		write := func(name, text string) {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("returns/SKILL.md", "---\nname: returns\ndescription: Take back an item\n---\nSee [the form](forms/form.md).\n")
		write("returns/forms/form.md", "# Form\n")
		write("misnamed/SKILL.md", "---\nname: other\ndescription: Wrong folder\n---\n")
		s := startServeArgs(t, bin, t.TempDir(), "--skills", dir)
		if names := skillNames(t, s.request("skills/list", `{}`)); strings.Join(names, ",") != "returns" {
			t.Errorf("skills/list: %v, want returns only", names)
		}
		if dir := s.request("resources/directory/read", `{"uri":"skill://returns/forms"}`); !strings.Contains(dir, "skill://returns/forms/form.md") {
			t.Errorf("resources/directory/read: %s", dir)
		}
		warn := regexp.MustCompile(`warning: skipping a skill that breaks the format: skill misnamed: its front matter names it "other"`)
		if !warn.MatchString(s.stderr.String()) {
			t.Errorf("no warning naming the broken skill and why:\n%s", s.stderr.String())
		}
	})

	t.Run("none", func(t *testing.T) {
		s := startServeArgs(t, bin, t.TempDir(), "--skills", "none")
		if code, _ := s.answer("skills/list", `{}`); code != -32601 {
			t.Errorf("skills/list with --skills none: code %d, want -32601 (no such method)", code)
		}
		if !strings.Contains(s.stderr.String(), "skills:    none") {
			t.Errorf("banner:\n%s", s.stderr.String())
		}
	})

	t.Run("unreadable folder", func(t *testing.T) {
		data := filepath.Join(t.TempDir(), "data")
		missing := filepath.Join(t.TempDir(), "no-such-dir")
		cmd := exec.Command(bin, "serve", "--skills", missing)
		cmd.Env = serveEnv(data)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr, cmd.Stdin = &stdout, &stderr, strings.NewReader("")
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("want exit code 2, got %v; stderr:\n%s", err, stderr.String())
		}
		if want := "--skills " + missing + ": cannot read the skills folder"; !strings.Contains(stderr.String(), want) || stdout.Len() != 0 {
			t.Errorf("stdout %q, stderr %q; want %q", stdout.String(), stderr.String(), want)
		}
		if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the data dir was created before the folder was refused (stat: %v)", err)
		}
	})

	t.Run("http", func(t *testing.T) {
		cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0")
		cmd.Env = serveEnv(t.TempDir(), "AGENTAPP_SERVER_TOKEN=")
		stderrPipe, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		stderr := bufio.NewReader(stderrPipe)
		addrRE := regexp.MustCompile(`MCP server on (http://127\.0\.0\.1:[1-9][0-9]*/mcp)`)
		url := ""
		for url == "" {
			line, err := stderr.ReadString('\n')
			if err != nil {
				t.Fatalf("no address in the banner: %v", err)
			}
			if m := addrRE.FindStringSubmatch(line); m != nil {
				url = m[1]
			}
		}
		go io.Copy(io.Discard, stderr)
		const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`
		post := func(method, params string) string {
			t.Helper()
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{`+params+meta+`}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", method)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
			// A JSON body, or one event whose data is the answer.
			if i := bytes.Index(b, []byte("data: ")); i >= 0 && !bytes.HasPrefix(b, []byte("{")) {
				b, _, _ = bytes.Cut(b[i+len("data: "):], []byte("\n"))
			}
			return string(b)
		}
		if disc := post("server/discover", ""); !strings.Contains(disc, `"io.modelcontextprotocol/skills":{"directoryRead":true}`) {
			t.Errorf("server/discover: %s", disc)
		}
		var ans struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(post("skills/list", "")), &ans); err != nil {
			t.Fatal(err)
		}
		if names := skillNames(t, string(ans.Result)); strings.Join(names, ",") != "handoff,order-status,refunds" {
			t.Errorf("skills/list over HTTP at 2026-07-28: %v", names)
		}
		if got := post("skills/get", `"uri":"skill://handoff/SKILL.md",`); !strings.Contains(got, `"uri":"skill://handoff/references/phrases.md"`) {
			t.Errorf("skills/get over HTTP: %s", got)
		}
	})
}
