//go:build !unix

package kb

import "time"

// processCPU is not measured here; reportCPU then reports nothing.
func processCPU() time.Duration { return 0 }
