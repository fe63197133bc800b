package tournament

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/othello"
)

var boardProtos = [2]string{"othello-board", "othello-board"}

// TestOthelloBoardConformance drives the othello-board server with two scripted
// clients and checks every line of PROTOCOLS.md §1 byte for byte: START, BOARD
// in column order, TURN, every ERROR, compact PUT, NICK, SAY relay, a forced
// pass, CLOSE and END.
func TestOthelloBoardConformance(t *testing.T) {
	// Black makes 11 refused commands on purpose: raise the limit above that.
	g := startGame(t, Settings{Game: "othello", MaxErrors: 20}, boardProtos)
	B, W := g.black, g.white
	b := othello.New()

	B.send("NICK alice")
	W.send("NICKbob") // the handout's compact form
	B.expect("START 1", boardLine(&b), "TURN 1")
	W.expect("START -1", boardLine(&b), "TURN 1")

	W.send("PUT 2 3") // not white's turn
	W.expect("ERROR 3")
	for _, bad := range []struct{ line, reply string }{
		{"PUT 0 0", "ERROR 2"},  // flips nothing
		{"PUT 8 0", "ERROR 2"},  // off the board
		{"PUT 3 3", "ERROR 2"},  // occupied
		{"PUT -1 4", "ERROR 2"}, // off the board
		{"PUT 3", "ERROR 1"},    // one argument
		{"PUT a b", "ERROR 1"},  // not numbers
		{"PUT 1 2 3", "ERROR 1"},
		{"MOVE 3 2", "ERROR 4"}, // unknown command
		{"put 3 2", "ERROR 4"},  // commands are case-sensitive
		{strings.Repeat("x", 5000), "ERROR 1"},
	} {
		B.send(bad.line)
		B.expect(bad.reply)
	}
	B.send("") // blank lines are ignored
	B.send("SAY hello there")
	B.expect("SAY alice: hello there")
	W.expect("SAY alice: hello there")
	W.send("SAYhi\r") // compact, with a CR that must be ignored
	B.expect("SAY bob: hi")
	W.expect("SAY bob: hi")

	// d3 c3 b3 b2 f5 a3 a1 c1 leaves black without a move: the server passes for it.
	seq := []struct {
		c    *client
		x, y int
	}{{B, 3, 2}, {W, 2, 2}, {B, 1, 2}, {W, 1, 1}, {B, 5, 4}, {W, 0, 2}, {B, 0, 0}, {W, 2, 0}}
	for i, m := range seq {
		if i == 0 {
			m.c.send("PUT32") // compact PUT
		} else {
			m.c.send(fmt.Sprintf("PUT %d %d", m.x, m.y))
		}
		if _, err := b.Play(othello.At(m.x, m.y)); err != nil {
			t.Fatalf("move %d: %v", i, err)
		}
		if b.MustPass() {
			if _, err := b.Play(othello.Pass); err != nil {
				t.Fatal(err)
			}
		}
		turn := fmt.Sprintf("TURN %d", b.Turn())
		B.expect(boardLine(&b), turn)
		W.expect(boardLine(&b), turn)
	}
	if b.Turn() != othello.White {
		t.Fatalf("after c1 the turn should stay with white")
	}
	B.send("PUT 3 5") // black passed, so it is still not its turn
	B.expect("ERROR 3")

	W.send("CLOSE")
	nb, nw := b.Count()
	B.expect("CLOSE", fmt.Sprintf("END WIN %d %d close", nb, nw))
	B.expectEOF()
	W.expectEOF() // the client that closed gets nothing more

	out := g.wait(t)
	if out.Winner != games.Black || out.Reason != games.ReasonClose {
		t.Errorf("outcome = %+v, want black wins by close", out)
	}
	moves := g.ref.Moves()
	if len(moves) != 9 || !moves[8].Pass || !moves[8].Auto || moves[8].Color != games.Black {
		t.Errorf("moves = %+v, want 8 placements then black's automatic pass", moves)
	}
	v := g.ref.Violations()
	wantViolations(t, "black", v[0], games.Violations{"no_flip": 1, "off_board": 2, "occupied": 1, "malformed": 3, "unknown_command": 2, "line_too_long": 1, "out_of_turn": 1})
	wantViolations(t, "white", v[1], games.Violations{"out_of_turn": 1})
}

// autoplay answers every TURN for c's colour with a random legal move and
// returns the final END line (or "" if the connection closed without one).
func autoplay(t *testing.T, c *client, rng *rand.Rand) (end string, sawClose bool) {
	t.Helper()
	var me games.Color
	var cells [64]games.Color
	for {
		line, err := c.readLine()
		if err != nil {
			return "", sawClose
		}
		f := strings.Fields(line)
		switch f[0] {
		case "START":
			n, _ := strconv.Atoi(f[1])
			me = games.Color(n)
		case "BOARD":
			for i := range 64 {
				n, _ := strconv.Atoi(f[i+1])
				cells[i] = games.Color(n)
			}
		case "TURN":
			if n, _ := strconv.Atoi(f[1]); games.Color(n) == me {
				b := othello.FromCells(cells, othello.ColumnMajor, me)
				legal := othello.Squares(b.Legal())
				if len(legal) == 0 {
					t.Errorf("%s: TURN %d with no legal move", c.name, me)
					continue
				}
				s := legal[rng.IntN(len(legal))]
				c.send(fmt.Sprintf("PUT %d %d", s.X(), s.Y()))
			}
		case "CLOSE":
			sawClose = true
		case "END":
			return strings.TrimSpace(line), sawClose
		case "ERROR":
			t.Errorf("%s: legal move refused: %s", c.name, line)
		}
	}
}

