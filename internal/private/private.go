// Package private keeps agentapp's files readable by their owner only. The
// data directory holds chat transcripts, customer records, the line
// history and the audit log: nothing another local user should read.
//
// A mode given when a file is created applies only to a new file, and some
// files are created by libraries that pass 0666 (SQLite, readline), so
// callers create the file first and tighten what already exists.
package private

import (
	"fmt"
	"io/fs"
	"os"
)

// groupOther are the permission bits of everyone but the owner.
const groupOther fs.FileMode = 0o077

// CreateFile creates path with mode 0600 if it does not exist, and removes
// the group and other permissions of an existing file (one made by an
// older version, or by hand).
func CreateFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err == nil && fi.Mode().Perm()&groupOther != 0 {
		err = f.Chmod(fi.Mode().Perm() &^ groupOther)
		if err != nil {
			err = fmt.Errorf("restrict the mode of %s to its owner: %w", path, err)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Restrict removes the group and other permissions of path, a file or a
// directory, if it has any. A path that does not exist is not an error:
// for files such as SQLite's -wal there is nothing to protect yet.
func Restrict(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	if fi.Mode().Perm()&groupOther == 0 {
		return nil
	}
	if err := os.Chmod(path, fi.Mode().Perm()&^groupOther); err != nil {
		return fmt.Errorf("restrict the mode of %s to its owner: %w", path, err)
	}
	return nil
}
