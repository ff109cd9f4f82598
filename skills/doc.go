// Package skills is the Agent Skills format as MCP serves it: the
// Skills extension (SEP-2640, io.modelcontextprotocol/skills).
//
// A skill is a folder whose SKILL.md begins with YAML front matter
// naming it. A server publishes each skill as an [Entry]: the URI of its
// SKILL.md, the front matter verbatim, and a complete manifest of its
// files with their sizes and SHA-256 digests. A host builds its registry
// from entries alone, reads files only when a skill is used, and checks
// every file it reads against the entry ([Entry.VerifyFile],
// [Entry.VerifySkillMD]) before the model sees it: the digests make
// what the user approved and what the model receives the same bytes.
//
// The package knows the format and the checks, not the protocol's
// transport: mcpserver serves a [Folder], mcpclient lists and loads.
package skills
