package supervise

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agentapp/agentapp/internal/jsonscan"
	"github.com/agentapp/agentapp/internal/lineread"
	"github.com/agentapp/agentapp/internal/rpcwire"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient/internal/units"
)

// MaxFrameSize is the largest line a stdio server may write on stdout, not
// counting its line ending. A longer line is refused (logged, and turned
// into an error response when it answers one of our calls) instead of
// being buffered, so a runaway server cannot eat the host's memory.
const MaxFrameSize = 16 << 20

// FrameFilter reads a stdio server's stdout and passes on its JSON-RPC
// messages, decoded, to the connection (stdioConn).
//
// The SDK treats one undecodable line as a broken connection and ends the
// session. Real servers print banners, debug output, progress bars and
// JSON log records on stdout, so the filter passes on only lines that hold
// JSON-RPC 2.0 messages (one, or a batch array of them), and skips every
// other line. Skipped lines are
// logged with the server's name, skipLogLines of them per skipLogWindow;
// the others are counted and summarised once per window and when the
// filter ends, so a server flooding stdout cannot flood the user's
// terminal.
//
// The connection reads the filter synchronously (next), on the SDK's read
// goroutine, with no goroutine of the filter's own between them: handing
// each message across one more goroutine cost a thread wake-up per message.
// Close unblocks a read in progress by closing the pipe, which the SDK's
// connection relies on: its read goroutine would otherwise leak while the
// child keeps stdout open.
type FrameFilter struct {
	server   string
	src      io.ReadCloser
	maxFrame int
	logger   *slog.Logger
	skipped  *lineGate // the reader's
	lr       *lineread.Reader

	ended   bool   // the reader's: stdout ended (next returns io.EOF)
	cur     []byte // unread rest of the current Frame (Read only)
	closing atomic.Bool
	closeMu sync.Mutex
}

func NewFrameFilter(server string, src io.ReadCloser, maxFrame int, logger *slog.Logger) *FrameFilter {
	if maxFrame <= 0 {
		maxFrame = MaxFrameSize
	}
	return &FrameFilter{
		server:   server,
		src:      src,
		maxFrame: maxFrame,
		logger:   logger,
		skipped:  newLineGate(skipLogLines, 0, skipLogWindow),
		lr:       lineread.NewReader(bufio.NewReaderSize(src, 64<<10), maxFrame, idWindow),
	}
}

// Frame is one line passed on: its text with the trailing newline, and
// the JSON-RPC messages it holds (one, or a batch's), decoded.
type Frame struct {
	Raw  []byte
	Msgs []jsonrpc.Message
}

// next returns the next frame, skipping (and logging) the lines that are
// not JSON-RPC messages. At the end of stdout, or once the filter is
// closed, it returns io.EOF, after logging what was skipped without being
// logged line by line. One goroutine at a time may call it.
func (f *FrameFilter) Next() (Frame, error) {
	for !f.ended {
		line, err := f.lr.ReadLine()
		if f.lr.Len()+f.lr.EndLen() > 0 {
			if fr := f.accept(f.lr, line); fr.Raw != nil {
				if err != nil {
					f.end(err) // the last line had no newline: pass it on, then end
				}
				return fr, nil
			}
		}
		if err != nil {
			f.end(err)
		}
	}
	return Frame{}, io.EOF
}

func (f *FrameFilter) end(err error) {
	f.ended = true
	if !errors.Is(err, io.EOF) && !isClosedPipe(err) && !f.closing.Load() {
		f.logger.Warn("mcp: reading the server's stdout failed", "server", f.server, "error", err)
	}
	held, _ := f.skipped.flush()
	f.reportSkipped(held)
}

// Read implements io.Reader over the frames' text, each with its trailing
// newline: newline-delimited JSON with the skipped lines left out.
func (f *FrameFilter) Read(p []byte) (int, error) {
	if len(f.cur) == 0 {
		fr, err := f.Next()
		if err != nil {
			return 0, err
		}
		f.cur = fr.Raw
	}
	n := copy(p, f.cur)
	f.cur = f.cur[n:]
	return n, nil
}

// Close closes the pipe the filter reads, which ends a read in progress.
// It is idempotent.
func (f *FrameFilter) Close() error {
	f.closeMu.Lock()
	defer f.closeMu.Unlock()
	if f.closing.Swap(true) {
		return nil
	}
	_ = f.src.Close()
	return nil
}

