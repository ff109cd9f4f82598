//go:build unix

package openai

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkPrivate refuses a .env file that another user owns or that group or
// others may write: whoever can change it can change the base URL the API
// key is sent to.
func checkPrivate(path string, st fs.FileInfo) error {
	if perm := st.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("refusing to read %s: it is writable by group or others (mode %04o), so someone else could point the API key at their own server; make it private with: chmod go-w %s", path, perm, path)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Geteuid(); int(sys.Uid) != uid {
		return fmt.Errorf("refusing to read %s: it belongs to user id %d, not to you (user id %d), so its settings could send the API key to their server; remove it, or take it over with: chown %d %s", path, sys.Uid, uid, uid, path)
	}
	return nil
}
