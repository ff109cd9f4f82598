package host

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"

	"github.com/agentapp/agentapp/model"
)

// SummaryCache keeps the summaries of folded conversation prefixes for
// conversations that are not stored (Turn.Conversation): a caller of a
// stateless API sends the whole history with every request, and without
// the cache each request folds it again, a model call every time. Keys
// are opaque; an implementation must be safe for concurrent use and
// bounded.
type SummaryCache interface {
	Get(key string) (summary string, ok bool)
	Put(key, summary string)
}

// prefixKeys returns the cache key of every prefix of msgs: keys[i] stands
// for msgs[:i] folded by this host's model within its window. Each key
// chains the previous one, so the whole list costs one pass over the
// messages.
func (h *Host) prefixKeys(msgs []model.Message) []string {
	keys := make([]string, len(msgs)+1)
	sum := sha256.Sum256([]byte("agentapp fold\x00" + h.cfg.Model.Name() + "\x00" + strconv.Itoa(h.window)))
	keys[0] = hex.EncodeToString(sum[:])
	var n [8]byte
	for i, m := range msgs {
		d := sha256.New()
		d.Write(sum[:])
		// Each field is length-prefixed: no two messages hash alike by
		// moving text from one field to the next.
		field := func(s string) {
			binary.BigEndian.PutUint64(n[:], uint64(len(s)))
			d.Write(n[:])
			d.Write([]byte(s))
		}
		field(string(m.Role))
		field(m.Content)
		field(m.ToolCallID)
		field(m.Name)
		for _, c := range m.ToolCalls {
			field(c.ID)
			field(c.Name)
			field(string(c.Arguments))
		}
		d.Sum(sum[:0])
		keys[i+1] = hex.EncodeToString(sum[:])
	}
	return keys
}

// resume starts a conversation's view from the longest prefix whose
// summary the cache holds, so that a request repeating an earlier one's
// history with more turns after it does not fold that history again.
func (p *planner) resume(cache SummaryCache) {
	p.cache = cache
	p.keys = p.h.prefixKeys(p.v.msgs)
	for i := len(p.v.msgs); i > 0; i-- {
		if s, ok := cache.Get(p.keys[i]); ok {
			p.v.summary, p.folded = s, i
			return
		}
	}
}