// TestOthelloBoardFullGames plays random games to their end and checks the END
// lines against the final board.
func TestOthelloBoardFullGames(t *testing.T) {
	for seed := range uint64(6) {
		g := startGame(t, Settings{Game: "othello"}, boardProtos)
		ends := make(chan string, 2)
		go func() { e, _ := autoplay(t, g.black, rand.New(rand.NewPCG(seed, 1))); ends <- e }()
		go func() { e, _ := autoplay(t, g.white, rand.New(rand.NewPCG(seed, 2))); ends <- e }()
		out := g.wait(t)
		if out.Reason != games.ReasonNormal {
			t.Fatalf("seed %d: reason %q, want normal", seed, out.Reason)
		}
		nb, nw := g.ref.Stones()
		got := map[string]bool{<-ends: true, <-ends: true}
		word := map[games.Color][2]string{games.Black: {"WIN", "LOSE"}, games.White: {"LOSE", "WIN"}, games.None: {"DRAW", "DRAW"}}[out.Winner]
		for _, want := range []string{
			fmt.Sprintf("END %s %d %d normal", word[0], nb, nw),
			fmt.Sprintf("END %s %d %d normal", word[1], nw, nb),
		} {
			if !got[want] {
				t.Errorf("seed %d: END lines %v, missing %q", seed, got, want)
			}
		}
		// Replaying the recorded moves gives the same final board.
		b := othello.New()
		for _, m := range g.ref.Moves() {
			s := othello.Pass
			if !m.Pass {
				s = othello.At(m.X, m.Y)
			}
			if games.Color(b.Turn()) != m.Color {
				t.Fatalf("seed %d: move by %v out of turn", seed, m.Color)
			}
			if _, err := b.Play(s); err != nil {
				t.Fatalf("seed %d: recorded move %v illegal: %v", seed, s, err)
			}
		}
		if rb, rw := b.Count(); rb != nb || rw != nw || !b.Over() {
			t.Errorf("seed %d: replay %d-%d over=%v, referee %d-%d", seed, rb, rw, b.Over(), nb, nw)
		}
	}
}

