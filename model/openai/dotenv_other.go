//go:build !unix

package openai

import "io/fs"

// checkPrivate has no owner or Unix mode to check on this system (see the
// Model section of docs/chat.md): the file is read as it is.
func checkPrivate(string, fs.FileInfo) error { return nil }
