// Package redteam holds the red-team tests of the guards: a hostile MCP
// server, written with the go-sdk for the tests, is connected to the chat
// in memory (mcpclient.ConnectInMemory) and driven through the same wiring
// the command line uses (guard.FromEnv, assistant.LocalTools, chat.New and its
// host.BuildTools), so what passes here is what a user gets. The package
// has no code outside its tests.
package redteam