// accept returns the frame to pass on for the stdout line lr has just
// read, or a frame with no text to skip it. The frame is a copy: line is
// lr's buffer.
//
// A line is passed on when it is JSON and every message in it is a
// JSON-RPC 2.0 message (rpcwire.Decode): the SDK's connection ends the
// session at the first line it cannot decode, and servers do print JSON
// log records on stdout.
func (f *FrameFilter) accept(lr *lineread.Reader, line []byte) Frame {
	if lr.TooLong() {
		return decodeFrame(f.refuse(lr))
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return Frame{}
	}
	if (line[0] == '{' || line[0] == '[') && json.Valid(line) {
		raw := make([]byte, len(line)+1)
		copy(raw, line)
		raw[len(line)] = '\n'
		if fr := decodeFrame(raw); fr.Raw != nil {
			return fr
		}
	}
	show, held, _ := f.skipped.admit(len(line))
	f.reportSkipped(held)
	if show {
		f.logger.Warn("mcp: server wrote a line on stdout that is not a JSON-RPC message; skipped (servers must log to stderr)",
			"server", f.server, "line", textsafe.Preview(string(line), 300))
	}
	return Frame{}
}

// decodeFrame decodes the messages of raw, a line of valid JSON text (or
// nil), and returns the frame, or no frame when any message in it is not a
// JSON-RPC 2.0 message.
func decodeFrame(raw []byte) Frame {
	if raw == nil {
		return Frame{}
	}
	v := bytes.TrimSpace(raw)
	if v[0] != '[' {
		msg, _, problem := rpcwire.Decode(v)
		if problem != "" {
			return Frame{}
		}
		return Frame{Raw: raw, Msgs: []jsonrpc.Message{msg}}
	}
	var msgs []jsonrpc.Message
	ok := true
	jsonscan.ForEachElement(v, func(e []byte) {
		if !ok || len(msgs) == maxBatchMessages {
			ok = false // a batch this large is not one of a server's answers
			return
		}
		msg, _, problem := rpcwire.Decode(e)
		ok = problem == ""
		msgs = append(msgs, msg)
	})
	if !ok || len(msgs) == 0 {
		return Frame{}
	}
	return Frame{Raw: raw, Msgs: msgs}
}

// maxBatchMessages bounds the messages taken from one batch line: each
// decoded message takes several times the bytes of its smallest text, so a
// line within MaxFrameSize could otherwise hold a few hundred megabytes of
// messages. A larger batch is skipped whole, like any line that is not
// JSON-RPC.
const maxBatchMessages = 1024

// reportSkipped logs how many non-JSON lines were skipped without being
// logged one by one, if any were.
func (f *FrameFilter) reportSkipped(held int64) {
	if held == 0 {
		return
	}
	f.logger.Warn(fmt.Sprintf("mcp: … and %s more non-JSON %s on stdout skipped without being logged (servers must log to stderr)", units.Commas(held), units.Plural(int(min(held, 2)), "line", "lines")),
		"server", f.server)
}

// headID and tailID (and errorLine below) are compiled on first use: this
// package is linked into every agentapp process, serve included, which
// never starts an MCP client.
var (
	headID = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?[0-9]+|"[^"\\]*")`)
	})
	tailID = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`"id"\s*:\s*(-?[0-9]+|"[^"\\]*")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$`)
	})
)

// refuse logs an oversized line and, when it is recognisably the response
// to one of our calls, returns an error response for that call so the caller
// fails at once with the reason instead of waiting for its timeout.
func (f *FrameFilter) refuse(lr *lineread.Reader) []byte {
	size := lr.Len() + lr.EndLen()
	f.logger.Error("mcp: server wrote a message larger than the limit on stdout; refused",
		"server", f.server, "bytes", size, "limit", f.maxFrame, "start", textsafe.Preview(string(lr.Head()), 120))
	if bytes.Contains(lr.Head(), []byte(`"method"`)) {
		return nil // a request or notification from the server: nobody waits for it
	}
	var id []byte
	if m := headID().FindSubmatch(lr.Head()); m != nil {
		id = m[1]
	} else if m := tailID().FindSubmatch(lr.Tail()); m != nil {
		id = m[1]
	}
	if id == nil {
		return nil
	}
	msg := fmt.Sprintf("server %s sent a response of %d bytes, over the %d-byte limit; it was refused (ask for less data, e.g. a smaller page or range)",
		f.server, size, f.maxFrame)
	b, _ := json.Marshal(msg)
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":%s}}`+"\n", id, b)
}

// idWindow is how many bytes of each end of an oversized line are kept:
// enough to find its JSON-RPC id, and for a preview of a stderr line.
const idWindow = 256

func isClosedPipe(err error) bool {
	return strings.Contains(err.Error(), "file already closed") || strings.Contains(err.Error(), "closed pipe")
}

// StderrRing keeps the last lines a server wrote on stderr, for error
// messages (a failed connect shows them) and for StderrTail, and the
// decisive ones: the first line that looks like an error and the latest
// one. A crash often ends in a long stack (Node prints 10 or more frames
// after "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'x'"), so the
// tail alone can miss the one line that says what is wrong.
type StderrRing struct {
	mu    sync.Mutex
	lines []string
	next  int
	full  bool
	// firstErr and lastErr are the first and the latest error-looking
	// line ("" for none).
	firstErr, lastErr string
}

