//go:build !unix

package main

import "errors"

// startSetsidSleeper needs sessions, which only Unix has.
func startSetsidSleeper(string) error { return errors.New("setsid mode needs Unix") }
