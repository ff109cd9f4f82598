package chat

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/model"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ModelSampler is the mcpclient.Sampler of the chat: a server's request
// for a completion is answered by the chat's model, without tools, after
// the user approved it on the terminal (when the server's "sampling" is
// "ask"). The approval shows the server, the system prompt, every message
// and the token cap, all escaped, and only y or yes approves; end of
// input, a non-interactive stdin or no answer within the confirmation
// timeout refuse, as for a guarded tool call.
type ModelSampler struct {
	model       model.Model
	in          lineAsker
	out         io.Writer
	interactive bool
	turn        chan struct{}
	spin        *atomic.Pointer[spinner]
}

func newModelSampler(m model.Model, in lineAsker, out io.Writer, interactive bool, spin *atomic.Pointer[spinner]) *ModelSampler {
	return &ModelSampler{model: m, in: in, out: out, interactive: interactive, turn: make(chan struct{}, 1), spin: spin}
}

// errSamplingRefused is what the server is told when the user says no.
var errSamplingRefused = errors.New("the user refused the sampling request")

// CreateMessage implements mcpclient.Sampler.
func (s *ModelSampler) CreateMessage(ctx context.Context, req *mcpclient.SamplingRequest) (*mcp.CreateMessageResult, error) {
	p := req.Params
	msgs, err := samplingMessages(p.Messages)
	if err != nil {
		return nil, err
	}
	if req.Ask {
		if err := s.approve(ctx, req, msgs); err != nil {
			return nil, err
		}
	}
	resp, err := s.model.Generate(ctx, &model.Request{System: p.SystemPrompt, Messages: msgs, MaxTokens: p.MaxTokens})
	if err != nil {
		return nil, fmt.Errorf("the client's model %s failed: %v", s.model.Name(), err)
	}
	return &mcp.CreateMessageResult{
		Content:    &mcp.TextContent{Text: resp.Message.Content},
		Model:      s.model.Name(),
		Role:       "assistant",
		StopReason: "endTurn",
	}, nil
}

// samplingMessages turns the request's messages into the model's; only
// text can be passed on (the models here read text), so other content is
// refused rather than silently dropped.
func samplingMessages(in []*mcp.SamplingMessage) ([]model.Message, error) {
	out := make([]model.Message, 0, len(in))
	for i, m := range in {
		if m == nil {
			continue
		}
		tc, ok := m.Content.(*mcp.TextContent)
		if !ok {
			return nil, fmt.Errorf("message %d is not text; this client's model reads text only", i+1)
		}
		role := model.RoleUser
		if m.Role == "assistant" {
			role = model.RoleAssistant
		}
		out = append(out, model.Message{Role: role, Content: tc.Text})
	}
	return out, nil
}

func (s *ModelSampler) approve(ctx context.Context, req *mcpclient.SamplingRequest, msgs []model.Message) error {
	who := "MCP server " + textsafe.Escape(req.Server)
	if !s.interactive {
		fmt.Fprintf(s.out, "%s asks the model for a completion, but stdin is not a terminal, so nobody could approve: refused\n", who)
		return fmt.Errorf("%w: stdin is not a terminal", errSamplingRefused)
	}
	select {
	case s.turn <- struct{}{}:
		defer func() { <-s.turn }()
	case <-ctx.Done():
		return ctx.Err()
	}
	if s.spin != nil {
		s.spin.Load().halt()
	}
	note := s.in.noteWriter()
	var b strings.Builder
	fmt.Fprintf(&b, "%s asks the model (%s) for a completion of at most %d tokens:\n", who, textsafe.Escape(s.model.Name()), req.Params.MaxTokens)
	if req.Params.SystemPrompt != "" {
		fmt.Fprintf(&b, "  system: %s\n", textsafe.Preview(req.Params.SystemPrompt, 500))
	}
	for _, m := range msgs {
		fmt.Fprintf(&b, "  %s: %s\n", m.Role, textsafe.Preview(m.Content, 500))
	}
	io.WriteString(note, b.String())
	wait, cancel := context.WithTimeout(ctx, guard.DefaultConfirmTimeout)
	defer cancel()
	line, err := s.in.read(wait, "Allow? [y/N] ", nil)
	if err != nil {
		fmt.Fprintln(note, "\nno answer: refused")
		return fmt.Errorf("%w: no answer", errSamplingRefused)
	}
	if d := guard.Answer(line); !d.Approved {
		fmt.Fprintln(note, "refused")
		return errSamplingRefused
	}
	return nil
}

