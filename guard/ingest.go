package guard

import (
	"errors"
	"fmt"
)

// IngestCheck returns the check kb.WithIngestCheck takes. The knowledge
// base hands it the very chunks it would store, so the chunk number in a
// refusal is the one `agentapp kb show` and search hits would have shown;
// the check refuses the whole document at the first chunk holding an
// injection pattern. A phrase that straddles two chunks is found by also
// scanning each pair of neighbours, and is reported at the chunk where it
// ends. Every refusal is written to the audit log.
//
// The check does not depend on any guard switch (see CheckDocument). A nil
// *Guards still checks, without auditing.
func (g *Guards) IngestCheck() func(name string, chunks []string) error {
	return func(name string, chunks []string) error {
		err := g.CheckDocument(name, chunks)
		if err == nil {
			for i := 1; i < len(chunks); i++ {
				if f, ok := Scan(chunks[i-1] + "\n" + chunks[i]); ok {
					err = &InjectionError{Source: "document " + name, Chunk: i + 1, Chunks: len(chunks), Finding: f}
					g.recordIngest(name, err.(*InjectionError))
					break
				}
			}
		}
		var ie *InjectionError
		if errors.As(err, &ie) {
			return &IngestError{InjectionError: *ie}
		}
		return err
	}
}

// recordIngest writes the audit line of a refused document.
func (g *Guards) recordIngest(name string, ie *InjectionError) {
	if g == nil {
		return
	}
	g.audit.Record(Event{Event: EventIngestRejected, Document: name, Chunk: ie.Chunk,
		Reason: "prompt-injection pattern in a document", Pattern: ie.Finding.Pattern, Match: ie.Finding.Match})
}

// IngestError is a document refused at ingest. The knowledge base prefixes
// the refusal with "NAME was refused: ", so the message says only where and
// what: the chunk, the pattern and what to do. errors.As finds the
// *InjectionError inside.
type IngestError struct {
	InjectionError
}

// Error says which chunk holds which pattern and how to get the document
// in.
func (e *IngestError) Error() string {
	return fmt.Sprintf("chunk %d of %d contains a prompt-injection pattern (%s: %q), so the whole document was not ingested; remove or reword that passage and ingest it again",
		e.Chunk, e.Chunks, e.Finding.Pattern, e.Finding.Match)
}

// As lets errors.As find the *InjectionError inside.
func (e *IngestError) As(target any) bool {
	if p, ok := target.(**InjectionError); ok {
		*p = &e.InjectionError
		return true
	}
	return false
}
