package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestSecrets(t *testing.T) {
	const key = "sk-proj-AbCdEf0123456789xyz"
	for _, c := range []struct{ in, want string }{
		{"Incorrect API key provided: " + key + ". You can find your API key at https://platform.openai.com/account/api-keys.",
			"Incorrect API key provided: sk-proj-[redacted]. You can find your API key at https://platform.openai.com/account/api-keys."},
		{"Incorrect API key provided: sk-abc***************wxyz.", "Incorrect API key provided: sk-[redacted]."},
		{"header was Authorization: Bearer abc.def-ghi_jkl", "header was Authorization: Bearer [redacted]"},
		{`Post "http://admin:hunter22@10.0.0.5:8000/v1/chat/completions": dial tcp: refused`,
			`Post "http://admin:[redacted]@10.0.0.5:8000/v1/chat/completions": dial tcp: refused`},
		{"GET https://llm.internal/v1?api_key=s3cr3t&model=x&access_token=t0k#f", "GET https://llm.internal/v1?api_key=[redacted]&model=x&access_token=[redacted]#f"},
		{"key ghp_0123456789abcdefABCDEF leaked", "key ghp_[redacted] leaked"},
		{"订单 A-1024 已发货", "订单 A-1024 已发货"},
		{"the token budget is 4096 tokens", "the token budget is 4096 tokens"},
		{"Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [redacted]"},
		{"skill sk-1 is fine", "skill sk-1 is fine"},
	} {
		if got := Secrets(c.in); got != c.want {
			t.Errorf("Secrets(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	// A configured key of any shape is replaced wherever it occurs.
	if got := Secrets("your key zz-custom-KEY-42 was refused", "zz-custom-KEY-42"); got != "your key [redacted] was refused" {
		t.Errorf("known key: %q", got)
	}
	if got := Secrets("abc is short", "abc"); got != "abc is short" {
		t.Errorf("a known secret under six characters replaced words: %q", got)
	}
}

func TestWriterAndHandler(t *testing.T) {
	var b bytes.Buffer
	w := Writer(&b, "my-secret-key")
	line := "[trace] done error: my-secret-key and sk-0123456789abcdef\n"
	if n, err := w.Write([]byte(line)); err != nil || n != len(line) {
		t.Fatalf("Write: %d %v", n, err)
	}
	if strings.Contains(b.String(), "my-secret-key") || strings.Contains(b.String(), "0123456789abcdef") {
		t.Errorf("the writer passed a secret: %q", b.String())
	}
	b.Reset()
	log := slog.New(Handler(slog.NewTextHandler(&b, nil), "my-secret-key")).With("base", "http://u:pw123@host/")
	log.Error("model failed: my-secret-key", "err", errors.New("Bearer abcdefgh"), slog.Group("g", "k", "sk-0123456789abcdef"))
	out := b.String()
	for _, leak := range []string{"my-secret-key", "abcdefgh", "0123456789abcdef", "pw123"} {
		if strings.Contains(out, leak) {
			t.Errorf("the log holds %q: %s", leak, out)
		}
	}
}

// FuzzSecrets: whatever the text around it, a known key and an sk- key
// never survive, and text without secrets is unchanged in length class.
func FuzzSecrets(f *testing.F) {
	for _, s := range []string{"", "Incorrect API key provided: ", "Bearer ", "http://a:b@c/?token=", "订单", "sk-", "\x00\xff"} {
		f.Add(s, s)
	}
	const known = "Zq9-known-secret-77"
	const sk = "sk-LIVEabcdefghij0123"
	f.Fuzz(func(t *testing.T, before, after string) {
		in := before + " " + known + " " + sk + " " + after
		out := Secrets(in, known)
		if strings.Contains(out, known) && !strings.Contains(before+after, known) {
			t.Fatalf("the known secret survived: %q", out)
		}
		if strings.Contains(out, "abcdefghij0123") && !strings.Contains(before+after, "abcdefghij0123") {
			t.Fatalf("the sk- key survived: %q", out)
		}
		if Secrets(out, known) != out && !strings.Contains(out, Mask+Mask) {
			// Redacting twice must not change the text again (idempotent),
			// apart from masks that run into each other.
			if again := Secrets(out, known); strings.Count(again, Mask) < strings.Count(out, Mask) {
				t.Fatalf("a second pass lost a mask: %q -> %q", out, again)
			}
		}
	})
}
