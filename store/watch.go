package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// Watch tells whether anything may have been committed to a SQLite
// database since an earlier look, by any connection of any process. It is
// the basis of read caches that must never serve a row that has changed:
// stamp each entry with the Version taken before reading it, and use the
// entry only while Version still returns the same value.
//
// The answer comes from PRAGMA data_version on a connection of the Watch's
// own, outside the pool. SQLite changes that value whenever another
// connection commits; the connection's own commits would not change it, so
// it is opened query-only and can never write. Beginning the read
// transaction that the pragma needs costs nearly as much as a point query
// (two file-lock system calls), so on Linux the Watch also maps the
// database's WAL index (the -shm file) and reads the header that every
// commit rewrites, without a lock or a system call; the pragma is then only
// the fallback where that is not possible. The Watch's connection keeps the
// WAL index in use, so no other connection can delete or reset it while the
// Watch is open.
type Watch struct {
	mu   sync.Mutex // serialises the connection
	conn driver.Conn
	stmt driver.Stmt // PRAGMA data_version
	dest []driver.Value

	hdr   *walIndexHeader // nil: PRAGMA data_version
	unmap func() error

	release func() // forgets the Watch in its Store's list; nil for none
}

// Version identifies the committed state of the database as a Watch saw
// it. Two equal Versions from the same Watch mean that nothing was
// committed between them; different ones mean that something may have
// been.
type Version struct {
	hdr         walIndexHeader
	dataVersion int64
}

// walIndexHeader is the first copy of the WAL index header
// (https://www.sqlite.org/walformat.html#the_wal_index_file_format): 48
// bytes in native byte order, written last by every commit, holding the
// change counter, the last valid frame and the WAL's salts and checksums.
type walIndexHeader [12]uint32

// walIndexVersion is the header's first word in every WAL index SQLite
// writes since 3.7.0.
const walIndexVersion = 3007000

// Watch opens a Watch on the SQLite database. PostgreSQL has no such
// counter: callers read the database every time there. Close the Watch
// when done with it; the Store's Close closes those still open.
func (s *Store) Watch(ctx context.Context) (*Watch, error) {
	if s.Dialect() != SQLite {
		return nil, errors.New("store: a Watch needs SQLite; read the database directly")
	}
	w, err := openWatch(ctx, s.DB.Driver(), s.Path, true)
	if err != nil {
		return nil, err
	}
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	if s.watches == nil {
		s.watches = map[*Watch]struct{}{}
	}
	s.watches[w] = struct{}{}
	w.release = func() {
		s.watchMu.Lock()
		delete(s.watches, w)
		s.watchMu.Unlock()
	}
	return w, nil
}

// openWatch opens a Watch on the database at path through drv; mapIndex
// false keeps it on PRAGMA data_version (for tests of that path).
func openWatch(ctx context.Context, drv driver.Driver, path string, mapIndex bool) (*Watch, error) {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_query_only", "1")
	conn, err := drv.Open("file:" + filepath.ToSlash(path) + "?" + q.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: open the watch connection to %s: %w", path, err)
	}
	w := &Watch{conn: conn, dest: make([]driver.Value, 1)}
	if p, ok := conn.(driver.ConnPrepareContext); ok {
		w.stmt, err = p.PrepareContext(ctx, `PRAGMA data_version`)
	} else {
		w.stmt, err = conn.Prepare(`PRAGMA data_version`)
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("store: prepare the watch query on %s: %w", path, err)
	}
	// The first read opens the WAL and its index, which the mapping needs.
	if _, err := w.dataVersion(); err != nil {
		w.Close()
		return nil, fmt.Errorf("store: read the data version of %s: %w", path, err)
	}
	if mapIndex {
		w.hdr, w.unmap = mapWALIndex(path + "-shm")
	}
	return w, nil
}

// Version returns the database's current Version. An error means the
// database could not be asked; treat it as a change.
func (w *Watch) Version() (Version, error) {
	if h := w.hdr; h != nil {
		return Version{hdr: h.load()}, nil
	}
	dv, err := w.dataVersion()
	return Version{dataVersion: dv}, err
}

func (w *Watch) dataVersion() (int64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stmt == nil {
		return 0, errors.New("store: the watch is closed")
	}
	// Not cancellable on purpose: a cancellable context makes the driver
	// start a goroutine per query to watch it.
	rows, err := w.stmt.(driver.StmtQueryContext).QueryContext(context.Background(), nil)
	if err != nil {
		return 0, err
	}
	err = rows.Next(w.dest)
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("PRAGMA data_version returned no row")
	}
	if err != nil {
		return 0, err
	}
	v, ok := w.dest[0].(int64)
	if !ok {
		return 0, fmt.Errorf("PRAGMA data_version returned %T", w.dest[0])
	}
	return v, nil
}

// Close releases the Watch's connection and mapping. It must not run while
// Version may (Version does not lock, so that it stays cheap); Versions
// asked for afterwards are errors.
func (w *Watch) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.release != nil {
		w.release()
		w.release = nil
	}
	var errs []error
	if w.unmap != nil {
		w.hdr = nil
		errs = append(errs, w.unmap())
		w.unmap = nil
	}
	if w.stmt != nil {
		errs = append(errs, w.stmt.Close())
		w.stmt = nil
	}
	if w.conn != nil {
		errs = append(errs, w.conn.Close())
		w.conn = nil
	}
	return errors.Join(errs...)
}

// load reads the header word by word with atomic loads. A commit rewrites
// it while it is read only if that commit has not finished: the mix then
// differs from the Version before it, which costs a cache miss, never a
// stale read.
func (h *walIndexHeader) load() walIndexHeader {
	var v walIndexHeader
	for i := range h {
		v[i] = atomic.LoadUint32(&h[i])
	}
	return v
}
