package web

import (
	"strings"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament"
)

// frame is the board after a ply, as the dashboard draws it: rows of '.', 'x'
// (black) and 'o' (white), 'X' and 'O' for a promoted piece (a checkers
// king), and the stones the ply turned over (Othello).
type frame struct {
	Board   []string `json:"board"`
	Flipped [][2]int `json:"flipped,omitempty"`
}

// replay keeps the position of a game as moves arrive, for live viewers and
// for replays of stored games. It knows no game by name: the registered
// rules play the moves.
type replay struct {
	rules games.Rules
	size  int
	cells []int8 // the board before the last move, to find what it turned over
}

func newReplay(game, rule string, size int) *replay {
	g, ok := games.Lookup(game)
	if !ok {
		return &replay{size: max(size, 1)}
	}
	rules, err := g.New(rule, size)
	if err != nil {
		// A stored game always had valid settings; fall back to the defaults.
		if rules, err = g.New("", g.Size); err != nil {
			return &replay{size: max(size, 1)}
		}
	}
	return &replay{rules: rules, size: rules.Size()}
}

// apply plays a move and returns the frame after it. A move the rules refuse
// (which the referee never sends) leaves the board as it was. Pieces that
// changed colour are the move's flips (Othello).
func (r *replay) apply(m games.Ply) frame {
	var f frame
	if r.rules == nil {
		f.Board = r.rows()
		return f
	}
	r.cells = r.cells[:0]
	for y := range r.size {
		for x := range r.size {
			r.cells = append(r.cells, r.rules.At(x, y))
		}
	}
	if _, ok := r.rules.Check(m.Move); ok {
		r.rules.Play(m.Move)
	}
	for y := range r.size {
		for x := range r.size {
			if was, now := r.cells[y*r.size+x], r.rules.At(x, y); was*now < 0 {
				f.Flipped = append(f.Flipped, [2]int{x, y})
			}
		}
	}
	f.Board = r.rows()
	return f
}

func (r *replay) at(x, y int) int8 {
	if r.rules == nil {
		return 0
	}
	return r.rules.At(x, y)
}

func (r *replay) rows() []string {
	rows := make([]string, r.size)
	var sb strings.Builder
	for y := range r.size {
		sb.Reset()
		for x := range r.size {
			switch r.at(x, y) {
			case 1:
				sb.WriteByte('x')
			case -1:
				sb.WriteByte('o')
			case 2:
				sb.WriteByte('X')
			case -2:
				sb.WriteByte('O')
			default:
				sb.WriteByte('.')
			}
		}
		rows[y] = sb.String()
	}
	return rows
}

// five is what the rules highlight at the end (Gomoku's five in a row), nil
// otherwise.
func (r *replay) five() [][2]int {
	if r.rules == nil {
		return nil
	}
	var out [][2]int
	for _, p := range r.rules.Highlight() {
		out = append(out, [2]int{p.X, p.Y})
	}
	return out
}

// framesOf replays a stored game: the start position, then one frame per ply.
func framesOf(g *tournament.Game) ([]frame, *replay) {
	r := newReplay(g.Game, g.Rule, g.Size)
	out := make([]frame, 0, len(g.Moves)+1)
	out = append(out, frame{Board: r.rows()})
	for _, m := range g.Moves {
		out = append(out, r.apply(m))
	}
	return out, r
}
