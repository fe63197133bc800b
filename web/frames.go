package web

import (
	"strings"

	"github.com/taikai-dev/taikai/engines/protocol"
	"github.com/taikai-dev/taikai/games/gomoku"
	"github.com/taikai-dev/taikai/games/othello"
	"github.com/taikai-dev/taikai/tournament"
)

// frame is the board after a ply, as the dashboard draws it: rows of '.', 'x'
// (black) and 'o' (white), and the stones the ply turned over (Othello).
type frame struct {
	Board   []string `json:"board"`
	Flipped [][2]int `json:"flipped,omitempty"`
}

// replay keeps the position of a game as moves arrive, for live viewers and
// for replays of stored games.
type replay struct {
	game string
	size int
	oth  othello.Board
	gmk  *gomoku.Game
}

func newReplay(game, rule string, size int) *replay {
	r := &replay{game: game, size: size}
	if game == "othello" {
		r.size, r.oth = 8, othello.New()
		return r
	}
	ru, err := gomoku.ParseRule(rule)
	if err != nil {
		ru = gomoku.Freestyle
	}
	if r.gmk, err = gomoku.NewGame(size, ru); err != nil {
		r.gmk, _ = gomoku.NewGame(gomoku.DefaultSize, ru)
		r.size = gomoku.DefaultSize
	}
	return r
}

// apply plays a move and returns the frame after it. A move the rules refuse
// (which the referee never sends) leaves the board as it was.
func (r *replay) apply(m tournament.Move) frame {
	var f frame
	switch {
	case m.Pass:
		if r.game == "othello" {
			_, _ = r.oth.Play(othello.Pass)
		}
	case r.game == "othello":
		if flips, err := r.oth.Play(othello.At(m.X, m.Y)); err == nil {
			for _, s := range othello.Squares(flips) {
				f.Flipped = append(f.Flipped, [2]int{s.X(), s.Y()})
			}
		}
	default:
		r.gmk.Play(m.X, m.Y)
	}
	f.Board = r.rows()
	return f
}

func (r *replay) at(x, y int) int8 {
	if r.game == "othello" {
		return int8(r.oth.At(x, y))
	}
	return int8(r.gmk.Board().At(x, y))
}

func (r *replay) rows() []string {
	rows := make([]string, r.size)
	var sb strings.Builder
	for y := range r.size {
		sb.Reset()
		for x := range r.size {
			switch protocol.Color(r.at(x, y)) {
			case protocol.Black:
				sb.WriteByte('x')
			case protocol.White:
				sb.WriteByte('o')
			default:
				sb.WriteByte('.')
			}
		}
		rows[y] = sb.String()
	}
	return rows
}

// five is the winning line of a Gomoku game, nil otherwise.
func (r *replay) five() [][2]int {
	if r.gmk == nil {
		return nil
	}
	var out [][2]int
	for _, p := range r.gmk.Five() {
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
