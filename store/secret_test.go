package store_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentapp/agentapp/store/storetest"
)

// TestSecretKeptAndShared: a secret is made once and read back the same
// by every store on the database (replicas), and names do not share one.
func TestSecretKeptAndShared(t *testing.T) {
	d := storetest.New(t)
	a, b := d.Open(), d.Open()
	ctx := context.Background()
	ka, err := a.Secret(ctx, "x")
	if err != nil || len(ka) != 32 {
		t.Fatalf("Secret: %x %v", ka, err)
	}
	kb, err := b.Secret(ctx, "x")
	if err != nil || !bytes.Equal(ka, kb) {
		t.Fatalf("another store on the database: %x %v, want %x", kb, err, ka)
	}
	again, _ := a.Secret(ctx, "x")
	other, _ := a.Secret(ctx, "y")
	if !bytes.Equal(again, ka) || bytes.Equal(other, ka) {
		t.Fatalf("same name %x (want %x), other name %x (want different)", again, ka, other)
	}
}
