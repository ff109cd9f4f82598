//go:build !linux

package supervise

import (
	"errors"
	"fmt"
)

// AdoptOrphans needs Linux's child subreaper; here a bridge stops the
// process group of its server (Unix) or the server process (Windows) only,
// and a helper that left the group is not found.
func AdoptOrphans() error {
	return fmt.Errorf("adopting orphaned processes needs Linux: %w", errors.ErrUnsupported)
}
