//go:build unix

package main

import "syscall"

// processGroup returns our process group id, which tests compare with the
// bridge's.
func processGroup() int { return syscall.Getpgrp() }
