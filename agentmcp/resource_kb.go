package agentmcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentapp/agentapp/kb"
)

// KBDocs publishes the documents of a knowledge base.
func KBDocs(k *kb.KB) DocStore { return kbDocs{k} }

type kbDocs struct{ k *kb.KB }

func (d kbDocs) ListDocs(ctx context.Context) ([]DocInfo, error) {
	docs, err := d.k.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]DocInfo, len(docs))
	for i, doc := range docs {
		out[i] = docInfo(doc)
	}
	return out, nil
}

func (d kbDocs) ReadDoc(ctx context.Context, id string) (DocInfo, string, error) {
	doc, text, err := d.k.Text(ctx, id)
	if errors.Is(err, kb.ErrNotFound) {
		return DocInfo{}, "", fmt.Errorf("%w: %q", ErrDocNotFound, id)
	}
	if err != nil {
		return DocInfo{}, "", err
	}
	return docInfo(doc), text, nil
}

func docInfo(d kb.Doc) DocInfo {
	return DocInfo{ID: d.ID, Title: d.Title, Source: d.Source, Bytes: int64(d.Bytes)}
}
