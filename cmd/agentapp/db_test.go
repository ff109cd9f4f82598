package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/store/storetest"
	"github.com/agentapp/agentapp/support"
)

func TestDBStatusAndMigrate(t *testing.T) {
	dir := t.TempDir()
	out, _, err := runKBCLI(t, "--data-dir", dir, "db", "status")
	if err != nil {
		t.Fatal(err)
	}
	// A new data dir's components are not behind, only not used yet.
	if !strings.Contains(out, "SQLite ") || !strings.Contains(out, "not created yet (its first use creates it; agentapp db migrate does it now)") || strings.Contains(out, "to apply") {
		t.Errorf("db status of a new data dir:\n%s", out)
	}
	out, _, err = runKBCLI(t, "--data-dir", dir, "db", "migrate")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "to apply") || strings.Count(out, "up to date") != len(components()) {
		t.Errorf("db migrate left steps unapplied:\n%s", out)
	}
}

func TestDBCopyToPostgres(t *testing.T) {
	dst := storetest.NewPostgres(t)
	dir := t.TempDir()
	// A data directory with the demo FAQ, a document of its own and two tickets.
	if _, _, err := runKBCLI(t, "--data-dir", dir, "kb", "search", "住宿标准"); err != nil {
		t.Fatal(err)
	}
	src, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := support.New(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	ctx := agent.WithSession(context.Background(), "copy-test")
	var ids []string
	for _, subj := range []string{"退款", "换货"} {
		raw, _ := json.Marshal(map[string]string{"subject": subj, "description": "订单 A-1024"})
		res, err := svc.CreateTicketTool().Execute(ctx, raw)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.(support.Ticket).TicketID)
	}
	// A chat session with its summary and token totals (chat_context).
	sessions, err := host.OpenSessionStore(context.Background(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sessions.Append(context.Background(), "s-copy", []model.Message{{Role: model.RoleUser, Content: "hi"}, {Role: model.RoleAssistant, Content: "hello"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.DB.Exec(`INSERT INTO chat_context (session_id, summary, folded_seq, input_tokens) VALUES ('s-copy', '- user: earlier', 1, 1234)`); err != nil {
		t.Fatal(err)
	}
	src.Close()
	before, _, err := runKBCLI(t, "--data-dir", dir, "kb", "search", "--json", "lodging standard")
	if err != nil {
		t.Fatal(err)
	}

	out, _, err := runKBCLI(t, "--data-dir", dir, "db", "copy", "--to", dst.URL)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "2 tickets") || !strings.Contains(out, "4 documents") {
		t.Errorf("db copy reported:\n%s", out)
	}
	// The same search on PostgreSQL gives the same hits and scores.
	after, _, err := runKBCLI(t, "--database", dst.URL, "kb", "search", "--json", "lodging standard")
	if err != nil {
		t.Fatal(err)
	}
	if before != after {
		t.Errorf("search differs after the copy:\nSQLite:     %s\nPostgreSQL: %s", before, after)
	}
	// The ticket counter came along: the next ticket continues the sequence.
	pg := dst.Open()
	var summary string
	var input int64
	if err := pg.DB.QueryRow(`SELECT summary, input_tokens FROM chat_context WHERE session_id = 's-copy'`).Scan(&summary, &input); err != nil || summary != "- user: earlier" || input != 1234 {
		t.Errorf("the session's summary and usage after the copy: %q %d %v", summary, input, err)
	}
	svc, err = support.New(context.Background(), pg)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]string{"subject": "投诉", "description": "新的问题"})
	res, err := svc.CreateTicketTool().Execute(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	if id := res.(support.Ticket).TicketID; !strings.HasSuffix(id, "-0003") {
		t.Errorf("first ticket after the copy is %s, want number 0003 (copied: %v)", id, ids)
	}
	// A second copy into the now used database is refused.
	if _, _, err := runKBCLI(t, "--data-dir", dir, "db", "copy", "--to", dst.URL); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("copy into a used database: err = %v", err)
	}
}
