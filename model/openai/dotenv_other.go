//go:build !unix

package openai

import "io/fs"

// checkPrivate has no owner or Unix mode to check on this system (see the
// README's Model section): the file is read as it is.
func checkPrivate(string, fs.FileInfo) error { return nil }
