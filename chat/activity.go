package chat

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/term"
	"github.com/agentapp/agentapp/internal/textsafe"
	xterm "golang.org/x/term"
)

// style colours text for a terminal. The zero style writes plain text: the
// chat colours only a terminal, and never with NO_COLOR set
// (https://no-color.org), so a pipe or a log file gets no escape codes.
type style struct{ on bool }

func (s style) wrap(code, text string) string {
	if !s.on || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (s style) dim(t string) string   { return s.wrap("2", t) }
func (s style) bold(t string) string  { return s.wrap("1", t) }
func (s style) green(t string) string { return s.wrap("32", t) }
func (s style) red(t string) string   { return s.wrap("31", t) }
func (s style) cyan(t string) string  { return s.wrap("36", t) }

// argsPreview is the length of the argument preview on a tool call's line.
const argsPreview = 60

// activity writes one line when a tool call starts (tool, server, a short
// preview of the arguments) and one when it ends (✓ or ✗, the duration),
// so the user sees what the assistant does without --trace.
type activity struct {
	w  io.Writer
	st style
	// whole shows a failure's whole message, not a preview of its first
	// line: /call exists to show what a tool answers, errors included.
	whole bool
	// tty: w is a terminal, which echoes Ctrl-C as ^C where the cursor is.
	tty bool
}

func (a *activity) started(tool, server string, input []byte) {
	if a == nil {
		return
	}
	from := "local"
	switch server {
	case "":
	case host.SkillToolOrigin:
		from = "MCP skills"
	default:
		from = "MCP server " + server
	}
	line := fmt.Sprintf("→ %s (%s) %s", textsafe.Escape(tool), textsafe.Escape(from), textsafe.Preview(compactArgs(input), argsPreview))
	fmt.Fprintln(a.w, a.st.dim(line))
}

// status writes one line per status change of a call that runs as an MCP
// task: the task's status and the server's message.
func (a *activity) status(tool string, st *host.ToolStatus) {
	if a == nil || st == nil {
		return
	}
	line := fmt.Sprintf("  ⋯ %s %s", textsafe.Escape(tool), textsafe.Escape(st.Status))
	if st.Message != "" {
		line += ": " + textsafe.Preview(st.Message, 120)
	}
	fmt.Fprintln(a.w, a.st.dim(line))
}

func (a *activity) ended(tool string, d time.Duration, err error, refused string, isRefused bool) {
	if a == nil {
		return
	}
	dur := formatDuration(d)
	switch {
	case err != nil && a.whole:
		fmt.Fprintf(a.w, "%s %s failed after %s: %s\n", a.st.red("✗"), textsafe.Escape(tool), dur, escapeLines(err.Error()))
	case err != nil:
		fmt.Fprintf(a.w, "%s %s failed after %s: %s\n", a.st.red("✗"), textsafe.Escape(tool), dur, textsafe.Preview(firstLine(err.Error()), 120))
	case isRefused && a.whole:
		fmt.Fprintf(a.w, "%s %s refused: %s\n", a.st.red("✗"), textsafe.Escape(tool), escapeLines(refused))
	case isRefused:
		fmt.Fprintf(a.w, "%s %s refused: %s\n", a.st.red("✗"), textsafe.Escape(tool), textsafe.Preview(refused, 120))
	default:
		fmt.Fprintf(a.w, "%s %s %s\n", a.st.green("✓"), textsafe.Escape(tool), a.st.dim(dur))
	}
}

// cancelled ends the line of a call that Ctrl-C cancelled before it
// returned: without it the call's "→" line would be left open.
func (a *activity) cancelled(tool string, d time.Duration) {
	if a == nil {
		return
	}
	start := ""
	if a.tty {
		// The terminal's echo of Ctrl-C is on this line: the line says
		// ^C itself, apart from the ✗.
		start = "\r\x1b[K^C\n"
	}
	fmt.Fprintf(a.w, "%s%s %s cancelled after %s\n", start, a.st.red("✗"), textsafe.Escape(tool), formatDuration(d))
}

// viewOnWeb says, after a call ended well, that its tool has an MCP Apps
// view: the terminal shows the text result only, the web page the view.
func (a *activity) viewOnWeb(tool string, has bool) {
	if a == nil || !has {
		return
	}
	fmt.Fprintln(a.w, a.st.dim(fmt.Sprintf("  %s has an interactive view; agentapp web shows it", textsafe.Escape(tool))))
}

// compactArgs is the arguments on one line: JSON as the model sent it,
// with its line breaks dropped.
func compactArgs(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "{}"
	}
	return strings.Join(strings.Fields(s), " ")
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "<1ms"
	case d < 10*time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

// printSources lists the knowledge-base documents the answer cites, under
// the answer.
func printSources(w io.Writer, st style, srcs []Source) {
	if len(srcs) == 0 {
		return
	}
	fmt.Fprintln(w, st.bold("Sources:"))
	for _, s := range srcs {
		nos := fmt.Sprintf("[%d]", s.No)
		for _, n := range s.Also { // other passages of the same document
			nos += fmt.Sprintf("[%d]", n)
		}
		fmt.Fprintf(w, "  %s %s %s\n", nos, textsafe.Escape(s.Title), st.dim("("+textsafe.Escape(s.DocID)+")"))
	}
}

// fitWidth breaks each line of text that is wider than width columns at
// spaces, indenting the continuation, so a terminal never wraps a line in
// the middle of a word. A width below 20 leaves the text as it is.
func fitWidth(text string, width int) string {
	if width < 20 {
		return text
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		nl := strings.HasSuffix(line, "\n")
		line = strings.TrimSuffix(line, "\n")
		indent := "  " + leadingSpaces(line)
		col := 0
		for i, word := range strings.Split(line, " ") {
			w := displayWidth(word)
			if i > 0 {
				if col+1+w > width && col > len(indent) {
					b.WriteString("\n" + indent)
					col = len(indent)
				} else {
					b.WriteByte(' ')
					col++
				}
			}
			b.WriteString(word)
			col += w
		}
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func leadingSpaces(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " "))] }

// displayWidth counts the terminal columns of s.
func displayWidth(s string) int { return width.StringWidth(s) }

// termWidth is the width of the terminal w is on, or 0 when w is not a
// terminal (nothing is fitted then).
func termWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(w) {
		return 0
	}
	cols, _, err := xterm.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return cols
}

// style returns the style for w: colour on a terminal unless NoColor.
func (c *Chat) style(w io.Writer) style {
	return style{on: !c.cfg.NoColor && term.IsTerminal(w)}
}