// errorLine matches a stderr line that states an error rather than a
// Frame of its stack: "Error [ERR_…]: …" (Node), "ModuleNotFoundError: …"
// (Python's last traceback line), "FATAL: …", "panic: …", "fatal error:"
// (Go), "error: …", "ERROR …", "[ERROR] …", "Exception in thread …".
var errorLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(?:\[?(?:ERROR|Error|error|FATAL|Fatal|fatal|CRITICAL|PANIC|panic)\b\]?|[A-Za-z_][\w.]*(?:Error|Exception)\b|Exception in thread\b)`)
})

// isErrorLine reports whether a stderr line looks like the statement of an
// error (see errorLine).
func isErrorLine(s string) bool {
	// Most lines hold none of these words; checking for them first keeps
	// the regular expression off the path of a chatty server's stderr.
	l := s[:min(len(s), 80)]
	if !strings.Contains(l, "rror") && !strings.Contains(l, "RROR") && !strings.Contains(l, "atal") && !strings.Contains(l, "ATAL") &&
		!strings.Contains(l, "anic") && !strings.Contains(l, "ANIC") && !strings.Contains(l, "xception") && !strings.Contains(l, "RITICAL") {
		return false
	}
	return errorLine().MatchString(s)
}

const (
	stderrKeepLines = 50
	stderrMaxLine   = 1000
)

func (r *StderrRing) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lines == nil {
		r.lines = make([]string, stderrKeepLines)
	}
	if isErrorLine(line) {
		if r.firstErr == "" {
			r.firstErr = line
		}
		r.lastErr = line
	}
	r.lines[r.next] = line
	r.next = (r.next + 1) % len(r.lines)
	if r.next == 0 {
		r.full = true
	}
}

// tail returns up to n of the last lines, oldest first; n <= 0 means all kept.
func (r *StderrRing) Tail(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	if r.full {
		out = append(out, r.lines[r.next:]...)
	}
	out = append(out, r.lines[:r.next]...)
	if n > 0 && len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// errorLines returns the decisive lines: the first error-looking line and,
// when it is another, the latest one (a Python traceback ends with its
// exception); nil when no line looked like an error.
func (r *StderrRing) ErrorLines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.firstErr == "":
		return nil
	case r.lastErr == r.firstErr:
		return []string{r.firstErr}
	}
	return []string{r.firstErr, r.lastErr}
}

// pumpStderr reads a server's stderr line by line into ring until EOF, and
// echoes each line (prefixed with the server name) to echo when it is set,
// else logs it at debug level. Every line is escaped (textsafe) before it
// is kept or shown: it goes to the user's terminal, in the echo and in
// error messages, and a server must not be able to write escape sequences
// there. The echo is bounded like a flood: echoLines lines and echoBytes
// bytes per echoWindow, then a line saying how many were not shown.
func pumpStderr(server string, src io.Reader, ring *StderrRing, echo io.Writer, logger *slog.Logger) {
	prefix := "[" + textsafe.Escape(server) + "] "
	gate := newLineGate(echoLines, echoBytes, echoWindow)
	report := func(held, heldBytes int64) {
		if held == 0 {
			return
		}
		msg := fmt.Sprintf("… %s more stderr %s (%s) not shown", units.Commas(held), units.Plural(int(min(held, 2)), "line", "lines"), units.ApproxSize(heldBytes))
		if echo != nil {
			fmt.Fprintf(echo, "%s%s\n", prefix, msg)
		} else {
			logger.Debug("mcp server stderr: "+msg, "server", server)
		}
	}
	defer func() { report(gate.flush()) }()
	lr := lineread.NewReader(bufio.NewReaderSize(src, 4096), stderrMaxLine, idWindow)
	for {
		line, err := lr.ReadLine()
		if lr.Len()+lr.EndLen() > 0 {
			var s string
			if lr.TooLong() {
				s = textsafe.Escape(string(lr.Head())) + fmt.Sprintf("… (%d bytes)", lr.Len()+lr.EndLen())
			} else {
				s = textsafe.Preview(strings.TrimRight(string(line), "\r"), stderrMaxLine)
			}
			ring.add(s)
			show, held, heldBytes := gate.admit(len(s))
			report(held, heldBytes)
			if show {
				if echo != nil {
					fmt.Fprintf(echo, "%s%s\n", prefix, s)
				} else {
					logger.Debug("mcp server stderr", "server", server, "line", s)
				}
			}
		}
		if err != nil {
			return
		}
	}
}
