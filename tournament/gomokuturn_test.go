package tournament

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
)

var gomokuProtos = [2]string{"gomoku-turn", "gomoku-turn"}

// readN reads exactly n raw bytes.
func (c *client) readN(n int) []byte {
	c.tb.Helper()
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, n)
	if _, err := io.ReadFull(c.r, b); err != nil {
		c.tb.Fatalf("%s: read %d bytes: %v", c.name, n, err)
	}
	return b
}

// textBoard is "get text" for a size with the given stones, written from §3.
func textBoard(size int, stones map[[2]int]byte) []string {
	var lines []string
	for y := range size {
		row := []byte(strings.Repeat("+", size))
		for p, c := range stones {
			if p[1] == y {
				row[p[0]] = c
			}
		}
		lines = append(lines, string(row))
	}
	return lines
}

// TestGomokuTurnConformance checks every line and byte of PROTOCOLS.md §3: your
// turn, get text, get bin, put replies 1-4, lines ignored out of turn, end, and
// the closed connections at the end.
func TestGomokuTurnConformance(t *testing.T) {
	g := startGame(t, Settings{Game: "gomoku"}, gomokuProtos)
	B, W := g.black, g.white
	const n = 15
	stones := map[[2]int]byte{}

	B.expect("your turn")
	W.send("get text") // not white's turn: ignored, no reply
	W.send("put 3 3")  // likewise
	// Nothing answers them: wait until they are judged, or black's move could
	// make it white's turn before white's lines are read.
	for _, ev := range g.waitHandled(t, 1, 2) {
		if ev.Kind != engines.Violation || ev.What != "out_of_turn" {
			t.Fatalf("white's line out of turn: event %+v, want an out_of_turn violation", ev)
		}
	}
	B.send("get text")
	B.expect(textBoard(n, stones)...)
	B.send("get bin")
	if got := B.readN(n * n); !bytes.Equal(got, make([]byte, n*n)) {
		t.Fatalf("get bin of the empty board: %v", got)
	}
	B.send("put 7 7")
	B.expect("1")
	stones[[2]int{7, 7}] = '@'
	W.expect("your turn") // the first thing white hears
	for _, bad := range []struct{ line, reply string }{
		{"put 7 7", "2"},  // occupied
		{"put 15 0", "3"}, // off the board
		{"put -1 3", "3"},
		{"put a b", "3"}, // not two integers
		{"put 1", "3"},
	} {
		W.send(bad.line)
		W.expect(bad.reply)
	}
	W.send("hello") // unknown: ignored
	W.send("get bin")
	bin := W.readN(n * n)
	want := make([]byte, n*n)
	want[7*n+7] = 1
	if !bytes.Equal(bin, want) {
		t.Fatalf("get bin after (7,7): got %v", bin)
	}
	W.send("put 8 8")
	W.expect("1")
	stones[[2]int{8, 8}] = 'o'
	B.expect("your turn")
	B.send("get text")
	B.expect(textBoard(n, stones)...)
	B.send("get bin")
	want[8*n+8] = 255
	if got := B.readN(n * n); !bytes.Equal(got, want) {
		t.Fatalf("get bin after (8,8): got %v", got)
	}

	// Build two open twos for black crossing at (4,4): placing there is a
	// double-three, forbidden under the seed rule (reply 4).
	seq := [][2]int{{2, 4}, {0, 14}, {3, 4}, {2, 14}, {4, 2}, {4, 14}, {4, 3}, {6, 14}}
	for i, p := range seq {
		c := []*client{B, W}[i%2]
		c.send(fmt.Sprintf("put %d %d", p[0], p[1]))
		c.expect("1")
		[]*client{B, W}[1-i%2].expect("your turn")
	}
	B.send("put 4 4")
	B.expect("4")
	B.send("put 10 10")
	B.expect("1")
	W.expect("your turn")
	W.send("end") // white resigns: both connections close with nothing sent
	B.expectEOF()
	W.expectEOF()
	out := g.wait(t)
	if out.Winner != games.Black || out.Reason != games.ReasonResign {
		t.Errorf("outcome %+v, want black wins by resign", out)
	}
	v := g.ref.Violations()
	wantViolations(t, "black", v[0], games.Violations{"forbidden": 1})
	wantViolations(t, "white", v[1], games.Violations{"occupied": 1, "off_board": 2, "malformed": 2, "out_of_turn": 2, "unknown_command": 1})
}

