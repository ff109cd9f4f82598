package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpserver"
	"github.com/google/go-cmp/cmp"
)

// socketPair returns the two ends of a blocking Unix stream socketpair, as
// a Node.js host hands a server its stdin and stdout.
func socketPair(t *testing.T) (client, server *os.File) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "server")
}

// rawSocketSession is a server with the direct path on two socketpairs,
// reading and writing them with the raw system calls `agentapp serve`
// uses when a Node.js host spawns it.
func rawSocketSession(t *testing.T, srv *mcpserver.Server) *rawSession {
	t.Helper()
	clientIn, serverIn := socketPair(t)
	clientOut, serverOut := socketPair(t)
	pollable, err := mcpserver.ReopenPollable(serverIn)
	if err != nil {
		t.Fatalf("the socket was not made pollable: %v", err)
	}
	in := mcpserver.NewRawReader(pollable)
	if in == pollable {
		t.Fatal("NewRawReader did not take the pollable socket")
	}
	out := mcpserver.NewStdoutWriter(serverOut)
	if out == io.Writer(serverOut) {
		t.Fatal("NewStdoutWriter did not take the socket")
	}
	ss, err := srv.Connect(context.Background(), srv.NewIOTransport(in, nopCloser{out}), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &rawSession{t: t, in: clientIn, out: bufio.NewReader(clientOut), ss: ss}
	t.Cleanup(func() {
		clientIn.Close()
		ss.Wait()
		serverOut.Close()
		clientOut.Close()
	})
	return r
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// TestRawSocketIOMatchesPipe sends every direct-path case, one at a time
// and then all pipelined, to a server on sockets read and written with raw
// system calls and to one on pipes through *os.File, and requires the same
// bytes back in the same order.
func TestRawSocketIOMatchesPipe(t *testing.T) {
	run := func(r *rawSession) string {
		r.send(mcpserver.InitializeLine) // the handshake, each wait bounded
		receiveWithin(t, r, 10*time.Second, "initialize")
		r.send(mcpserver.InitializedLine)
		var b strings.Builder
		for _, tc := range directCases {
			r.send(tc.line)
			b.WriteString(receiveWithin(t, r, 10*time.Second, tc.name))
		}
		for _, tc := range directCases {
			r.send(tc.line)
		}
		var pipelined []string
		for _, tc := range directCases {
			pipelined = append(pipelined, receiveWithin(t, r, 10*time.Second, tc.name+", pipelined"))
		}
		slices.Sort(pipelined) // calls in flight together may be answered in any order
		b.WriteString(strings.Join(pipelined, ""))
		out := []byte(b.String())
		for _, n := range normalizers {
			out = n.re.ReplaceAll(out, []byte(n.with))
		}
		return string(out)
	}
	pipe, _ := directSession(t, newDomain(t).options(), true)
	srv := mcpserver.New(newDomain(t).options())
	raw := rawSocketSession(t, srv)
	want, got := run(pipe), run(raw)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the server on raw sockets answers differently from the server on pipes (-pipe +raw):\n%s", diff)
	}
	if srv.DirectTaken() == 0 {
		t.Error("no call on the raw sockets went through the direct path")
	}
}

// rawSocketReader returns the client's end of a socketpair and a raw
// reader of the server's end, reopened as stdin is.
func rawSocketReader(t *testing.T) (client *os.File, r io.ReadCloser) {
	t.Helper()
	client, server := socketPair(t)
	pollable, err := mcpserver.ReopenPollable(server)
	if err != nil {
		client.Close()
		t.Fatal(err)
	}
	r = mcpserver.NewRawReader(pollable)
	if r == pollable {
		client.Close()
		t.Fatal("NewRawReader did not take the pollable socket")
	}
	return client, r
}

// TestRawReader checks the raw reader against what os.File's Read gives:
// data written after the read started (it waits in the poller), data in
// pieces, the end of the input, and an error once closed.
func TestRawReader(t *testing.T) {
	client, r := rawSocketReader(t)
	defer client.Close()
	want := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB, more than a socket buffer
	werr := make(chan error, 1)
	go func() {
		time.Sleep(10 * time.Millisecond) // let the first Read wait for data
		_, err := client.Write(want)
		werr <- errors.Join(err, client.Close())
	}()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("ReadAll: %v", err)
	}
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want the %d written (first difference at %d)", len(got), len(want), firstDiff(got, want))
	}
	if n, err := r.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Errorf("Read after the end: %d, %v; want 0, EOF", n, err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(make([]byte, 8)); err == nil || err == io.EOF {
		t.Errorf("Read after Close: %v, want an error", err)
	}
}

