package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The knowledge-base documents are published under one resource template.
const (
	// DocURITemplate is the RFC 6570 template of a document's URI.
	DocURITemplate = "docs://kb/{docId}"
	// DocURIPrefix is what every document URI starts with.
	DocURIPrefix = "docs://kb/"
)

// ErrDocNotFound is returned (wrapped) by a DocStore for an unknown id.
var ErrDocNotFound = errors.New("document not found")

// DocInfo describes one document of the knowledge base.
type DocInfo struct {
	// ID is the stable document id, the {docId} of its URI.
	ID string
	// Title is a human-readable title.
	Title string
	// Source is the file name the document was ingested from; its
	// extension decides the MIME type.
	Source string
	// Bytes is the size of the document's text.
	Bytes int64
}

// DocStore is what the server needs from the knowledge base. It is asked
// on every resources/list and resources/read, never cached, so documents
// ingested or removed while the server runs (even by another process) are
// seen at once.
type DocStore interface {
	// ListDocs returns every document, in any order.
	ListDocs(ctx context.Context) ([]DocInfo, error)
	// ReadDoc returns one document and its full text. An unknown id is an
	// error that matches ErrDocNotFound.
	ReadDoc(ctx context.Context, id string) (DocInfo, string, error)
}

// DocURI returns the resource URI of the document with the given id,
// percent-encoding everything but RFC 3986 unreserved characters, as an
// RFC 6570 simple expansion of DocURITemplate would.
func DocURI(id string) string {
	var b strings.Builder
	b.WriteString(DocURIPrefix)
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(id); i++ {
		c := id[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// docIDFromURI extracts the document id from a docs://kb/ URI.
func docIDFromURI(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, DocURIPrefix)
	if !ok || rest == "" {
		return "", false
	}
	id, err := url.PathUnescape(rest)
	if err != nil || id == "" || strings.Contains(id, "/") {
		return "", false
	}
	return id, true
}

// docMIMEType returns the MIME type of a document ingested from source.
func docMIMEType(source string) string {
	if strings.EqualFold(path.Ext(source), ".txt") {
		return "text/plain"
	}
	return "text/markdown"
}

func docTemplate() *mcp.ResourceTemplate {
	return &mcp.ResourceTemplate{
		Name:        "kb-document",
		Title:       "Knowledge-base document",
		URITemplate: DocURITemplate,
		// Plain-text documents are valid Markdown too; each listed
		// resource and each read states its own exact type.
		MIMEType:    "text/markdown",
		Description: "A document of the company knowledge base (policies, FAQ), as full text in its original order. resources/list shows the current documents.",
	}
}

func docResource(d DocInfo) *mcp.Resource {
	title := d.Title
	if title == "" {
		title = d.ID
	}
	desc := "Knowledge-base document"
	if d.Source != "" {
		desc += " ingested from " + d.Source
	}
	return &mcp.Resource{
		URI:         DocURI(d.ID),
		Name:        d.ID,
		Title:       title,
		Description: desc,
		MIMEType:    docMIMEType(d.Source),
		Size:        d.Bytes,
	}
}

// readDocHandler reads one document. The SDK only calls it for URIs that
// match DocURITemplate.
func readDocHandler(docs DocStore) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		id, ok := docIDFromURI(uri)
		if !ok {
			return nil, resourceNotFound(uri)
		}
		d, text, err := docs.ReadDoc(ctx, id)
		if errors.Is(err, ErrDocNotFound) {
			return nil, resourceNotFound(uri)
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", Quote(uri), err)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI:      uri,
			MIMEType: docMIMEType(d.Source),
			Text:     text,
		}}}, nil
	}
}

// resourceNotFound is the error mcp.ResourceNotFoundError returns, with its
// data encoded as JSON: the SDK's writes the URI into the raw data with %q,
// which is not JSON when the URI holds a control character, and an error
// that cannot be encoded cannot be sent.
func resourceNotFound(uri string) error {
	return &jsonrpc.Error{
		Code:    mcp.CodeResourceNotFound,
		Message: "Resource not found",
		Data:    uriData(uri),
	}
}

// uriData is the data of a resource-not-found error: {"uri": uri}, encoded
// as the SDK encodes messages (no HTML escaping).
func uriData(uri string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		URI string `json:"uri"`
	}{uri}) // a struct of one string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// listDocs answers one resources/list page. Documents are ordered by id;
// the cursor is the (encoded) id of the last document of the previous
// page, so a page boundary stays correct when documents are added or
// removed between two pages: nothing is listed twice and nothing that
// existed throughout is skipped.
func listDocs(ctx context.Context, docs DocStore, cursor string, pageSize int) (*mcp.ListResourcesResult, error) {
	after := ""
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil || len(b) == 0 {
			return nil, &jsonrpc.Error{
				Code:    jsonrpc.CodeInvalidParams,
				Message: "invalid resources/list cursor; pass back a nextCursor exactly as received, or omit it to start over",
			}
		}
		after = string(b)
	}
	all, err := docs.ListDocs(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the knowledge-base documents: %w", err)
	}
	slices.SortFunc(all, func(a, b DocInfo) int { return cmp.Compare(a.ID, b.ID) })
	start := 0
	if after != "" {
		start, _ = slices.BinarySearchFunc(all, after, func(d DocInfo, id string) int {
			if d.ID <= id {
				return -1
			}
			return 1
		})
	}
	page := all[start:]
	res := &mcp.ListResourcesResult{
		// The list changes whenever a document is ingested or removed:
		// clients must not cache it.
		Cacheable: mcp.Cacheable{TTLMs: 0, CacheScope: "public"},
		Resources: make([]*mcp.Resource, 0, min(len(page), pageSize)),
	}
	if len(page) > pageSize {
		page = page[:pageSize]
		res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(page[len(page)-1].ID))
	}
	for _, d := range page {
		res.Resources = append(res.Resources, docResource(d))
	}
	return res, nil
}