func TestOthelloBoardFaults(t *testing.T) {
	start := othello.New()
	opening := []string{"START 1", boardLine(&start), "TURN 1"}
	openingW := []string{"START -1", boardLine(&start), "TURN 1"}

	t.Run("max_errors", func(t *testing.T) {
		g := startGame(t, Settings{Game: "othello", MaxErrors: 3}, boardProtos)
		g.black.expect(opening...)
		g.white.expect(openingW...)
		for range 3 {
			g.black.send("HELLO")
			g.black.expect("ERROR 4")
		}
		g.black.send("PUT 0 0") // the fourth refused command is one too many
		g.black.expect("ERROR 2", "END LOSE 2 2 illegal")
		g.white.expect("END WIN 2 2 illegal")
		if out := g.wait(t); out.Winner != games.White || out.Reason != games.ReasonIllegal || out.Cause != games.CauseMaxErrors {
			t.Errorf("outcome %+v, want white wins by illegal (max_errors)", out)
		}
	})
	t.Run("max_errors by a line the protocol refuses", func(t *testing.T) {
		// The adapter answers these itself: the answer still comes before END.
		g := startGame(t, Settings{Game: "othello", MaxErrors: 3}, boardProtos)
		g.black.expect(opening...)
		g.white.expect(openingW...)
		for _, c := range [][2]string{{"HELLO", "ERROR 4"}, {"PUT x y", "ERROR 1"}, {"PUT 0 0", "ERROR 2"}} {
			g.black.send(c[0])
			g.black.expect(c[1])
		}
		g.black.send("HELLO")
		g.black.expect("ERROR 4", "END LOSE 2 2 illegal")
		g.white.expect("END WIN 2 2 illegal")
		if out := g.wait(t); out.Cause != games.CauseMaxErrors {
			t.Errorf("outcome %+v, want white wins by illegal (max_errors)", out)
		}
		wantViolations(t, "black", g.ref.Violations()[0], games.Violations{"unknown_command": 2, "malformed": 1, "no_flip": 1})
	})
	t.Run("timeout", func(t *testing.T) {
		g := startGame(t, Settings{Game: "othello", MoveTimeMS: 300}, boardProtos)
		g.black.expect(opening...)
		g.white.expect(openingW...)
		g.black.expect("END LOSE 2 2 timeout")
		g.white.expect("END WIN 2 2 timeout")
		if out := g.wait(t); out.Winner != games.White || out.Reason != games.ReasonTimeout {
			t.Errorf("outcome %+v, want white wins by timeout", out)
		}
	})
	t.Run("disconnect", func(t *testing.T) {
		g := startGame(t, Settings{Game: "othello"}, boardProtos)
		g.black.expect(opening...)
		g.white.expect(openingW...)
		g.white.c.Close()
		g.black.expect("CLOSE", "END WIN 2 2 disconnect")
		g.black.expectEOF()
		if out := g.wait(t); out.Winner != games.Black || out.Reason != games.ReasonDisconnect {
			t.Errorf("outcome %+v, want black wins by disconnect", out)
		}
	})
	t.Run("flood", func(t *testing.T) {
		g := startGame(t, Settings{Game: "othello"}, boardProtos)
		g.black.expect(opening...)
		g.white.expect(openingW...)
		g.white.sendRaw([]byte(strings.Repeat("SAY x\n", 300)))
		// Black sees the relayed lines until white is cut off.
		for {
			line, err := g.black.readLine()
			if err != nil {
				t.Fatalf("black: %v before CLOSE", err)
			}
			if line == "CLOSE\n" {
				break
			}
			if line != "SAY WHITE: x\n" {
				t.Fatalf("black got %q", line)
			}
		}
		g.black.expect("END WIN 2 2 disconnect")
		out := g.wait(t)
		if out.Winner != games.Black || out.Reason != games.ReasonDisconnect || out.Cause != games.CauseFlood {
			t.Errorf("outcome %+v, want black wins by disconnect (flood)", out)
		}
	})
	t.Run("no newline", func(t *testing.T) {
		g := startGame(t, Settings{Game: "othello"}, boardProtos)
		g.black.expect(opening...)
		g.white.expect(openingW...)
		g.white.sendRaw([]byte(strings.Repeat("y", 70<<10)))
		g.black.expect("CLOSE", "END WIN 2 2 disconnect")
		if out := g.wait(t); out.Cause != games.CauseFlood {
			t.Errorf("outcome %+v, want disconnect by flood", out)
		}
	})
	t.Run("random on timeout", func(t *testing.T) {
		// Black never answers: the server plays for it; three in a row lose.
		g := startGame(t, Settings{Game: "othello", MoveTimeMS: 150, OnTimeout: "random"}, boardProtos)
		ends := make(chan string, 1)
		go func() { e, _ := autoplay(t, g.white, rand.New(rand.NewPCG(9, 9))); ends <- e }()
		var last string
		for {
			line, err := g.black.readLine()
			if err != nil {
				break
			}
			last = line
		}
		out := g.wait(t)
		if out.Winner != games.White || out.Reason != games.ReasonTimeout {
			t.Fatalf("outcome %+v, want white wins by timeout", out)
		}
		if !strings.HasPrefix(last, "END LOSE ") || !strings.HasSuffix(last, " timeout\n") {
			t.Errorf("black's last line %q, want END LOSE ... timeout", last)
		}
		auto := 0
		for _, m := range g.ref.Moves() {
			if m.Auto && m.Color == games.Black {
				auto++
			}
		}
		if auto != 2 || g.ref.Violations()[0]["timeout"] != 3 {
			t.Errorf("black: %d server moves and %d timeouts, want 2 and 3", auto, g.ref.Violations()[0]["timeout"])
		}
		<-ends
	})
	t.Run("slow but in time", func(t *testing.T) {
		g := startGame(t, Settings{Game: "othello", MoveTimeMS: 400}, boardProtos)
		g.black.expect(opening...)
		g.white.expect(openingW...)
		time.Sleep(150 * time.Millisecond)
		g.black.send("PUT 3 2")
		b := othello.New()
		b.Play(othello.At(3, 2))
		g.black.expect(boardLine(&b), "TURN -1")
		g.cancel()
		g.wait(t)
		if ms := g.ref.Moves()[0].MS; ms < 150 || ms > 400 {
			t.Errorf("recorded %d ms for a move sent after 150 ms", ms)
		}
	})
}

// pace_ms holds moves back for viewers without charging anyone's clock.
func TestPace(t *testing.T) {
	g := startGame(t, Settings{Game: "othello", PaceMS: 200}, boardProtos)
	b := othello.New()
	g.black.expect("START 1", boardLine(&b), "TURN 1")
	g.white.expect("START -1", boardLine(&b), "TURN 1")
	sent := time.Now()
	g.black.send("PUT 3 2")
	b.Play(othello.At(3, 2))
	g.black.expect(boardLine(&b), "TURN -1")
	if d := time.Since(sent); d < 150*time.Millisecond {
		t.Errorf("the move was shown after %v, want the 200 ms pace", d)
	}
	g.white.expect(boardLine(&b), "TURN -1")
	g.white.send("PUT 2 2") // answered at once: its clock started when TURN came
	g.cancel()
	g.wait(t)
	if ms := g.ref.Moves()[0].MS; ms > 100 {
		t.Errorf("black was charged %d ms for an instant move: the pause must not count", ms)
	}
}
