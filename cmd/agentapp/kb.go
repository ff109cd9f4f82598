package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/internal/term"
	"github.com/agentapp/agentapp/kb"
	"github.com/agentapp/agentapp/store"
	"github.com/spf13/cobra"
)

// progressMinFiles is how many files an ingest needs before it shows a
// progress bar (on a terminal); fewer finish before a bar would help.
const progressMinFiles = 10

// newKBCmd builds `agentapp kb`, which manages the knowledge base the
// assistant searches: ingest files, list, show and remove documents, search.
func newKBCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kb",
		Short: "Manage the knowledge base (ingest, list, show, rm, search)",
		Long: `The knowledge base holds the documents the assistant searches with the
searchKnowledgeBase tool (and MCP clients with searchKnowledge). Documents are
Markdown or text files; the demo FAQ is added on first start.`,
	}
	cmd.AddCommand(newKBIngestCmd(), newKBListCmd(), newKBShowCmd(), newKBRmCmd(), newKBSearchCmd())
	return cmd
}

// openKB opens the database and the knowledge base, seeding the demo FAQ on
// first start. The knowledge base refuses documents with prompt-injection
// phrases (always, whatever the AGENT_GUARD_* switches say), and
// each refusal is written to the audit log. The returned function closes
// the store and the log.
func openKB(cmd *cobra.Command) (*kb.KB, func(), error) {
	dir, err := dataDir(cmd)
	if err != nil {
		return nil, nil, err
	}
	st, err := openStore(cmd)
	if err != nil {
		return nil, nil, err
	}
	logger := cmdLogger(cmd, cmd.ErrOrStderr(), slog.LevelInfo)
	where := guard.AuditPath(os.Getenv, dir)
	audit := openAudit(st, &where, os.Getenv, logger)
	closeAll := func() {
		audit.Close()
		st.Close()
	}
	guards := guard.New(guard.Config{AuditLog: audit.Path()}, nil, audit)
	k, err := kb.Open(cmd.Context(), st, kb.WithIngestCheck(guards.IngestCheck()), kb.WithLogger(logger))
	if err == nil {
		err = k.SeedDemo(cmd.Context())
	}
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return k, closeAll, nil
}

// withKB runs fn with an open knowledge base and closes it afterwards.
func withKB(cmd *cobra.Command, fn func(*kb.KB) error) error {
	k, closeAll, err := openKB(cmd)
	if err != nil {
		return err
	}
	defer closeAll()
	return fn(k)
}

// notFoundHint adds the way to find valid ids to a not-found error.
func notFoundHint(err error) error {
	if errors.Is(err, kb.ErrNotFound) {
		return fmt.Errorf("%w; run `agentapp kb list` to see the document ids", err)
	}
	return err
}

// resolveDoc finds the document an argument of show or rm means: an id,
// the start of one, or a path (see kb.Resolve).
func resolveDoc(cmd *cobra.Command, k *kb.KB, ref string) (kb.Doc, error) {
	d, err := k.Resolve(cmd.Context(), ref)
	return d, notFoundHint(err)
}

func newKBIngestCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "ingest FILE|DIR...",
		Short: "Add or update .md/.txt files (directories are walked)",
		Long: `Ingest Markdown and text files. Directories are walked for .md, .markdown and
.txt files (hidden directories are skipped).

A document is identified by its path inside the directory argument it came
from (DIR/guides/readme.md is guides/readme.md, its id guides~readme.md-<hash>);
a FILE argument by its file name alone. Ingesting the same path again leaves
identical content as it is and replaces changed content from the same file,
and says which documents it replaced. A path already held by a document from
another file is refused (nothing is lost): ingest the folder that holds both,
or remove the stored document first. Two files that would get the same path in one run are
an error: ingest the directory that holds both.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, walkErrs := collectFiles(args)
			return withKB(cmd, func(k *kb.KB) error {
				return ingestFiles(cmd, k, files, walkErrs)
			})
		},
	}
}

// inputFile is a file to ingest: where it is and its document path.
type inputFile struct {
	src  string // as found: the argument, or the argument joined with the walked path
	path string // the document path: relative to the directory argument, or the file name
}

// collectFiles expands the arguments into files: a file argument is its own
// document, named by its file name; a directory argument is walked for
// ingestible files, each named by its path inside the directory. So
// `ingest docs` and `ingest docs/faq.md` both store faq.md as faq.md. Two
// files that would share a document path are refused (the later one), since
// one would silently replace the other. Problems are returned per path.
func collectFiles(args []string) ([]inputFile, []error) {
	var files []inputFile
	var errs []error
	byPath := map[string]string{} // document path → the file that has it
	seen := map[string]bool{}     // absolute file paths already taken
	add := func(src, docPath string) {
		abs, err := filepath.Abs(src)
		if err != nil {
			abs = filepath.Clean(src)
		}
		if seen[abs] {
			return // the same file named twice
		}
		key := filepath.ToSlash(docPath)
		if first, ok := byPath[key]; ok {
			errs = append(errs, fmt.Errorf("%s: not ingested: it would be stored as %s, like %s in this run, and replace it; ingest the directory that holds both (agentapp kb ingest %s) so that each keeps its own path",
				src, key, first, commonDir(first, src)))
			return
		}
		seen[abs] = true
		byPath[key] = src
		files = append(files, inputFile{src: src, path: docPath})
	}
	for _, arg := range args {
		info, err := os.Stat(arg)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", arg, unwrapPathError(err)))
			continue
		}
		if !info.IsDir() {
			add(arg, filepath.Base(arg))
			continue
		}
		err = filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", p, unwrapPathError(err)))
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if p != arg && strings.HasPrefix(d.Name(), ".") {
					return fs.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() && kb.IsIngestible(d.Name()) {
				rel, err := filepath.Rel(arg, p)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", p, err))
					return nil
				}
				add(p, rel)
			}
			return nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", arg, err))
		}
	}
	return files, errs
}

// commonDir is the innermost directory holding both files, for the advice
// to ingest it. Paths are compared as given, or both absolute when only one
// of them is.
func commonDir(a, b string) string {
	if filepath.IsAbs(a) != filepath.IsAbs(b) {
		if abs, err := filepath.Abs(a); err == nil {
			a = abs
		}
		if abs, err := filepath.Abs(b); err == nil {
			b = abs
		}
	}
	da := strings.Split(filepath.Dir(filepath.Clean(a)), string(filepath.Separator))
	db := strings.Split(filepath.Dir(filepath.Clean(b)), string(filepath.Separator))
	n := 0
	for n < len(da) && n < len(db) && da[n] == db[n] {
		n++
	}
	dir := strings.Join(da[:n], string(filepath.Separator))
	switch {
	case dir == "" && n > 0: // both start at the root
		return string(filepath.Separator)
	case dir == "":
		return "."
	}
	return dir
}

// unwrapPathError drops the *fs.PathError wrapper whose path we already
// print.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ingestFiles ingests the files in batches (one transaction each, cut at
// kb.BatchFiles files or kb.BatchBytes bytes; for small files that is
// several times faster than a transaction per file), reports failures on
// stderr as they happen, and on stdout each document that replaced an
// older version (which is gone) and one summary line.
func ingestFiles(cmd *cobra.Command, k *kb.KB, files []inputFile, failures []error) error {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	walkFailures := len(failures)
	for _, err := range failures {
		fmt.Fprintln(stderr, "agentapp: error:", err)
	}
	var bar *progressBar
	if len(files) >= progressMinFiles && canRedraw(stderr) {
		bar = &progressBar{w: stderr, total: len(files)}
	}
	fail := func(err error) {
		bar.clear()
		fmt.Fprintln(stderr, "agentapp: error:", err)
		failures = append(failures, err)
	}
	stdout := cmd.OutOrStdout()
	ingested, replaced, unchanged, done := 0, 0, 0, 0
	var batch []kb.File
	size := 0
	// full is the error of a batch the disk had no room for: the ingest
	// stops there, since every later batch would fail the same way.
	var full error
	flush := func() {
		if len(batch) == 0 {
			return
		}
		results, errs := k.IngestBatch(ctx, batch)
		for _, err := range errs {
			if store.IsDiskFull(err) {
				full = err
				batch, size = batch[:0], 0
				return
			}
		}
		for i, err := range errs {
			var conflict *kb.ConflictError
			switch {
			case errors.As(err, &conflict):
				fail(fmt.Errorf("%w; ingest the folder that holds both (agentapp kb ingest %s) so that each keeps its own path, or remove the stored one first (agentapp kb rm %s) if this file should take its place",
					err, commonDir(conflict.Source, conflict.NewSource), conflict.ID))
			case err != nil:
				fail(err)
			case results[i].Status == kb.StatusUnchanged:
				unchanged++
			case results[i].Status == kb.StatusReplaced:
				bar.clear()
				fmt.Fprintf(stdout, "%s: replaced %s with %s\n", batch[i].Source, results[i].ReplacedID, results[i].Doc.ID)
				ingested++
				replaced++
			default:
				ingested++
			}
		}
		done += len(batch)
		bar.show(done, batch[len(batch)-1].Source)
		batch, size = batch[:0], 0
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			bar.clear()
			return err
		}
		data, err := os.ReadFile(f.src)
		if err != nil {
			fail(fmt.Errorf("%s: %w", f.src, unwrapPathError(err)))
			done++
			continue
		}
		batch = append(batch, kb.File{Name: f.path, Data: data, Source: f.src})
		size += len(data)
		if len(batch) >= kb.BatchFiles || size >= kb.BatchBytes {
			flush()
		}
		if full != nil {
			break
		}
	}
	flush()
	bar.clear()
	if full != nil {
		// Give the log's space back, so that `kb rm` can free more.
		if err := k.Checkpoint(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintln(stderr, "agentapp: warning: the database's log could not be truncated:", err)
		}
		fmt.Fprintf(stdout, "ingested %d, unchanged %d, failed %d\n", ingested, unchanged, len(failures))
		return &exitError{code: 1, err: fmt.Errorf("the disk is full (%s): stopped after %d of %d files; the documents stored so far are kept, the batch that did not fit was not stored. Free some space (agentapp kb rm ID removes a document) and run the same command again: what is stored already is left as it is", store.Cause(full), done, len(files))}
	}
	if ingested > 0 {
		if err := k.Optimize(ctx); err != nil {
			return err
		}
	}
	summary := fmt.Sprintf("ingested %d", ingested)
	if replaced > 0 {
		summary += fmt.Sprintf(" (%d replaced)", replaced)
	}
	fmt.Fprintf(stdout, "%s, unchanged %d, failed %d\n", summary, unchanged, len(failures))
	if len(failures) > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %d paths could not be ingested (listed above)", len(failures), len(files)+walkFailures)}
	}
	return nil
}

// progressBar draws "[=====     ] 12/40 name" on one terminal line. A nil
// bar draws nothing, so callers need not check.
type progressBar struct {
	w     io.Writer
	total int
	drawn bool
}

func (p *progressBar) show(done int, name string) {
	if p == nil {
		return
	}
	const width = 30
	fill := width * done / p.total
	name = filepath.Base(name)
	if utf8.RuneCountInString(name) > 30 {
		name = "…" + string([]rune(name)[utf8.RuneCountInString(name)-29:])
	}
	fmt.Fprintf(p.w, "\r\033[K[%s%s] %d/%d %s", strings.Repeat("=", fill), strings.Repeat(" ", width-fill), done, p.total, name)
	p.drawn = true
}

func (p *progressBar) clear() {
	if p == nil || !p.drawn {
		return
	}
	fmt.Fprint(p.w, "\r\033[K")
	p.drawn = false
}

// canRedraw reports whether w is a terminal on which a progress bar that
// redraws its line makes sense: a dumb terminal cannot erase a line.
func canRedraw(w io.Writer) bool {
	return term.IsTerminal(w) && os.Getenv("TERM") != "dumb"
}

func newKBListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the documents",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withKB(cmd, func(k *kb.KB) error {
				docs, err := k.List(cmd.Context())
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if asJSON {
					return writeJSON(out, docs)
				}
				if len(docs) == 0 {
					fmt.Fprintln(out, "The knowledge base is empty; add documents with `agentapp kb ingest FILE|DIR`.")
					return nil
				}
				rows := [][]string{{"ID", "TITLE", "CHUNKS", "SIZE", "DATE"}}
				for _, d := range docs {
					rows = append(rows, []string{d.ID, d.Title, strconv.Itoa(d.Chunks), humanSize(d.Bytes), d.IngestedAt.Local().Format("2006-01-02 15:04")})
				}
				writeTable(out, rows)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

// writeTable prints rows as columns two spaces apart. Unlike text/tabwriter
// it measures display width, so Chinese titles (two columns per character)
// stay aligned.
func writeTable(w io.Writer, rows [][]string) {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-displayWidth(c)+2))
			}
		}
		fmt.Fprintln(w, b.String())
	}
}

// displayWidth is the number of terminal columns s takes: East Asian wide
// and full-width characters take two.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Han, r), unicode.Is(unicode.Hiragana, r), unicode.Is(unicode.Katakana, r),
			unicode.Is(unicode.Hangul, r), r >= 0x3000 && r <= 0x303F, r >= 0xFF00 && r <= 0xFF60, r >= 0xFFE0 && r <= 0xFFE6:
			n += 2
		default:
			n++
		}
	}
	return n
}

// humanSize formats a byte count as B, KB or MB.
func humanSize(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
}

func newKBShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show DOC",
		Short: "Print a document's full text (DOC: its id, the start of its id, or its path)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withKB(cmd, func(k *kb.KB) error {
				d, err := resolveDoc(cmd, k, args[0])
				if err != nil {
					return err
				}
				_, text, err := k.Text(cmd.Context(), d.ID)
				if err != nil {
					return notFoundHint(err)
				}
				out := cmd.OutOrStdout()
				fmt.Fprint(out, text)
				if !strings.HasSuffix(text, "\n") {
					fmt.Fprintln(out)
				}
				return nil
			})
		},
	}
}

func newKBRmCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "rm DOC",
		Short: "Remove a document (DOC: its id, the start of its id, or its path)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withKB(cmd, func(k *kb.KB) error {
				d, err := resolveDoc(cmd, k, args[0])
				if err != nil {
					return err
				}
				if err := k.Remove(cmd.Context(), d.ID); err != nil {
					return notFoundHint(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", d.ID)
				return nil
			})
		},
	}
}

// searchJSON is the --json output of `kb search`: the hits with their
// plain text (the tool's fences are for models, not scripts).
type searchJSON struct {
	Query string   `json:"query"`
	Hits  []kb.Hit `json:"hits"`
}

func newKBSearchCmd() *cobra.Command {
	var n int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search the knowledge base",
		Long: `Search the knowledge base the way the assistant does. The query is plain text
in Chinese or English; several arguments are joined with spaces.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			query := strings.Join(args, " ")
			if err := kb.CheckQuery(query); err != nil {
				return err
			}
			if err := kb.CheckK(n); err != nil {
				return fmt.Errorf("-k: %w", err)
			}
			return withKB(cmd, func(k *kb.KB) error {
				hits, err := k.Search(cmd.Context(), query, n)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if asJSON {
					return writeJSON(out, searchJSON{Query: query, Hits: hits})
				}
				if len(hits) == 0 {
					fmt.Fprintf(out, "No hits for %q.\n", query)
					return nil
				}
				for i, h := range hits {
					if i > 0 {
						fmt.Fprintln(out)
					}
					fmt.Fprintf(out, "[%d] %s  (%s, score %.4g)\n    %s\n", h.No, h.Title, h.DocID, h.Score, kb.Snippet(h.Text, query, 160))
				}
				return nil
			})
		},
	}
	cmd.Flags().IntVarP(&n, "k", "k", kb.DefaultK, fmt.Sprintf("number of hits (1 to %d)", kb.MaxK))
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
