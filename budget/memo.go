package budget

import (
	"sync"
	"unsafe"

	"github.com/agentapp/agentapp/model"
)

// Memo remembers estimates the host asks for again and again: long texts
// (a system prompt, a tool result sent on every later call of the turn)
// and tool definitions (about a hundred of them on every request). It is
// keyed by the exact content, never by an id, so an edited text or a
// changed schema is a miss and is counted afresh: a figure can only be
// reused for the very same bytes. It is bounded in entries and in the
// bytes of the keys it holds; when full it starts over (estimates are
// cheap to redo, and starting over keeps the bound strict without
// bookkeeping). Safe for concurrent use.
type Memo struct {
	maxEntries, maxBytes int

	mu    sync.Mutex
	texts map[string]int
	tools map[toolKey]int
	bytes int
}

// toolKey is a tool definition by content. Parameters are held as a
// string copy, so a schema changed in place later cannot match it.
type toolKey struct{ name, description, parameters string }

// MemoOptions bound a Memo. Nil or zero fields mean the defaults.
type MemoOptions struct {
	// MaxEntries caps the texts and tools remembered (default 16384).
	MaxEntries int
	// MaxBytes caps the bytes of the texts and definitions remembered
	// (default 8 MiB).
	MaxBytes int
}

// Memo defaults and the shortest text worth remembering: below it,
// counting is as cheap as looking up.
const (
	defaultMemoEntries = 16384
	defaultMemoBytes   = 8 << 20
	memoMinText        = 64
)

// NewMemo returns an empty memo; o may be nil.
func NewMemo(o *MemoOptions) *Memo {
	m := &Memo{maxEntries: defaultMemoEntries, maxBytes: defaultMemoBytes}
	if o != nil && o.MaxEntries > 0 {
		m.maxEntries = o.MaxEntries
	}
	if o != nil && o.MaxBytes > 0 {
		m.maxBytes = o.MaxBytes
	}
	return m
}

// Len returns how many estimates the memo holds and the bytes of their
// keys.
func (m *Memo) Len() (entries, bytes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.texts) + len(m.tools), m.bytes
}

// makeRoom empties the memo when adding size bytes would pass a bound
// (m.mu held). It reports false for an entry larger than the whole bound,
// which is not kept.
func (m *Memo) makeRoom(size int) bool {
	if size > m.maxBytes {
		return false
	}
	if len(m.texts)+len(m.tools)+1 > m.maxEntries || m.bytes+size > m.maxBytes {
		clear(m.texts)
		clear(m.tools)
		m.bytes = 0
	}
	return true
}

func (m *Memo) text(s string) (int, bool) {
	m.mu.Lock()
	n, ok := m.texts[s]
	m.mu.Unlock()
	return n, ok
}

func (m *Memo) putText(s string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.makeRoom(len(s)) {
		return
	}
	if m.texts == nil {
		m.texts = make(map[string]int)
	}
	if _, ok := m.texts[s]; !ok {
		m.texts[s] = n
		m.bytes += len(s)
	}
}

func (m *Memo) tool(t model.ToolSpec) (int, bool) {
	// The lookup key views the parameters' bytes without copying them;
	// the map compares them by value and keeps nothing of the key.
	k := toolKey{t.Name, t.Description, unsafe.String(unsafe.SliceData(t.Parameters), len(t.Parameters))}
	m.mu.Lock()
	n, ok := m.tools[k]
	m.mu.Unlock()
	return n, ok
}

func (m *Memo) putTool(t model.ToolSpec, n int) {
	size := len(t.Name) + len(t.Description) + len(t.Parameters)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.makeRoom(size) {
		return
	}
	if m.tools == nil {
		m.tools = make(map[toolKey]int)
	}
	k := toolKey{t.Name, t.Description, string(t.Parameters)} // a copy
	if _, ok := m.tools[k]; !ok {
		m.tools[k] = n
		m.bytes += size
	}
}

// WithMemo returns an estimator of the same family that remembers its
// estimates of long texts and of tool definitions in m. The figures are
// the same as without it.
func (e *Estimator) WithMemo(m *Memo) *Estimator {
	c := *e
	c.memo = m
	return &c
}
