package tournament

import (
	"errors"
	"math/bits"
	"math/rand/v2"

	"github.com/taikai-dev/taikai/engines/protocol"
	"github.com/taikai-dev/taikai/games/gomoku"
	"github.com/taikai-dev/taikai/games/othello"
)

// rules is what the referee needs of a game: the position, the side to move,
// checking and playing moves, and the end.
type rules interface {
	protocol.Board
	Turn() protocol.Color
	// Check says whether the side to move may make m.
	Check(m protocol.Move) (protocol.Refusal, bool)
	// Play makes a move that Check accepted.
	Play(m protocol.Move)
	// MustPass: the side to move has no placement but the game goes on.
	MustPass() bool
	// CanPass: the side to move has no placement (passing is legal), game over or not.
	CanPass() bool
	// Finished: the position is final (no placement for either side, a five, a full board).
	Finished() bool
	// Winner of a finished position, None for a draw.
	Winner() protocol.Color
	// Stones returns the stones of each colour.
	Stones() (black, white int)
	// Random picks a uniformly random allowed move for the side to move.
	Random(rng *rand.Rand) protocol.Move
}

func newRules(s *Settings) (rules, error) {
	switch s.Game {
	case "othello":
		b := othello.New()
		return &othelloRules{b: b}, nil
	case "gomoku":
		r, err := gomoku.ParseRule(s.Rule)
		if err != nil {
			return nil, err
		}
		g, err := gomoku.NewGame(s.Size, r)
		if err != nil {
			return nil, err
		}
		return &gomokuRules{g: g, turn: protocol.Black}, nil
	}
	return nil, errors.New("unknown game " + s.Game)
}

func parseOrder(s string) (othello.Order, error) { return othello.ParseOrder(s) }

type othelloRules struct{ b othello.Board }

func (r *othelloRules) Size() int { return 8 }

func (r *othelloRules) At(x, y int) int8 { return int8(r.b.At(x, y)) }

func (r *othelloRules) Turn() protocol.Color { return protocol.Color(r.b.Turn()) }

func (r *othelloRules) Check(m protocol.Move) (protocol.Refusal, bool) {
	if m.Pass {
		if r.b.Legal() != 0 {
			return protocol.PassRefused, false
		}
		return 0, true
	}
	if m.X < 0 || m.X > 7 || m.Y < 0 || m.Y > 7 {
		return protocol.OffBoard, false
	}
	if r.b.At(m.X, m.Y) != othello.Empty {
		return protocol.Occupied, false
	}
	if r.b.Flips(othello.At(m.X, m.Y)) == 0 {
		return protocol.NoFlip, false
	}
	return 0, true
}

func (r *othelloRules) Play(m protocol.Move) {
	s := othello.Pass
	if !m.Pass {
		s = othello.At(m.X, m.Y)
	}
	if _, err := r.b.Play(s); err != nil {
		panic("othello: Play after Check: " + err.Error())
	}
}

func (r *othelloRules) MustPass() bool { return r.b.MustPass() }

func (r *othelloRules) CanPass() bool { return r.b.Legal() == 0 }

func (r *othelloRules) Finished() bool { return r.b.Over() }

func (r *othelloRules) Winner() protocol.Color { return protocol.Color(r.b.Winner()) }

func (r *othelloRules) Stones() (int, int) { return r.b.Count() }

func (r *othelloRules) Random(rng *rand.Rand) protocol.Move {
	legal := r.b.Legal()
	if legal == 0 {
		return protocol.PassMove
	}
	n := rng.IntN(bits.OnesCount64(legal))
	for ; n > 0; n-- {
		legal &= legal - 1
	}
	s := othello.Square(bits.TrailingZeros64(legal))
	return protocol.Move{X: s.X(), Y: s.Y()}
}

// gomokuRules keeps its own alternating turn: when the game skips a side that
// has no allowed point (every empty point forbidden for it), the referee
// records a pass for that side, so that stored colours alternate.
type gomokuRules struct {
	g       *gomoku.Game
	turn    protocol.Color
	allowed []gomoku.Point
}

func (r *gomokuRules) Size() int { return r.g.Board().Size() }

func (r *gomokuRules) At(x, y int) int8 { return int8(r.g.Board().At(x, y)) }

func (r *gomokuRules) Turn() protocol.Color {
	if r.g.Over() {
		return protocol.None
	}
	return r.turn
}

func (r *gomokuRules) Check(m protocol.Move) (protocol.Refusal, bool) {
	if m.Pass {
		if r.MustPass() {
			return 0, true
		}
		return protocol.PassRefused, false
	}
	if r.MustPass() {
		return protocol.Forbidden, false
	}
	switch r.g.Check(m.X, m.Y) {
	case gomoku.OK:
		return 0, true
	case gomoku.Occupied:
		return protocol.Occupied, false
	case gomoku.Forbidden:
		return protocol.Forbidden, false
	}
	return protocol.OffBoard, false
}

func (r *gomokuRules) Play(m protocol.Move) {
	if !m.Pass {
		if v := r.g.Play(m.X, m.Y); v != gomoku.OK {
			panic("gomoku: Play after Check: " + v.String())
		}
	}
	r.turn = r.turn.Opponent()
}

// MustPass: the game skipped the side whose turn it would be.
func (r *gomokuRules) MustPass() bool {
	return !r.g.Over() && protocol.Color(r.g.Turn()) != r.turn
}

func (r *gomokuRules) CanPass() bool { return r.MustPass() }

func (r *gomokuRules) Finished() bool { return r.g.Over() }

func (r *gomokuRules) Winner() protocol.Color { return protocol.Color(r.g.Winner()) }

func (r *gomokuRules) Stones() (black, white int) {
	b := r.g.Board()
	for _, p := range r.g.Moves() {
		if b.At(p.X, p.Y) == gomoku.Black {
			black++
		} else {
			white++
		}
	}
	return black, white
}

func (r *gomokuRules) Random(rng *rand.Rand) protocol.Move {
	if r.MustPass() {
		return protocol.PassMove
	}
	r.allowed = r.g.Allowed(r.allowed[:0])
	if len(r.allowed) == 0 {
		return protocol.PassMove
	}
	p := r.allowed[rng.IntN(len(r.allowed))]
	return protocol.Move{X: p.X, Y: p.Y}
}
