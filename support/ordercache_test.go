package support_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/store/storetest"
)

// orderWriterEnv turns the test binary into the order-writing child
// process of TestOrderStatusCacheMatchesPlainReads.
const orderWriterEnv = "SUPPORT_TEST_ORDER_WRITER_DIR"

// TestHelperProcessWriteOrders is not a test of its own: run as a child
// process by TestOrderStatusCacheMatchesPlainReads, it opens the data
// directory named by orderWriterEnv and runs one SQL statement per line of
// stdin, printing OK once it has committed.
func TestHelperProcessWriteOrders(t *testing.T) {
	dir := os.Getenv(orderWriterEnv)
	if dir == "" {
		return
	}
	_, st := openService(t, dir)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if _, err := st.DB.Exec(sc.Text()); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		fmt.Println("OK")
	}
}

// TestOrderStatusCacheMatchesPlainReads interleaves changes to the orders
// from the Service's own pool, another store on the same database, another
// process and WAL checkpoints with getOrderStatus calls, and requires every
// result to equal the plain database read made right after it.
func TestOrderStatusCacheMatchesPlainReads(t *testing.T) {
	dir := t.TempDir()
	svc, st := openService(t, dir)
	_, other := openService(t, dir)

	var inChild func(sql string)
	if storetest.Backend() == store.SQLite {
		child := exec.Command(os.Args[0], "-test.run=^TestHelperProcessWriteOrders$", "-test.count=1")
		child.Env = append(os.Environ(), orderWriterEnv+"="+dir)
		var stderr strings.Builder
		child.Stderr = &stderr
		in, err := child.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		outPipe, err := child.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		out := bufio.NewReader(outPipe)
		defer func() {
			in.Close()
			io.Copy(io.Discard, out)
			if err := child.Wait(); err != nil {
				t.Errorf("writer process: %v\n%s", err, stderr.String())
			}
		}()
		inChild = func(sql string) {
			t.Helper()
			if _, err := fmt.Fprintln(in, sql); err != nil {
				t.Fatal(err)
			}
			if line, err := out.ReadString('\n'); err != nil || line != "OK\n" {
				t.Fatalf("writer process answered %q, %v to %s\n%s", line, err, sql, stderr.String())
			}
		}
	} else {
		inChild = func(sql string) {
			t.Helper()
			if _, err := other.DB.Exec(sql); err != nil {
				t.Fatal(err)
			}
		}
	}

	ids := []string{"A-1024", "A-2048", "B-0001", "C-7777"}
	tool := svc.OrderStatusTool()
	ctx := context.Background()
	check := func(round int) {
		t.Helper()
		for range 2 {
			for _, id := range ids {
				got, err := tool.Execute(ctx, json.RawMessage(`{"orderId":"`+id+`"}`))
				if err != nil {
					t.Fatalf("round %d, %s: %v", round, id, err)
				}
				want, err := svc.PlainOrderStatus(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := fmt.Sprintf("%T %s", got, got), fmt.Sprintf("%T %s", want, want); g != w {
					t.Fatalf("round %d, %s: getOrderStatus returned %s, the database has %s", round, id, g, w)
				}
			}
		}
	}
	check(-1)
	if storetest.Backend() == store.SQLite && !svc.OrderCacheEnabled() {
		t.Fatal("getOrderStatus does not cache on SQLite")
	}
	for i := range 48 {
		id := ids[i%len(ids)]
		status := fmt.Sprintf("状态 %d", i)
		update := fmt.Sprintf(`UPDATE support_orders SET status = '%s' WHERE id = '%s'`, status, id)
		var err error
		switch i % 8 {
		case 0:
			_, err = st.DB.Exec(update)
		case 1:
			_, err = other.DB.Exec(update)
		case 2:
			inChild(update)
		case 3: // an order appears, then disappears
			inChild(fmt.Sprintf(`INSERT INTO support_orders (id, status, eta) VALUES ('C-7777', '%s', '明天')`, status))
			check(i)
			_, err = st.DB.Exec(`DELETE FROM support_orders WHERE id = 'C-7777'`)
		case 4:
			if storetest.Backend() == store.SQLite {
				inChild(`PRAGMA wal_checkpoint(TRUNCATE)`)
			}
			inChild(update)
		case 5: // a commit to another table
			_, err = other.DB.Exec(`DELETE FROM support_tickets WHERE id = 'none'`)
		case 6: // nothing
		case 7: // a write inside a transaction that rolls back
			tx, terr := other.DB.Begin()
			if terr != nil {
				t.Fatal(terr)
			}
			if _, err := tx.Exec(update); err != nil {
				t.Fatal(err)
			}
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
		check(i)
	}
}
