package mcpserver

// DocsChanged sends resources/list_changed to every client connected to
// this server, once for changes that come close together (the SDK
// debounces them). Call it when documents were ingested or removed; serve
// calls it for every ingest of any process sharing its PostgreSQL
// database, which tells it through LISTEN/NOTIFY. Only a server built with
// Options.DocsChange promises these notifications and sends them.
func (s *Server) DocsChanged() {
	if s.docs == nil {
		return
	}
	// Registering the template again is a change of the resource list in
	// the SDK's eyes, which notifies every session; the documents
	// themselves are listed afresh from the store on each resources/list.
	s.mcp.AddResourceTemplate(docTemplate(), readDocHandler(s.docs))
}
