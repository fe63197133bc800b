package tournament_test

import (
	"errors"
	"fmt"
	"net"
	"os"
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
