package relisten

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const listenReq = `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["memo://a"]}}}`

var fast = Policy{First: time.Millisecond, Max: 4 * time.Millisecond, Attempts: 3}

func stream(s string) *http.Response {
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(s))}
}

// A stream that ends is opened again, the reopened one has the
// notifications the request asked for right after its acknowledgement, an event cut in half by the end is
// dropped, and the server's answer to the listen request is held back.
func TestReopen(t *testing.T) {
	first := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\"}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"meth"
	ack := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\"}\r\n\r\n"
	second := ack + "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\r\n\r\n"
	calls := 0
	reopen := func(context.Context) (*http.Response, error) {
		calls++
		if calls == 1 {
			return nil, errors.New("refused")
		}
		if calls == 2 {
			return stream(second), nil
		}
		return &http.Response{StatusCode: 503, Status: "503", Body: http.NoBody}, nil
	}
	b := Wrap(context.Background(), "s", []byte(listenReq), io.NopCloser(strings.NewReader(first)), reopen, nil, fast)
	got, err := io.ReadAll(b)
	if err != nil {
		t.Fatal(err)
	}
	want := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\"}\n\n" +
		ack + "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\",\"params\":{\"uri\":\"memo://a\"}}\n\n" +
		second[len(ack):]
	if string(got) != want {
		t.Errorf("read\n%s\nwant\n%s", got, want)
	}
	// Refused, a stream that ends at once (so the count does not start
	// afresh), a 503: three in a row, given up.
	if calls != fast.Attempts {
		t.Errorf("%d reopens", calls)
	}
}

// Cancelling the listen (the session closing) ends the body at once, even
// while it waits to reopen.
func TestCancelStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	reopen := func(context.Context) (*http.Response, error) { return nil, errors.New("down") }
	b := Wrap(ctx, "s", []byte(listenReq), io.NopCloser(strings.NewReader("")), reopen, nil, Policy{First: time.Hour})
	done := make(chan error, 1)
	go func() { _, err := io.ReadAll(b); done <- err }()
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("read ended with %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the body kept waiting after the cancel")
	}
	b.Close()
}

// A body that is not a listen request is left alone.
func TestNotListen(t *testing.T) {
	body := io.NopCloser(strings.NewReader("x"))
	if got := Wrap(context.Background(), "s", []byte("{"), body, nil, nil, Policy{}); got != body {
		t.Error("wrapped a body it cannot read the request of")
	}
}
