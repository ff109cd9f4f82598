package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/google/go-cmp/cmp"
)

// orderArgs are getOrderStatus arguments for TestDirectOrderAnswersMatchSDK:
// every order twice in a row, so that the second answer comes from the
// order cache, and arguments the tool or its schema rejects.
var orderArgs = []string{
	`{"orderId":"A-1024"}`, `{"orderId":"A-1024"}`,
	`{"orderId":"B-0001"}`, `{"orderId":" B-0001 "}`,
	`{"orderId":"P-13812345678"}`, `{"orderId":"P-13812345678"}`,
	`{"orderId":"H-0001"}`, `{"orderId":"H-0001"}`,
	`{"orderId":"Z-9999"}`, `{"orderId":"Z-9999"}`,
	`{"orderId":"a-1024"}`,
	`{"orderId":1024}`,
	`{}`,
	`{"orderId":"A-1024","verbose":"yes"}`,
	`{"orderId":"   "}`,
	`{"orderId":"A-1024` + strings.Repeat(" ", 40) + `"}`,
	`{"orderId":"A-1024\u0020"}`,
}

// orderLines are the tools/call lines of orderArgs, numbered from id.
func orderLines(id int) []string {
	lines := make([]string, len(orderArgs))
	for i, a := range orderArgs {
		lines[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"getOrderStatus","arguments":%s}}`, id+i, a)
	}
	return lines
}

// orderOptions are the server's options on a database that also holds an
// order whose text quotes a phone number (what the PII guard masks) and
// one with characters encoding/json escapes, with every tool masked as
// `agentapp serve` masks them when mask is set.
func orderOptions(t *testing.T, mask bool) *mcpserver.Options {
	t.Helper()
	d := newDomain(t)
	if _, err := d.st.DB.Exec(`INSERT INTO support_orders (id, status, eta) VALUES
		('P-13812345678', '已发货, 联系 13812345678', '明天 18:00 前送达'),
		('H-0001', '<b>包裹</b> & "引号" ` + "\u2028" + `', 'x < y > z')`); err != nil {
		t.Fatal(err)
	}
	opts := d.options()
	if mask {
		g := guard.New(guard.Config{PII: true}, nil, nil)
		for i, tool := range opts.Tools {
			opts.Tools[i] = g.MaskTool(tool)
		}
	}
	return opts
}

// TestDirectOrderAnswersMatchSDK holds the direct path's answers to
// getOrderStatus (including those it writes from the cached, encoded
// result) to the SDK path's, byte for byte: uncached and cached orders,
// unknown ones, rejected arguments with their error texts, with and without
// the PII mask, one call at a time and all in flight at once.
func TestDirectOrderAnswersMatchSDK(t *testing.T) {
	for _, mask := range []bool{false, true} {
		t.Run(fmt.Sprintf("mask=%v", mask), func(t *testing.T) {
			var seq, piped [2][]string
			for i, direct := range []bool{false, true} {
				r, d := directSession(t, orderOptions(t, mask), direct)
				r.handshake()
				for _, line := range orderLines(1) {
					r.send(line)
					seq[i] = append(seq[i], string(r.receive()))
				}
				// Then all at once, several times over, so that answers
				// from the cache are made and written concurrently.
				var all []string
				for k := range 8 {
					all = append(all, orderLines(100*(k+1))...)
				}
				// Written while the answers are read: the pipes hold nothing.
				sent := make(chan error, 1)
				go func() {
					_, err := io.WriteString(r.in, strings.Join(all, "\n")+"\n")
					sent <- err
				}()
				for range all {
					piped[i] = append(piped[i], string(r.receive()))
				}
				if err := <-sent; err != nil {
					t.Fatal(err)
				}
				slices.Sort(piped[i])
				if want := int64(len(orderArgs) + len(all)); direct && d.DirectTaken() != want {
					t.Errorf("direct path answered %d calls, want %d", d.DirectTaken(), want)
				}
			}
			for j := range seq[0] {
				if diff := cmp.Diff(seq[0][j], seq[1][j]); diff != "" {
					t.Errorf("%s: the direct path answers differently from the SDK (-sdk +direct):\n%s", orderArgs[j], diff)
				}
			}
			if diff := cmp.Diff(piped[0], piped[1]); diff != "" {
				t.Errorf("pipelined: the direct path answers differently from the SDK (-sdk +direct):\n%s", diff)
			}
			for i, path := range []string{"sdk", "direct"} {
				for j, a := range seq[i] {
					if !json.Valid([]byte(a)) {
						t.Errorf("%s: not one JSON message: %s", path, a)
					}
					if !strings.Contains(orderArgs[j], "P-13812345678") {
						continue
					}
					if raw := strings.Contains(a, "联系 13812345678"); raw == mask {
						t.Errorf("%s, mask=%v: the phone number in the status shown as is: %v:\n%s", path, mask, raw, a)
					}
				}
			}
		})
	}
}
