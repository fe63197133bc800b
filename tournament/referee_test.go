package tournament

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/othello"
)

// fakeSeat is an engine played in-process, with no wire and no TCP: the
// referee alone is under test. When it is given the move it answers on a
// goroutine of its own, as an adapter's reader goroutine would.
type fakeSeat struct {
	color  games.Color
	traits engines.Traits
	// choose picks the reply to a position; ok false stays silent.
	choose func(b othello.Board) (m games.Move, ok bool)

	mu      sync.Mutex
	handle  func(engines.Action)
	refused []games.Refusal
	ending  *engines.Ending
	wg      sync.WaitGroup
}

func (s *fakeSeat) Traits() engines.Traits { return s.traits }

func (s *fakeSeat) Listen(handle func(engines.Action)) {
	s.mu.Lock()
	s.handle = handle
	s.mu.Unlock()
}

// emit delivers an event as a reader goroutine does: not inside a call of
// the referee's.
func (s *fakeSeat) emit(ev engines.Action) {
	s.wg.Go(func() {
		s.mu.Lock()
		h := s.handle
		s.mu.Unlock()
		h(ev)
	})
}

// given is told the position and whose turn it is; it answers if it is its own.
func (s *fakeSeat) given(b games.Board, turn games.Color) {
	if turn != s.color {
		return
	}
	var black, white uint64
	for y := range 8 {
		for x := range 8 {
			switch b.At(x, y) {
			case 1:
				black |= 1 << (y*8 + x)
			case -1:
				white |= 1 << (y*8 + x)
			}
		}
	}
	if m, ok := s.choose(othello.FromBitboards(black, white, games.Color(turn))); ok {
		s.emit(engines.Action{Kind: engines.Attempt, Move: m, At: time.Now()})
	}
}

func (s *fakeSeat) Begin(_ context.Context, st engines.Start) error {
	s.given(st.Board, st.Turn)
	return nil
}

func (s *fakeSeat) Update(_ context.Context, u engines.Update) error {
	s.given(u.Board, u.Turn)
	return nil
}

func (s *fakeSeat) Refuse(_ context.Context, _ games.Move, r games.Refusal) error {
	s.mu.Lock()
	s.refused = append(s.refused, r)
	s.mu.Unlock()
	return nil
}

func (s *fakeSeat) Relay(context.Context, games.Color, string, string) error { return nil }
func (s *fakeSeat) OpponentLeft(context.Context) error                       { return nil }

func (s *fakeSeat) End(_ context.Context, e engines.Ending) error {
	s.mu.Lock()
	s.ending = &e
	s.mu.Unlock()
	return nil
}

func (s *fakeSeat) Nick() string { return "" }

func (s *fakeSeat) Close() error {
	s.wg.Wait()
	return nil
}

// randomMove plays a uniformly random legal move, and stays silent when it
// has none (the referee passes for an AutoPass seat).
func randomMove(rng *rand.Rand) func(othello.Board) (games.Move, bool) {
	var mu sync.Mutex
	return func(b othello.Board) (games.Move, bool) {
		legal := othello.Squares(b.Legal())
		if len(legal) == 0 {
			return games.Move{}, false
		}
		mu.Lock()
		s := legal[rng.IntN(len(legal))]
		mu.Unlock()
		return games.Move{X: s.X(), Y: s.Y()}, true
	}
}