// TestRawReaderSpinsAfterQuickReads checks the reader's short poll before
// it parks: after a read that found its data at once, the next read keeps
// polling, yielding the processor while it does, and finds data sent
// meanwhile by another goroutine on the same single processor without
// parking in the poller. After a long wait the next read parks at once.
func TestRawReaderSpinsAfterQuickReads(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	client, r := rawSocketReader(t)
	defer client.Close()
	defer r.Close()
	// A window far longer than the test needs, so that the writer
	// always gets to run within it.
	mcpserver.SetRawReaderSpin(r, 5*time.Second)
	buf := make([]byte, 64)
	read := func(want string) {
		t.Helper()
		n, err := r.Read(buf)
		if err != nil || string(buf[:n]) != want {
			t.Fatalf("Read: %q, %v; want %q", buf[:n], err, want)
		}
	}
	if _, err := client.Write([]byte("one\n")); err != nil {
		t.Fatal(err)
	}
	read("one\n") // found at once: the next read may poll
	werr := make(chan error, 1)
	go func() { _, err := client.Write([]byte("two\n")); werr <- err }()
	read("two\n")
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
	if n := mcpserver.RawReaderParks(r); n != 0 {
		t.Fatalf("the read after a quick one parked %d times: it did not let the writer run while it polled", n)
	}
	// Now a read whose data comes late: it parks, and the one after it
	// does not poll at all.
	mcpserver.SetRawReaderSpin(r, time.Millisecond)
	go func() { time.Sleep(20 * time.Millisecond); _, err := client.Write([]byte("three\n")); werr <- err }()
	read("three\n")
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
	parks := mcpserver.RawReaderParks(r)
	if parks != 1 {
		t.Fatalf("a read that waited 20 ms parked %d times, want 1", parks)
	}
	go func() { time.Sleep(5 * time.Millisecond); _, err := client.Write([]byte("four\n")); werr <- err }()
	read("four\n")
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
	if n := mcpserver.RawReaderParks(r); n != parks+1 {
		t.Fatalf("a read after a slow one parked %d times, want 1", n-parks)
	}
}

// TestRawReaderLeavesBlockingFiles checks that a descriptor in blocking
// mode is not read with raw reads, which would hold the processor while
// they wait.
func TestRawReaderLeavesBlockingFiles(t *testing.T) {
	_, server := socketPair(t)
	defer server.Close()
	if r := mcpserver.NewRawReader(server); r != io.ReadCloser(server) {
		t.Error("NewRawReader took a blocking *os.File")
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	if w := mcpserver.NewStdoutWriter(pw); w != io.Writer(pw) {
		t.Error("NewStdoutWriter took a pipe; only sockets can be sent to without waiting")
	}
}

// TestRawSocketWriterFullAndBroken writes more than the socket holds to a
// client that reads slowly (the rest goes through os.File's Write, which
// waits), then to a client that has gone: every byte arrives in order, and
// the broken socket is an error, not a panic or a lost write reported as
// done.
func TestRawSocketWriterFullAndBroken(t *testing.T) {
	client, server := socketPair(t)
	defer server.Close()
	w := mcpserver.NewStdoutWriter(server)
	want := bytes.Repeat([]byte("answer line\n"), 400<<10) // 4.8 MB
	got := make(chan []byte, 1)
	go func() {
		time.Sleep(20 * time.Millisecond) // the socket fills first
		b, _ := io.ReadAll(client)
		got <- b
	}()
	n, err := w.Write(want[:len(want)/2])
	if err != nil || n != len(want)/2 {
		t.Fatalf("Write: %d, %v; want %d, nil", n, err, len(want)/2)
	}
	if n, err := w.Write(want[len(want)/2:]); err != nil || n != len(want)-len(want)/2 {
		t.Fatalf("second Write: %d, %v", n, err)
	}
	if err := syscall.Shutdown(int(server.Fd()), syscall.SHUT_WR); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		if !bytes.Equal(b, want) {
			t.Fatalf("the client read %d bytes, want the %d written (first difference at %d)", len(b), len(want), firstDiff(b, want))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the client did not read everything within 30 s")
	}
	client.Close()
	if _, err := w.Write([]byte("late\n")); !errors.Is(err, syscall.EPIPE) {
		t.Errorf("Write to a socket whose peer is gone: %v, want EPIPE", err)
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
