//go:build !unix

package main

import "errors"

// startSetsidSleeper needs sessions, which only Unix has.
func startSetsidSleeper(string) error { return errors.New("setsid mode needs Unix") }

func startDaemon(string) error { return errors.New("daemon mode needs Unix") }

func daemonFork(string) error { return errors.New("daemon mode needs Unix") }
