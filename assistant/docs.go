package assistant

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentapp/agentapp/kb"
	"github.com/agentapp/agentapp/mcpserver"
)

// Docs publishes the documents of a knowledge base.
func Docs(k *kb.KB) mcpserver.DocStore { return kbDocs{k} }

type kbDocs struct{ k *kb.KB }

func (d kbDocs) ListDocs(ctx context.Context) ([]mcpserver.DocInfo, error) {
	docs, err := d.k.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]mcpserver.DocInfo, len(docs))
	for i, doc := range docs {
		out[i] = docInfo(doc)
	}
	return out, nil
}

func (d kbDocs) ReadDoc(ctx context.Context, id string) (mcpserver.DocInfo, string, error) {
	doc, text, err := d.k.Text(ctx, id)
	if errors.Is(err, kb.ErrNotFound) {
		// Quote, not %q: the id is the client's, and this text may reach
		// it in an error message, which must be JSON.
		return mcpserver.DocInfo{}, "", fmt.Errorf("%w: %s", mcpserver.ErrDocNotFound, mcpserver.Quote(id))
	}
	if err != nil {
		return mcpserver.DocInfo{}, "", err
	}
	return docInfo(doc), text, nil
}

func docInfo(d kb.Doc) mcpserver.DocInfo {
	return mcpserver.DocInfo{ID: d.ID, Title: d.Title, Source: d.Source, Bytes: int64(d.Bytes)}
}
