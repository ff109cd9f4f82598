//go:build !unix

package hooks

import "os/exec"

// setGroup leaves the default: the hook itself is killed on cancellation.
func setGroup(*exec.Cmd) {}

func reap(*exec.Cmd) {}
