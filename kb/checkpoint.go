package kb

import "context"

// Checkpoint gives back the space SQLite's write-ahead log holds (see
// store.Checkpoint): an ingest that stopped on a full disk calls it, so
// that a removal can still be written.
func (k *KB) Checkpoint(ctx context.Context) error { return k.st.Checkpoint(ctx) }
