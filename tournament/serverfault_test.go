package tournament_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/tournament"
)

// A launch that failed for want of descriptors or memory is the server's
// failure, whatever wraps it; an engine's own failure is not.
func TestServerFault(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("engine x (black): %w", &net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EMFILE)}), true},
		{fmt.Errorf("%w: start x: %w", engines.ErrCrash, &os.PathError{Op: "open", Path: "/log", Err: syscall.ENFILE}), true},
		{fmt.Errorf("%w: start x: %w", engines.ErrCrash, os.NewSyscallError("fork/exec", syscall.ENOMEM)), true},
		{fmt.Errorf("listen on 127.0.0.1:0: %w", &net.OpError{Op: "listen", Err: os.NewSyscallError("socket", syscall.EMFILE)}), true},
		{fmt.Errorf("engine x (black): %w within 10s", engines.ErrNoConnect), false},
		{fmt.Errorf("%w: start x: %w", engines.ErrCrash, &os.PathError{Op: "fork/exec", Path: "./nope", Err: syscall.ENOENT}), false},
		{errors.New("anything"), false},
		{nil, false},
	} {
		if got := tournament.ServerFault(tc.err); got != tc.want {
			t.Errorf("ServerFault(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
