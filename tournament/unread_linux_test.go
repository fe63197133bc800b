package tournament

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
)

// lateHandler is a seat whose first moves reach the referee only after the
// clock ran out, though they arrived in time: a server whose reader
// goroutine runs late on a loaded machine.
type lateHandler struct {
	engines.Seat
	late  time.Duration // after the line arrived
	moves int           // moves to hold back
}

func (s *lateHandler) Listen(handle func(engines.Action)) {
	s.Seat.Listen(func(ev engines.Action) {
		if ev.Kind == engines.Attempt && s.moves > 0 {
			s.moves--
			time.Sleep(time.Until(ev.At.Add(s.late)))
		}
		handle(ev)
	})
}

func (s *lateHandler) Unread(wake func()) bool {
	u, ok := s.Seat.(engines.Unread)
	return ok && u.Unread(wake)
}

// A move that reached the server in time is not flagged because the server
// read it late: the clock waits for input it has received and not yet
// judged (engines.Unread), and charges the time the move arrived.
func TestMoveArrivedInTimeIsNotFlagged(t *testing.T) {
	script, _ := scriptedGame(rand.New(rand.NewPCG(5, 6)))
	// Black's first three moves are judged 120 ms after they arrived, on a
	// 100 ms clock: 20 ms after the deadline, well within the wait.
	ref, out := refereeScripted(t, script, Settings{Game: "othello", MoveTimeMS: 100, MaxTimeouts: 1000}, func(seats *[2]engines.Seat) {
		seats[0] = &lateHandler{Seat: seats[0], late: 120 * time.Millisecond, moves: 3}
	})
	if out.Reason != games.ReasonNormal {
		t.Fatalf("the game ended by %s (%s), want a normal end", out.Reason, out.Cause)
	}
	for _, m := range ref.Moves()[:6] {
		if m.Auto {
			t.Errorf("move %+v was the server's: the engine's move, in time, was flagged", m)
		}
	}
}
