// Command stdiofloor is an MCP server over stdio that does no work: it
// answers every tools/call with the same bytes, captured beforehand from a
// real server. bench/compare.sh runs the TypeScript SDK client on it
// beside `agentapp serve` and server-everything: what the client reaches
// on it is the most any server can reach through that client on this
// machine (the client's own CPU per call sets the pace), so the rows
// through that client can be read against it.
//
//	stdiofloor capture [--tool T] [--args JSON] -- COMMAND ARGS…
//	stdiofloor serve --result FILE
//
// capture starts COMMAND, initializes it, makes one tools/call and prints
// the call's result object on stdout, byte for byte as the server sent it.
// serve answers initialize (with the client's protocol version), ping,
// tools/list (no tools, so a client has no output schema to check against
// and does the least it can) and tools/call (the captured result, whatever
// the tool and arguments); any other request gets "method not found", and
// notifications are read and dropped. The answers to the requests of one
// read go out in one write, as a fast server's would.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "stdiofloor:", err)
		os.Exit(1)
	}
}

const usage = `usage:
  stdiofloor capture [--tool T] [--args JSON] -- COMMAND ARGS…
  stdiofloor serve --result FILE`

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		file := fs.String("result", "", "file holding the tools/call result object to answer with (from capture)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *file == "" || fs.NArg() > 0 {
			return errors.New("serve needs --result FILE and nothing else\n" + usage)
		}
		b, err := os.ReadFile(*file)
		if err != nil {
			return err
		}
		result, err := checkResult(bytes.TrimSpace(b))
		if err != nil {
			return fmt.Errorf("%s: %w", *file, err)
		}
		return serve(stdin, stdout, result)
	case "capture":
		fs := flag.NewFlagSet("capture", flag.ContinueOnError)
		tool := fs.String("tool", "getOrderStatus", "the tool to call")
		targs := fs.String("args", `{"orderId":"A-1024"}`, "the call's arguments, a JSON object")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			return errors.New("capture needs the server's command after --\n" + usage)
		}
		if !json.Valid([]byte(*targs)) {
			return fmt.Errorf("--args is not JSON: %s", *targs)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		result, err := capture(ctx, fs.Args(), *tool, json.RawMessage(*targs))
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", result)
		return err
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], usage)
}

// checkResult accepts a tools/call result object that is not an error.
func checkResult(b []byte) (json.RawMessage, error) {
	var r struct {
		Content []json.RawMessage `json:"content"`
		IsError bool              `json:"isError"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("not a tools/call result: %w", err)
	}
	if r.Content == nil || r.IsError {
		return nil, fmt.Errorf("not a successful tools/call result (no content, or isError): %.300s", b)
	}
	return json.RawMessage(b), nil
}

// maxLine bounds a line read: a request to serve (a benchmark client's are
// a few hundred bytes) or an answer to capture.
const maxLine = 1 << 20

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"` // read only by initialize
}

// serve answers requests until the input ends.
func serve(stdin io.Reader, stdout io.Writer, result json.RawMessage) error {
	r := bufio.NewReaderSize(stdin, 64<<10)
	w := bufio.NewWriterSize(stdout, 64<<10)
	for {
		line, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 {
			if out := answer(line, result); out != nil {
				w.Write(out)
				w.WriteByte('\n')
			}
		}
		if err != nil || r.Buffered() == 0 {
			if ferr := w.Flush(); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("a line is over %d bytes", maxLine)
		}
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// answer is the response to one line, or nil for a notification.
func answer(line []byte, result json.RawMessage) []byte {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: ` + jsonEscape(err.Error()) + `"}}`)
	}
	if len(req.ID) == 0 || string(req.ID) == "null" {
		return nil
	}
	out := append([]byte(`{"jsonrpc":"2.0","id":`), req.ID...)
	switch req.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(req.Params, &p) // params of another shape: the default version
		v := p.ProtocolVersion
		if v == "" {
			v = "2025-06-18"
		}
		out = append(out, `,"result":{"protocolVersion":`...)
		out = strconv.AppendQuote(out, v)
		out = append(out, `,"capabilities":{"tools":{}},"serverInfo":{"name":"stdiofloor","version":"1.0.0"}}}`...)
	case "tools/call":
		out = append(append(append(out, `,"result":`...), result...), '}')
	case "tools/list":
		out = append(out, `,"result":{"tools":[]}}`...)
	case "ping":
		out = append(out, `,"result":{}}`...)
	default:
		out = append(out, `,"error":{"code":-32601,"message":"method not found: `+jsonEscape(req.Method)+`"}}`...)
	}
	return out
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// capture makes one tools/call on the server argv starts and returns the
// result object as the server wrote it.
func capture(ctx context.Context, argv []string, tool string, args json.RawMessage) (json.RawMessage, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	ownGroup(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// The server is ours to end: its stdin closed, then its group killed
	// if it has not exited within 5 s.
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		in.Close()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			killGroup(cmd)
			<-exited
		}
	}()
	go func() {
		select {
		case <-ctx.Done():
			killGroup(cmd)
		case <-exited:
		}
	}()

	lines := bufio.NewReaderSize(out, 64<<10)
	call := func(id int, method string, params any) (json.RawMessage, error) {
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := in.Write(append(msg, '\n')); err != nil {
			return nil, fmt.Errorf("%s: writing to the server: %w", method, err)
		}
		for {
			line, err := readLine(lines)
			if err != nil {
				if ctx.Err() != nil {
					return nil, fmt.Errorf("%s: no answer within the time allowed", method)
				}
				return nil, fmt.Errorf("%s: the server's output ended: %w", method, err)
			}
			var resp struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(line, &resp) != nil || string(resp.ID) != strconv.Itoa(id) {
				continue // a notification or a request from the server
			}
			if resp.Error != nil {
				return nil, fmt.Errorf("%s: the server answered with an error: %s", method, resp.Error)
			}
			return resp.Result, nil
		}
	}
	if _, err := call(1, "initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "stdiofloor", "version": "1.0.0"},
	}); err != nil {
		return nil, err
	}
	if _, err := in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		return nil, err
	}
	res, err := call(2, "tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return nil, err
	}
	return checkResult(res)
}
