//go:build !linux

package protocol

import (
	"time"

	"github.com/taikai-dev/taikai/engines"
)

// kernelClock is Linux's alone: elsewhere a move's time ends when the server
// reads it.
type kernelClock struct{}

func newKernelClock(engines.Stream) *kernelClock { return nil }

func (*kernelClock) Read([]byte) (int, error) { panic("no kernel clock") }
func (*kernelClock) received() time.Time      { return time.Time{} }
func (*kernelClock) unread(func()) bool       { return false }
