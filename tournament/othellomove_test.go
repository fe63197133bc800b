package tournament

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/othello"
)

var moveProtos = [2]string{"othello-move", "othello-move"}

// expectACK reads "ACK <ms>" and checks that the remaining time went down.
func (c *client) expectACK(prev *int64) {
	c.tb.Helper()
	line, err := c.readLine()
	if err != nil {
		c.tb.Fatalf("%s: want ACK, read error %v", c.name, err)
	}
	m := regexp.MustCompile(`^ACK (-?\d+)\n$`).FindStringSubmatch(line)
	if m == nil {
		c.tb.Fatalf("%s: got %q, want ACK <ms>", c.name, line)
	}
	ms, _ := strconv.ParseInt(m[1], 10, 64)
	if ms > *prev {
		c.tb.Fatalf("%s: ACK %d after %d: remaining time went up", c.name, ms, *prev)
	}
	*prev = ms
}

// The shortest Othello game: after f4 white has no stone, and both must pass.
var shortest = []string{"D3", "C3", "B3", "D2", "E1", "D6", "D7", "E3", "F4"}

// TestOthelloMoveConformance checks every line of PROTOCOLS.md §2 for a whole
// game: OPEN, START with the opponent's name and time, MOVE both ways (either
// case in, upper case out), ACK with the remaining time, the two passes that end
// the game, END DOUBLE_PASS and BYE.
func TestOthelloMoveConformance(t *testing.T) {
	g := startGame(t, Settings{Game: "othello"}, moveProtos)
	B, W := g.black, g.white
	B.send("OPEN alice")
	W.send("OPEN bob")
	B.expect("START BLACK engine-w 600000")
	W.expect("START WHITE engine-b 600000")
	rem := [2]int64{600000, 600000}
	for i, mv := range shortest {
		mover, other := B, W
		if i%2 == 1 {
			mover, other = W, B
		}
		sent := mv
		if i%3 == 1 {
			sent = strings.ToLower(mv) // the coordinate is accepted in either case
		}
		mover.send("MOVE\t" + sent) // tokens may be separated by a tab
		mover.expectACK(&rem[i%2])
		other.expect("MOVE " + mv)
	}
	W.send("")          // empty lines are ignored
	W.send("MOVE PASS") // white has no stone left
	W.expectACK(&rem[1])
	B.expect("MOVE PASS")
	B.send("MOVE PASS") // the second pass ends the game: no ACK, not relayed
	B.expect("END WIN 13 0 DOUBLE_PASS", "BYE engine-b 1 1 0 engine-w -1 0 1")
	W.expect("END LOSE 0 13 DOUBLE_PASS", "BYE engine-w -1 0 1 engine-b 1 1 0")
	B.expectEOF()
	W.expectEOF()
	out := g.wait(t)
	if out.Winner != games.Black || out.Reason != games.ReasonNormal {
		t.Errorf("outcome %+v, want black wins normally", out)
	}
	if n := len(g.ref.Moves()); n != 11 {
		t.Errorf("%d moves recorded, want 9 placements and 2 passes", n)
	}
	if g.ref.Seats[0].Nick() != "alice" || g.ref.Seats[1].Nick() != "bob" {
		t.Errorf("OPEN names %q %q, want alice bob", g.ref.Seats[0].Nick(), g.ref.Seats[1].Nick())
	}
}

