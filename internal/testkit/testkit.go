// Package testkit holds the helpers taikai's tests share: what a test needs
// from the machine (skipped here, required under CI=true), a free loopback
// port, whether a process still runs.
package testkit

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// Need skips tb when err says that something it needs (what) is missing on
// this machine, except under CI=true, where CI installs everything and a
// missing thing fails the test instead.
func Need(tb testing.TB, what string, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s is required when CI=true: %v", what, err)
	}
	tb.Skipf("%s unavailable: %v", what, err)
}

// Tool returns the path of the program tool, as Need would have it.
func Tool(tb testing.TB, tool string) string {
	tb.Helper()
	path, err := exec.LookPath(tool)
	Need(tb, tool, err)
	return path
}

// FreePort is a loopback TCP port nothing listens on now.
func FreePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Alive reports whether pid is a running process: it exists and, where
// /proc tells, is neither a zombie (Z: a killed orphan stays one until init
// reaps it, which can take a while) nor dead (X). Without /proc (macOS,
// Windows) it reports false, as the tests that use it expect.
func Alive(pid int) bool {
	if pid <= 0 || !exists(pid) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || (stat[i+2] != 'Z' && stat[i+2] != 'X')
}

// Exists reports whether pid names a process that has not been reaped (a
// zombie too); on Windows, one that has not exited.
func Exists(pid int) bool { return pid > 0 && exists(pid) }

// Tail is the last n bytes of s, marked as cut when it is: for a failure
// message that shows the end of a log.
func Tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
