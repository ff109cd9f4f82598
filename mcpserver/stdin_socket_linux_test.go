package mcpserver_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentapp/agentapp/mcpserver"
	"github.com/google/go-cmp/cmp"
)

// socketSession is a server with the direct path whose input is a blocking
// socketpair made pollable as `agentapp serve` makes its stdin when a
// Node.js host spawns it, spoken to in raw JSON-RPC lines.
func socketSession(t *testing.T, srv *mcpserver.Server) *rawSession {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	client, serverEnd := os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "server")
	in, err := mcpserver.ReopenPollable(serverEnd)
	if err != nil {
		t.Fatalf("the socket was not made pollable: %v", err)
	}
	outR, outW := io.Pipe()
	ss, err := srv.Connect(context.Background(), srv.NewIOTransport(in, outW), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &rawSession{t: t, in: client, out: bufio.NewReader(outR), ss: ss}
	t.Cleanup(func() {
		client.Close()
		ss.Wait()
		outR.Close()
	})
	return r
}

// secondID gives a request line's id a value of its own: a number plus
// 1000, a string with "-2" added.
func secondID(line string) string {
	return idRe.ReplaceAllStringFunc(line, func(m string) string {
		sub := idRe.FindStringSubmatch(m)
		if n, err := strconv.Atoi(sub[2]); err == nil {
			return sub[1] + strconv.Itoa(n+1000)
		}
		return sub[1] + strings.TrimSuffix(sub[2], `"`) + `-2"`
	})
}

var idRe = regexp.MustCompile(`("id"\s*:\s*)(\d+|"[^"]*")`)

// TestSocketStdinMatchesPipe sends every direct-path case, one at a time
// and then all pipelined, to a server reading a pollable socket and to one
// reading a pipe, and requires the same bytes back in the same order.
func TestSocketStdinMatchesPipe(t *testing.T) {
	run := func(r *rawSession) string {
		r.handshake()
		var b strings.Builder
		for _, tc := range directCases {
			r.send(tc.line)
			b.Write(r.receive())
		}
		// Fresh ids: MCP forbids reusing one within a session, and a
		// server may still be closing the first phase's call of an id
		// when its answer has been read, so reusing them made the
		// answer depend on timing ("still being answered").
		for _, tc := range directCases {
			r.send(secondID(tc.line))
		}
		var pipelined []string
		for range directCases {
			pipelined = append(pipelined, string(r.receive()))
		}
		// Calls in flight together may be answered in any order.
		slices.Sort(pipelined)
		b.WriteString(strings.Join(pipelined, ""))
		out := []byte(b.String())
		for _, n := range normalizers {
			out = n.re.ReplaceAll(out, []byte(n.with))
		}
		return string(out)
	}
	pipe, _ := directSession(t, newDomain(t).options(), true)
	srv := mcpserver.New(newDomain(t).options())
	sock := socketSession(t, srv)
	want, got := run(pipe), run(sock)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the server on a socket answers differently from the server on a pipe (-pipe +socket):\n%s", diff)
	}
	if srv.DirectTaken() == 0 {
		t.Error("no call on the socket went through the direct path")
	}
}
