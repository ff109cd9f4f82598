package host

// Source is a passage an answer cites as [No], as the composition's
// Sources hook (Options.Sources) finds it; the host knows no knowledge base.
// Every front end shows sources in this one shape: the chat's JSON output, the chat
// API's done event and the page's history.
//
// A document is listed once, at its first citation: when the answer cites
// two passages of one document ([1] and [3]), the entry is No 1 with Also
// [3], so every [n] of the answer (which is shown as it is streamed, and
// so cannot be renumbered) still finds its entry.
type Source struct {
	No    int    `json:"no"`
	DocID string `json:"docId"`
	Title string `json:"title"`
	// Also are the answer's other citation numbers of this document, in
	// citation order.
	Also []int `json:"also,omitempty"`
}

// Sources lists what answer cites from the turn's tool outputs (in order),
// through the Sources hook of the host's options; never nil, empty when no
// hook is set.
func (h *Host) Sources(answer string, outputs []string) []Source {
	if h.cfg.Sources == nil {
		return []Source{}
	}
	if s := h.cfg.Sources(answer, outputs); s != nil {
		return s
	}
	return []Source{}
}
