//go:build !linux

package builtin

import (
	"io"
	"net"
)

// blocking is the identity where the Linux version's system calls are missing.
func blocking(conn net.Conn) io.ReadWriteCloser { return conn }
