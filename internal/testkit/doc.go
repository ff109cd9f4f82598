// Package testkit holds the helpers that the tests of several agentapp
// packages share, so that each is written (and tested) once instead of
// copied into every package that needs it.
//
// It is an ordinary package, not a _test file, so that any package's tests
// can import it; it lives under internal so that nothing outside the module
// can, and only tests should. It uses the standard library only, which lets
// the tests of every package import it without cycles.
package testkit