// runFake plays a game between two fake seats and returns the outcome.
func runFake(t *testing.T, set Settings, black, white *fakeSeat) (games.Outcome, *Referee) {
	t.Helper()
	if err := set.Validate(); err != nil {
		t.Fatal(err)
	}
	black.color, white.color = games.Black, games.White
	ref := &Referee{
		Settings: set,
		Seats:    [2]engines.Seat{black, white},
		Clocks:   [2]clockSpec{set.clockFor("othello-board"), set.clockFor("othello-board")},
		Names:    [2]string{"b", "w"},
		Rand:     rand.New(rand.NewPCG(1, 2)),
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := ref.Run(ctx)
	black.Close()
	white.Close()
	return out, ref
}

// Two in-process engines play whole games to their normal ends; the referee
// passes for a seat with no move, and both seats are told the result.
func TestRefereeFakeSeats(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 9))
		auto := engines.Traits{AutoPass: true}
		black := &fakeSeat{traits: auto, choose: randomMove(rng)}
		white := &fakeSeat{traits: auto, choose: randomMove(rng)}
		out, ref := runFake(t, Settings{Game: "othello", MoveTimeMS: 60000}, black, white)
		if out.Reason != games.ReasonNormal {
			t.Fatalf("seed %d: outcome %+v, want a normal end", seed, out)
		}
		b, w := ref.Stones()
		if want := games.ResultOf(out.Winner); (b > w) != (want == "black") || (w > b) != (want == "white") {
			t.Errorf("seed %d: %d-%d on the board, result %s", seed, b, w, want)
		}
		placed := 0
		for _, m := range ref.Moves() {
			if !m.Pass {
				placed++
			} else if !m.Auto {
				t.Errorf("seed %d: a pass the server did not make: %+v", seed, m)
			}
		}
		if placed != b+w-4 {
			t.Errorf("seed %d: %d placements for %d stones", seed, placed, b+w)
		}
		for i, s := range []*fakeSeat{black, white} {
			if s.ending == nil || s.ending.Reason != games.ReasonNormal || s.ending.Own+s.ending.Opp != b+w {
				t.Errorf("seed %d: seat %d told %+v", seed, i, s.ending)
			}
		}
	}
}

// A refused move is answered and counted, the clock runs on, and a seat that
// then stays silent loses on time.
func TestRefereeRefusalThenTimeout(t *testing.T) {
	tries := 0
	black := &fakeSeat{choose: func(othello.Board) (games.Move, bool) {
		tries++
		if tries == 1 {
			return games.Move{X: 0, Y: 0}, true // flips nothing
		}
		return games.Move{}, false
	}}
	white := &fakeSeat{choose: func(othello.Board) (games.Move, bool) { return games.Move{}, false }}
	start := time.Now()
	out, ref := runFake(t, Settings{Game: "othello", MoveTimeMS: 200}, black, white)
	if out.Reason != games.ReasonTimeout || out.Loser != games.Black || out.Winner != games.White {
		t.Fatalf("outcome %+v, want black to lose on time", out)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("the game ended after %v, before black's 200 ms were up", d)
	}
	if len(black.refused) != 1 || black.refused[0] != games.NoFlip {
		t.Errorf("refusals %v, want one no_flip", black.refused)
	}
	v := ref.Violations()
	if v[0]["no_flip"] != 1 || v[0]["timeout"] != 1 {
		t.Errorf("black's violations %v, want no_flip 1 and timeout 1", v[0])
	}
	if black.ending == nil || black.ending.Verdict != engines.Lose || white.ending == nil || white.ending.Verdict != engines.Win {
		t.Errorf("endings %+v / %+v", black.ending, white.ending)
	}
}

// A seat whose protocol loses on an illegal move (othello-move) loses at once.
func TestRefereeIllegalLoses(t *testing.T) {
	black := &fakeSeat{traits: engines.Traits{IllegalLoses: true}, choose: func(othello.Board) (games.Move, bool) {
		return games.Move{X: 3, Y: 3}, true // occupied
	}}
	white := &fakeSeat{choose: func(othello.Board) (games.Move, bool) { return games.Move{}, false }}
	out, _ := runFake(t, Settings{Game: "othello", MoveTimeMS: 60000}, black, white)
	if out.Reason != games.ReasonIllegal || out.Cause != games.CauseInvalidMove || out.Loser != games.Black {
		t.Fatalf("outcome %+v, want black to lose by illegal (invalid_move)", out)
	}
}