func TestGomokuTurnEnds(t *testing.T) {
	play := func(g *game, moves [][2]int) {
		for i, p := range moves {
			c, o := g.black, g.white
			if i%2 == 1 {
				c, o = o, c
			}
			if i == 0 {
				c.expect("your turn")
			}
			c.send(fmt.Sprintf("put %d %d", p[0], p[1]))
			c.expect("1")
			if i < len(moves)-1 {
				o.expect("your turn")
			}
		}
	}
	five := [][2]int{{0, 0}, {0, 5}, {1, 0}, {1, 5}, {2, 0}, {2, 5}, {3, 0}, {3, 5}, {4, 0}}
	t.Run("five", func(t *testing.T) {
		g := startGame(t, Settings{Game: "gomoku"}, gomokuProtos)
		play(g, five)
		g.black.expectEOF()
		g.white.expectEOF()
		if out := g.wait(t); out.Winner != games.Black || out.Reason != games.ReasonNormal {
			t.Errorf("outcome %+v, want black wins normally", out)
		}
	})
	t.Run("end message", func(t *testing.T) {
		g := startGame(t, Settings{Game: "gomoku", Options: map[string]string{"end_message": "true"}, Size: 16}, gomokuProtos)
		play(g, five)
		g.black.expect("end win normal")
		g.white.expect("end lose normal")
		g.black.expectEOF()
	})
	t.Run("disconnect", func(t *testing.T) {
		g := startGame(t, Settings{Game: "gomoku", Options: map[string]string{"end_message": "true"}}, gomokuProtos)
		g.black.expect("your turn")
		g.black.c.Close() // the original server crashed here
		g.white.expect("end win disconnect")
		if out := g.wait(t); out.Winner != games.White || out.Reason != games.ReasonDisconnect {
			t.Errorf("outcome %+v, want white wins by disconnect", out)
		}
	})
	t.Run("silent: placed for, then timeout", func(t *testing.T) {
		g := startGame(t, Settings{Game: "gomoku", MoveTimeMS: 150}, gomokuProtos)
		// White never answers; black plays the first empty point of the board
		// when it is its turn.
		g.black.expect("your turn")
		for {
			g.black.send("get text")
			x, y := -1, -1
			for row := range 15 {
				line, _ := g.black.readLine()
				if i := strings.IndexByte(line, '+'); i >= 0 && x < 0 {
					x, y = i, row
				}
			}
			g.black.send(fmt.Sprintf("put %d %d", x, y))
			g.black.expect("1")
			line, err := g.black.readLine()
			if err != nil {
				break // closed: white lost by its third timeout
			}
			if line != "your turn\n" {
				t.Fatalf("black got %q", line)
			}
		}
		out := g.wait(t)
		if out.Winner != games.Black || out.Reason != games.ReasonTimeout {
			t.Fatalf("outcome %+v, want black wins by timeout", out)
		}
		auto := 0
		for _, m := range g.ref.Moves() {
			if m.Auto {
				auto++
				if m.Color != games.White {
					t.Errorf("auto move %+v for black", m)
				}
			}
		}
		if auto != 2 || g.ref.Violations()[1]["timeout"] != 3 {
			t.Errorf("white: %d placed stones and %d timeouts, want 2 and 3", auto, g.ref.Violations()[1]["timeout"])
		}
	})
	t.Run("forfeit on timeout", func(t *testing.T) {
		g := startGame(t, Settings{Game: "gomoku", MoveTimeMS: 150, OnTimeout: "forfeit", Options: map[string]string{"end_message": "true"}}, gomokuProtos)
		g.black.expect("your turn", "end lose timeout")
		g.white.expect("end win timeout")
	})
}
