package tournament

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol/othelloboard"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/othello"
)

// BenchmarkRefereeGame plays a whole othello-board game per iteration over
// loopback TCP between the referee and two in-process clients that answer
// each TURN of their colour from a script at once: the referee's cost per
// move (two board writes, one read, judging the move) without engine
// processes. allocs/op counts the whole game, clients and connections
// included. With GOMAXPROCS=1 ns/move is the CPU a move costs; with more, the
// clients' goroutines share the referee's scheduler as engine processes do
// not. (taikai bench measures what engines feel: whole games, the clock.)
func BenchmarkRefereeGame(b *testing.B) {
	script, plies := scriptedGame(rand.New(rand.NewPCG(1, 2)))
	b.ReportAllocs()
	var moves int
	start := time.Now()
	for b.Loop() {
		moves += playScripted(b, script)
	}
	if moves != b.N*plies {
		b.Fatalf("%d moves in %d games, want %d a game", moves, b.N, plies)
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(moves), "ns/move")
}

// The benchmark's harness, run once in every test run so that it keeps
// working: a scripted game is played to its normal end with every move.
func TestScriptedGame(t *testing.T) {
	script, plies := scriptedGame(rand.New(rand.NewPCG(3, 4)))
	if got := playScripted(t, script); got != plies {
		t.Errorf("%d moves recorded, want %d", got, plies)
	}
}

// scriptedGame plays random legal moves to the end and returns each colour's
// PUT lines in order (passes are the server's) and the number of moves,
// passes included.
func scriptedGame(rng *rand.Rand) (script [2][][]byte, plies int) {
	bd := othello.New()
	for !bd.Over() {
		s := othello.Pass
		if legal := othello.Squares(bd.Legal()); len(legal) > 0 {
			s = legal[rng.IntN(len(legal))]
			i := games.Color(bd.Turn()).Index()
			script[i] = append(script[i], fmt.Appendf(nil, "PUT %d %d\n", s.X(), s.Y()))
		}
		bd.Play(s)
		plies++
	}
	return script, plies
}

// playScripted referees one game between two scripted clients and returns the
// moves it recorded.
func playScripted(tb testing.TB, script [2][][]byte) int {
	ref, out := refereeScripted(tb, script, Settings{Game: "othello", MoveTimeMS: 10000}, nil)
	if out.Reason != games.ReasonNormal {
		tb.Fatalf("scripted game ended by %s", out.Reason)
	}
	return len(ref.Moves())
}

// refereeScripted referees one game under set between two scripted clients
// over loopback TCP, their seats first passed to wrap if it is not nil.
func refereeScripted(tb testing.TB, script [2][][]byte, set Settings, wrap func(*[2]engines.Seat)) (*Referee, games.Outcome) {
	return refereeScriptedConns(tb, script, set, nil, wrap)
}

// refereeScriptedConns is refereeScripted whose server side of seat i's
// connection is conn(i, c) if conn is not nil.
func refereeScriptedConns(tb testing.TB, script [2][][]byte, set Settings, conn func(int, net.Conn) net.Conn, wrap func(*[2]engines.Seat)) (*Referee, games.Outcome) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	var seats [2]engines.Seat
	errs := make(chan error, 2)
	for i := range 2 {
		cc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			tb.Fatal(err)
		}
		defer cc.Close()
		sc, err := ln.Accept()
		if err != nil {
			tb.Fatal(err)
		}
		if conn != nil {
			sc = conn(i, sc)
		}
		seats[i] = othelloboard.New(sc, games.ColorAt(i), othelloboard.Options{})
		turn := fmt.Appendf(nil, "TURN %d", games.ColorAt(i))
		go func() { errs <- answer(cc, turn, script[i]) }()
	}
	if wrap != nil {
		wrap(&seats)
	}
	if err := set.Validate(); err != nil {
		tb.Fatal(err)
	}
	ref := &Referee{Settings: set, Seats: seats, Clocks: [2]clockSpec{set.clockFor("othello-board"), set.clockFor("othello-board")}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out := ref.Run(ctx)
	for _, s := range seats {
		s.Close()
	}
	for range 2 {
		if err := <-errs; err != nil && out.Reason == games.ReasonNormal {
			tb.Fatal(err)
		}
	}
	return ref, out
}

// answer plays one side: every TURN of its colour gets the next scripted move.
func answer(c net.Conn, turn []byte, moves [][]byte) error {
	c.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return nil // the server closed after END
		}
		if !bytes.HasPrefix(line, turn) || len(line) != len(turn)+1 {
			continue
		}
		if len(moves) == 0 {
			return fmt.Errorf("%s with no scripted move left", turn)
		}
		if _, err := c.Write(moves[0]); err != nil {
			return err
		}
		moves = moves[1:]
	}
}
