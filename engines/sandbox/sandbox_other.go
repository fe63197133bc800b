//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"time"
)

var errUnsupported = errors.New("sandbox: engines can only be sandboxed on Linux")

// Sandbox is one engine process in its sandbox (Linux only).
type Sandbox struct {
	Cmd *exec.Cmd
}

// Available reports that there is no sandbox on this system.
func Available() error { return errUnsupported }

// Check reports that there is no sandbox on this system.
func Check(cfg Config) error { return errUnsupported }

// MaybeHelper does nothing on this system.
func MaybeHelper() {}

// Sweep does nothing on this system.
func Sweep() error { return nil }

// Command fails on this system.
func Command(ctx context.Context, cfg Config, argv ...string) (*Sandbox, error) {
	return nil, errUnsupported
}

// HostGuarantees reports none on this system.
func HostGuarantees() Guarantees { return Guarantees{Reason: errUnsupported.Error()} }

func (s *Sandbox) Start() error             { return errUnsupported }
func (s *Sandbox) Wait() error              { return errUnsupported }
func (s *Sandbox) Stop(grace time.Duration) {}
func (s *Sandbox) Report() Report           { return Report{} }
func (s *Sandbox) OverMemory() bool         { return false }
func (s *Sandbox) Listener() net.Listener   { return nil }
func (s *Sandbox) Pid() int                 { return 0 }
func (s *Sandbox) Done() <-chan struct{}    { return nil }
