package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/mcpserver"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/tools/txtar"
)

// update rewrites the response sections of the golden transcripts in
// testdata/server from what the server answers now:
//
//	go test ./mcpserver -run TestGoldenTranscripts -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with the current output")

// rawSession is a server on a pair of pipes, spoken to in raw
// newline-delimited JSON-RPC: exactly the bytes a stdio client exchanges.
type rawSession struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Reader
	ss  *mcp.ServerSession
}

// rawTransport connects a server to a pair of streams.
type rawTransport func(s *mcpserver.Server, r io.ReadCloser, w io.WriteCloser) mcp.Transport

// rawTransports are the stdio transports a server can be connected with:
// the SDK's, ours handing every request to the SDK, and ours with the
// direct tools/call path (what `agentapp serve` uses). Every golden
// transcript must come out the same on all three.
var rawTransports = []struct {
	name string
	make rawTransport
}{
	{"sdk", func(_ *mcpserver.Server, r io.ReadCloser, w io.WriteCloser) mcp.Transport {
		return &mcp.IOTransport{Reader: r, Writer: w}
	}},
	{"ioconn", func(_ *mcpserver.Server, r io.ReadCloser, w io.WriteCloser) mcp.Transport {
		return &mcpserver.IOTransport{Reader: r, Writer: w}
	}},
	{"direct", func(s *mcpserver.Server, r io.ReadCloser, w io.WriteCloser) mcp.Transport {
		return s.NewIOTransport(r, w)
	}},
}

func newRawSessionOn(t *testing.T, server *mcpserver.Server, transport rawTransport) *rawSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := server.Connect(context.Background(), transport(server, inR, outW), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &rawSession{t: t, in: inW, out: bufio.NewReader(outR), ss: ss}
	t.Cleanup(func() {
		inW.Close()
		ss.Wait()
		outR.Close()
	})
	return r
}

func (r *rawSession) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, strings.TrimSpace(line)+"\n"); err != nil {
		r.t.Fatalf("write %s: %v", line, err)
	}
}

func (r *rawSession) receive() []byte {
	r.t.Helper()
	line, err := r.out.ReadBytes('\n')
	if err != nil {
		r.t.Fatalf("read a response: %v (got %q)", err, line)
	}
	return line
}

// handshake performs initialize and notifications/initialized.
func (r *rawSession) handshake() {
	r.t.Helper()
	r.send(mcpserver.InitializeLine)
	r.receive()
	r.send(mcpserver.InitializedLine)
}

// nondeterministic values are replaced before comparing: ticket numbers
// carry the date and a sequence, timestamps the clock.
var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`TK-\d{8}-\d{4,}`), "TK-YYYYMMDD-NNNN"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "<timestamp>"},
}

func normalize(t *testing.T, raw []byte) []byte {
	t.Helper()
	for _, n := range normalizers {
		raw = n.re.ReplaceAll(raw, []byte(n.with))
	}
	var b bytes.Buffer
	if err := json.Indent(&b, bytes.TrimSpace(raw), "", "  "); err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, raw)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// TestGoldenTranscripts replays each testdata/server/*.txtar: its
// request.json is sent (after the handshake, unless it is the handshake)
// to a server on a fresh database, and the answer must equal
// response.json once normalised.
func TestGoldenTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "server", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 8 {
		t.Fatalf("found %d golden transcripts in testdata/server, want at least 8", len(files))
	}
	for _, file := range files {
		for _, tr := range rawTransports {
			t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar")+"/"+tr.name, func(t *testing.T) {
				goldenTranscript(t, file, tr.make)
			})
		}
	}
}

func goldenTranscript(t *testing.T, file string, transport rawTransport) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var request, want *txtar.File
	for i := range ar.Files {
		switch ar.Files[i].Name {
		case "request.json":
			request = &ar.Files[i]
		case "response.json":
			want = &ar.Files[i]
		}
	}
	if request == nil || want == nil {
		t.Fatalf("%s needs a request.json and a response.json section", file)
	}
	var req struct {
		Method string `json:"method"`
	}
	if err := json.Unmarshal(request.Data, &req); err != nil {
		t.Fatalf("request.json: %v", err)
	}

	d := newDomain(t)
	r := newRawSessionOn(t, mcpserver.New(d.options()), transport)
	if req.Method != "initialize" {
		r.handshake()
	}
	r.send(string(request.Data))
	got := normalize(t, r.receive())

	if *update {
		want.Data = got
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(string(want.Data), string(got)); diff != "" {
		t.Errorf("%s: response differs from the golden transcript (-want +got); if the change is intended, run go test ./mcpserver -run TestGoldenTranscripts -update\n%s", file, diff)
	}
}