func TestOthelloMoveFaults(t *testing.T) {
	open := func(t *testing.T, set Settings) *game {
		g := startGame(t, set, moveProtos)
		g.black.send("OPEN b")
		g.white.send("OPEN w")
		g.black.expect(fmt.Sprintf("START BLACK engine-w %d", g.ref.Clocks[0].total.Milliseconds()))
		g.white.expect(fmt.Sprintf("START WHITE engine-b %d", g.ref.Clocks[1].total.Milliseconds()))
		return g
	}
	ends := func(t *testing.T, g *game, loser games.Color, reason, wire string) {
		t.Helper()
		lose, win := g.black, g.white
		if loser == games.White {
			lose, win = g.white, g.black
		}
		lose.expect("END LOSE 2 2 " + wire)
		win.expect("END WIN 2 2 " + wire)
		for _, c := range []*client{lose, win} {
			line, err := c.readLine()
			if err != nil || !regexp.MustCompile(`^BYE( \S+ -?\d+ \d+ \d+)+\n$`).MatchString(line) {
				t.Errorf("%s: got %q (%v), want BYE", c.name, line, err)
			}
		}
		out := g.wait(t)
		if out.Winner != loser.Opponent() || out.Reason != reason {
			t.Errorf("outcome %+v, want %v to lose by %s", out, loser, reason)
		}
	}
	for _, tc := range []struct {
		name, line, reason, wire string
	}{
		{"illegal move", "MOVE A1", games.ReasonIllegal, "INVALID_MOVE"},
		{"occupied", "MOVE D4", games.ReasonIllegal, "INVALID_MOVE"},
		{"pass with a move", "MOVE PASS", games.ReasonIllegal, "INVALID_MOVE"},
		{"garbage", "HELLO WORLD", games.ReasonIllegal, "INVALID_COMMAND"},
		{"bad coordinate", "MOVE I9", games.ReasonIllegal, "INVALID_COMMAND"},
		{"lower-case keyword", "move d3", games.ReasonIllegal, "INVALID_COMMAND"},
		{"give up", "MOVE GIVEUP", games.ReasonResign, "GIVEUP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := open(t, Settings{Game: "othello"})
			g.black.send(tc.line)
			ends(t, g, games.Black, tc.reason, tc.wire)
		})
	}
	t.Run("move out of turn", func(t *testing.T) {
		g := open(t, Settings{Game: "othello"})
		g.white.send("MOVE D3")
		ends(t, g, games.White, games.ReasonIllegal, "INVALID_COMMAND")
	})
	t.Run("closed socket", func(t *testing.T) {
		g := open(t, Settings{Game: "othello"})
		g.black.c.Close()
		g.white.expect("END WIN 2 2 INVALID_COMMAND")
		out := g.wait(t)
		if out.Winner != games.White || out.Reason != games.ReasonDisconnect {
			t.Errorf("outcome %+v, want white wins by disconnect", out)
		}
	})
	t.Run("out of total time", func(t *testing.T) {
		g := open(t, Settings{Game: "othello", TotalTimeMS: 300, ByoyomiMS: 100})
		ends(t, g, games.Black, games.ReasonTimeout, "TIMEOUT")
	})
	t.Run("byoyomi", func(t *testing.T) {
		// 100 ms total and 300 ms byoyomi: a move after 250 ms is in time, its ACK
		// is negative; the next move gets the byoyomi alone.
		g := open(t, Settings{Game: "othello", TotalTimeMS: 100, ByoyomiMS: 300})
		rem := int64(100)
		time.Sleep(250 * time.Millisecond)
		g.black.send("MOVE D3")
		g.black.expectACK(&rem)
		if rem >= 0 || rem < -300 {
			t.Errorf("ACK %d after 250 ms of a 100 ms clock, want between -300 and 0", rem)
		}
		g.white.expect("MOVE D3")
		g.cancel()
		g.wait(t)
	})
}

// A game between an othello-board client and an othello-move client: each seat
// speaks its own protocol, the server passes for the board client and the move
// client passes itself.
func TestOthelloMixedProtocols(t *testing.T) {
	g := startGame(t, Settings{Game: "othello"}, [2]string{"othello-board", "othello-move"})
	B, W := g.black, g.white
	W.send("OPEN mover")
	b := othello.New()
	B.expect("START 1", boardLine(&b), "TURN 1")
	W.expect("START WHITE engine-b 600000")
	rem := int64(600000)
	for i, mv := range shortest {
		s, _ := othello.ParseSquare(mv)
		b.Play(s)
		if i%2 == 0 {
			B.send(fmt.Sprintf("PUT %d %d", s.X(), s.Y()))
			// After f4 white must pass itself: TURN still names it.
			B.expect(boardLine(&b), "TURN -1")
			W.expect("MOVE " + mv)
		} else {
			W.send("MOVE " + mv)
			W.expectACK(&rem)
			B.expect(boardLine(&b), "TURN 1")
		}
	}
	// White passes; black cannot move either, and the server passes for black
	// without recording it: the game is over.
	W.send("MOVE PASS")
	B.expect(boardLine(&b), "END WIN 13 0 normal")
	W.expect("END LOSE 0 13 DOUBLE_PASS")
	out := g.wait(t)
	if out.Winner != games.Black || out.Reason != games.ReasonNormal {
		t.Errorf("outcome %+v, want black wins normally", out)
	}
}

// The clock an othello-move client is told about is the clock it is judged
// by (issue 16, item 4): START and ACK report a total time, so a per-move
// time (move_time_ms, for the other protocols of a mixed tournament) does not
// apply to it. Black thinks 400 ms with a 150 ms move time and 5 s in all.
func TestOthelloMoveClockIsTheReportedOne(t *testing.T) {
	g := startGame(t, Settings{Game: "othello", MoveTimeMS: 150, TotalTimeMS: 5000}, moveProtos)
	B, W := g.black, g.white
	B.send("OPEN alice")
	W.send("OPEN bob")
	B.expect("START BLACK engine-w 5000")
	W.expect("START WHITE engine-b 5000")
	time.Sleep(400 * time.Millisecond) // longer than the move time, well within the total
	B.send("MOVE D3")
	rem := int64(5000)
	B.expectACK(&rem)
	if rem > 4600 || rem < 0 {
		t.Errorf("ACK %d after 400 ms of 5000: want the total time less what was used", rem)
	}
	W.expect("MOVE D3")
}