// ClientSide answers what the connected servers ask of the chat:
// sampling with the chat's model, elicitation on the terminal, and
// progress shown in the turn's spinner line. The servers connect before
// the chat exists, so create it first, connect with ConnectOptions, and
// give it to Config.ClientSide; until the chat is created its requests
// are refused.
type ClientSide struct {
	chat atomic.Pointer[Chat]
	// OnProgress, when set, also gets every progress notification (the
	// command line traces them).
	OnProgress func(mcpclient.Progress)
}

// ConnectOptions are the mcpclient options that route the servers'
// requests to the chat: sampling (maxTokens caps a request; 0 is the
// default cap), elicitation and progress.
func (h *ClientSide) ConnectOptions(maxTokens int64) []mcpclient.ConnectOption {
	return []mcpclient.ConnectOption{
		mcpclient.WithSampler(h, maxTokens),
		mcpclient.WithElicitor(h),
		mcpclient.WithProgress(h.progress),
	}
}

var errNoTurn = errors.New("the chat is not running a tool call of this server, so nobody is there to answer; servers may ask only while one of their tools runs")

// inTurn returns the chat and ctx cut short by the end of the turn in
// progress (Ctrl-C, the turn's timeout), or false when no turn runs: a
// question then would fight the prompt for the user's next line.
func (h *ClientSide) inTurn(ctx context.Context) (*Chat, context.Context, context.CancelFunc, bool) {
	c := h.chat.Load()
	if c == nil {
		return nil, nil, nil, false
	}
	tp := c.turnCtx.Load()
	if tp == nil {
		return nil, nil, nil, false
	}
	// A child of the turn, so that the end of the turn reaches the
	// question at once (before the REPL reads its next line); the end of
	// the server's request follows it through AfterFunc.
	merged, cancel := context.WithCancel(*tp)
	stop := context.AfterFunc(ctx, cancel)
	return c, merged, func() { stop(); cancel() }, true
}

// CreateMessage implements mcpclient.Sampler.
func (h *ClientSide) CreateMessage(ctx context.Context, req *mcpclient.SamplingRequest) (*mcp.CreateMessageResult, error) {
	c, ctx, done, ok := h.inTurn(ctx)
	if !ok {
		return nil, errNoTurn
	}
	defer done()
	return c.sampler.CreateMessage(ctx, req)
}

// Elicit implements mcpclient.Elicitor.
func (h *ClientSide) Elicit(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	c, ctx, done, ok := h.inTurn(ctx)
	if !ok {
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	defer done()
	res, err := c.elicitor.Elicit(ctx, server, p)
	if err == nil && ctx.Err() != nil {
		res = &mcp.ElicitResult{Action: "cancel"}
	}
	return res, err
}

func (h *ClientSide) progress(p mcpclient.Progress) {
	if h.OnProgress != nil {
		h.OnProgress(p)
	}
	if c := h.chat.Load(); c != nil {
		c.spin.Load().relabel(p.String())
	}
}

// NewTerminalHandlers returns a sampler answering with m and an elicitor,
// both asking on out and reading the answers from in, one plain line each,
// through one reader (for a program that reads nothing else from in, like
// agentapp mcp). interactive says whether in is a terminal; when it is
// false, sampling that needs approval is refused and elicitation declined.
// A nil m gives a nil sampler.
func NewTerminalHandlers(m model.Model, in io.Reader, out io.Writer, interactive bool) (*ModelSampler, *TerminalElicitor) {
	lines := newLineReader(out)
	lines.use(&plainSource{r: bufio.NewReader(in)})
	var s *ModelSampler
	if m != nil {
		s = newModelSampler(m, lines, out, interactive, nil)
	}
	return s, newTerminalElicitor(lines, out, interactive, nil)
}
