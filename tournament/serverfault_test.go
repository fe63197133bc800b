package tournament_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
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

// Games played by real engines replay under CheckRecord as they were
// stored, and the same game with its winner changed, or a move taken out,
// does not (issue 36, item 4: what a worker hands in is checked so).
func TestCheckRecordRealGames(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	for _, tc := range []struct{ black, white, game string }{
		{"othello-random", "othello-greedy", "othello"},
		{"gomoku-random", "gomoku-threat", "gomoku"},
		{"checkers-random", "checkers-random", "checkers"},
	} {
		set := tournament.Settings{Game: tc.game, MoveTimeMS: 1000, ConnectMS: 20000}
		p := play(t, r, tournament.GameSpec{ID: 1, Black: quickBuiltin(t, tc.black, "", 20), White: quickBuiltin(t, tc.white, "", 20), Settings: set})
		t.Logf("%s: %+v after %d plies", tc.game, p.Outcome, len(p.Moves))
		if err := tournament.CheckRecord(set, p.Record); err != nil {
			t.Errorf("%s: the stored game (%+v, %d plies) does not replay: %v", tc.game, p.Outcome, len(p.Moves), err)
			continue
		}
		if p.Outcome.Reason != games.ReasonNormal || len(p.Moves) < 2 {
			t.Logf("%s: ended %+v after %d plies; not tampered with", tc.game, p.Outcome, len(p.Moves))
			continue
		}
		flipped := p.Record
		flipped.Outcome.Winner = p.Outcome.Winner.Opponent()
		if p.Outcome.Winner == games.None {
			flipped.Outcome.Winner = games.Black
		}
		if tournament.CheckRecord(set, flipped) == nil {
			t.Errorf("%s: the winner changed to %v replays", tc.game, flipped.Outcome.Winner)
		}
		cut := p.Record
		cut.Moves = append(append([]games.Ply{}, p.Moves[:1]...), p.Moves[2:]...)
		if tournament.CheckRecord(set, cut) == nil {
			t.Errorf("%s: a move taken out replays", tc.game)
		}
	}
}

// faultyConn is the server's side of an engine's connection whose socket
// fails, as the kernel fails a server out of memory or buffers: writes
// after the first okWrites, or reads after the first okReads, return err.
type faultyConn struct {
	net.Conn
	okWrites, okReads atomic.Int64
	err               error
}

func (c *faultyConn) Write(b []byte) (int, error) {
	if c.okWrites.Add(-1) < 0 {
		return 0, &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", c.err)}
	}
	return c.Conn.Write(b)
}

func (c *faultyConn) Read(b []byte) (int, error) {
	if c.okReads.Add(-1) < 0 {
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", c.err)}
	}
	return c.Conn.Read(b)
}

// The server failing mid-game (issue 36, item 3), after both engines
// connected: its socket to one engine fails on a write (ENOBUFS) or a read
// (ENOMEM) after a few moves. The game is aborted with cause server, to be
// played again; it is not a disconnect charged to that engine.
func TestServerFaultMidGame(t *testing.T) {
	for _, tc := range []struct {
		what          string
		writes, reads int64
		err           syscall.Errno
	}{
		{"write ENOBUFS", 6, 1 << 30, syscall.ENOBUFS},
		{"read ENOMEM", 1 << 30, 6, syscall.ENOMEM},
	} {
		t.Run(tc.what, func(t *testing.T) {
			r := newRunner(t)
			var first atomic.Pointer[faultyConn]
			r.Launcher.WrapConn = func(c net.Conn) net.Conn {
				f := &faultyConn{Conn: c, err: tc.err}
				f.okWrites.Store(1 << 30)
				f.okReads.Store(1 << 30)
				if first.CompareAndSwap(nil, f) { // the first seat accepted
					f.okWrites.Store(tc.writes)
					f.okReads.Store(tc.reads)
				}
				return f
			}
			set := tournament.Settings{Game: "othello", MoveTimeMS: 2000, ConnectMS: 20000}
			p := play(t, r, tournament.GameSpec{ID: 1, Black: quickBuiltin(t, "othello-random", "", 5), White: quickBuiltin(t, "othello-random", "", 5), Settings: set})
			t.Logf("%s after %d plies: %+v", tc.what, len(p.Moves), p.Outcome)
			if len(p.Moves) == 0 {
				t.Errorf("no move played: the fault came before the game began")
			}
			if p.Outcome.Reason != games.ReasonAborted || p.Outcome.Cause != games.CauseServer {
				t.Errorf("the server's own socket failed mid-game: %+v, want aborted with cause server (played again, never scored)", p.Outcome)
			}
		})
	}
}
