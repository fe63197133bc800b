//go:build !linux

package main

// nonDumpable does nothing here: there is no PR_SET_DUMPABLE (on macOS and
// Windows, other users' processes cannot read the server's memory anyway
// without administrator rights).
func nonDumpable() error { return nil }
