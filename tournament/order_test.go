package tournament

import (
	"testing"
	"time"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/othello"
)

// Lines a client sends in one write after a move are judged in the state the
// referee's answer to that move left: a second PUT after an accepted one is out
// of turn, a PUT after a refused one is a new try. The seat reads the next line
// only once the referee has handled the move.
func TestOthelloBoardPipelinedLines(t *testing.T) {
	g := startGame(t, Settings{Game: "othello"}, boardProtos)
	B, W := g.black, g.white
	b := othello.New()
	B.expect("START 1", boardLine(&b), "TURN 1")
	W.expect("START -1", boardLine(&b), "TURN 1")

	B.sendRaw([]byte("PUT 0 0\nPUT 3 2\nPUT 2 2\n")) // refused, accepted, then out of turn
	B.expect("ERROR 2")
	if _, err := b.Play(othello.At(3, 2)); err != nil {
		t.Fatal(err)
	}
	B.expect(boardLine(&b), "TURN -1", "ERROR 3")
	W.expect(boardLine(&b), "TURN -1")

	W.sendRaw([]byte("PUT 2 2\nSAY done\n"))
	if _, err := b.Play(othello.At(2, 2)); err != nil {
		t.Fatal(err)
	}
	B.expect(boardLine(&b), "TURN 1", "SAY WHITE: done")
	W.expect(boardLine(&b), "TURN 1", "SAY WHITE: done")
	B.expectQuiet(50 * time.Millisecond)

	B.send("CLOSE")
	W.expect("CLOSE")
	g.wait(t)
	v := g.ref.Violations()
	wantViolations(t, "black", v[0], games.Violations{"no_flip": 1, "out_of_turn": 1})
	if len(v[1]) != 0 {
		t.Errorf("white violations %v, want none", v[1])
	}
}

// The same for gomoku-turn: "get" right after an accepted put is out of turn
// and gets no reply.
func TestGomokuTurnPipelinedLines(t *testing.T) {
	g := startGame(t, Settings{Game: "gomoku"}, gomokuProtos)
	B, W := g.black, g.white
	B.expect("your turn")
	B.sendRaw([]byte("put 7 7\nget text\nput 7 7\nput 8 8\n")) // placed, then three lines out of turn
	B.expect("1")
	W.expect("your turn")
	B.expectQuiet(100 * time.Millisecond)   // no reply to lines out of turn
	W.sendRaw([]byte("put 7 7\nput 6 6\n")) // occupied, then placed
	W.expect("2", "1")
	B.expect("your turn")
	B.expectQuiet(50 * time.Millisecond)
	W.send("end")
	out := g.wait(t)
	if out.Winner != games.Black || out.Reason != games.ReasonResign {
		t.Errorf("outcome %+v, want black wins by resign", out)
	}
	v := g.ref.Violations()
	wantViolations(t, "black", v[0], games.Violations{"out_of_turn": 3})
	wantViolations(t, "white", v[1], games.Violations{"occupied": 1})
	if moves := g.ref.Moves(); len(moves) != 2 || moves[1].X != 6 || moves[1].Y != 6 {
		t.Errorf("moves %+v, want (7,7) then (6,6)", moves)
	}
}
