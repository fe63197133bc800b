package gomoku

import (
	"fmt"

	"github.com/taikai-dev/taikai/games"
)

// Game is a game in progress: a board, a rule, the side to move and the record.
type Game struct {
	board  Board
	rule   Rule
	turn   games.Color
	over   bool
	winner games.Color
	five   []Point
	moves  []Point
}

// NewGame returns an empty board of the given size with black to move.
func NewGame(size int, r Rule) (*Game, error) {
	b, err := NewBoard(size)
	if err != nil {
		return nil, err
	}
	if int(r) >= len(ruleNames) {
		return nil, fmt.Errorf("gomoku rule %v: want seed, freestyle, standard or renju", r)
	}
	return &Game{board: *b, rule: r, turn: Black}, nil
}

// Board returns the live board; callers must not modify it.
func (g *Game) Board() *Board { return &g.board }

// Rule returns the rule set.
func (g *Game) Rule() Rule { return g.rule }

// Turn returns the side to move. It is usually the side that did not move last,
// but a side with no allowed point is skipped (see Play).
func (g *Game) Turn() games.Color { return g.turn }

// Check reports whether the side to move may play (x,y).
func (g *Game) Check(x, y int) games.Refusal {
	if g.over {
		return games.NotYourTurn
	}
	return g.board.Check(g.rule, g.turn, x, y)
}

// Play places a stone for the side to move if Check allows it, and reports the
// verdict; on anything but games.Allowed nothing changes. After the stone the game ends on
// a winning five or a full board. Otherwise the turn passes to the opponent,
// unless every empty point is forbidden for the opponent: then the same side
// moves again, and if neither side has an allowed point the game is a draw (the
// seed server: a draw when neither player has a place to put a stone).
func (g *Game) Play(x, y int) games.Refusal {
	v := g.Check(x, y)
	if v != games.Allowed {
		return v
	}
	s := g.turn
	g.board.Put(s, x, y)
	g.moves = append(g.moves, Point{x, y})
	goal := goalOf(g.rule, s)
	for _, d := range dirs {
		if goal.five(g.board.run(s, x, y, d)) {
			g.over, g.winner = true, s
			g.five = g.board.line(s, x, y, d)
			return games.Allowed
		}
	}
	switch {
	case g.canMove(s.Opponent()):
		g.turn = s.Opponent()
	case g.canMove(s):
	default:
		g.over = true
	}
	return games.Allowed
}

// canMove reports whether s has an allowed point. The scan stops at the first
// one, which is almost always among the first empty points looked at.
func (g *Game) canMove(s games.Color) bool {
	b := &g.board
	if b.Full() {
		return false
	}
	if g.rule == Freestyle || g.rule == Standard || g.rule == Renju && s == White {
		return true
	}
	for i, c := range b.cells[:b.size*b.size] {
		if c == Empty && !b.forbidden(g.rule, s, i%b.size, i/b.size) {
			return true
		}
	}
	return false
}

// line returns the run of s through (x,y) in direction d, from one end to the other.
func (b *Board) line(s games.Color, x, y int, d dir) []Point {
	for b.at(x-d.dx, y-d.dy) == s {
		x, y = x-d.dx, y-d.dy
	}
	var pts []Point
	for ; b.at(x, y) == s; x, y = x+d.dx, y+d.dy {
		pts = append(pts, Point{x, y})
	}
	return pts
}

// Over reports whether the game has ended: a winning five, a full board, or no
// allowed point for either side.
func (g *Game) Over() bool { return g.over }

// Winner returns the side that made a winning five, or Empty while the game goes
// on and after a draw.
func (g *Game) Winner() games.Color { return g.winner }

// Five returns the stones of the winning line (an overline whole where it wins),
// from one end to the other, or nil. When one move makes fives on several lines
// the first of horizontal, vertical, down-right, up-right is given.
func (g *Game) Five() []Point { return append([]Point(nil), g.five...) }

// Moves returns the points played so far, in order. The colour of each is on the
// board: stones are never taken back.
func (g *Game) Moves() []Point { return append([]Point(nil), g.moves...) }

// Allowed appends to dst every point the side to move may play, in raster order
// (index y*N+x), and returns the extended slice; nothing once the game is over.
func (g *Game) Allowed(dst []Point) []Point {
	if g.over {
		return dst
	}
	b := &g.board
	for i, c := range b.cells[:b.size*b.size] {
		if c == Empty && !b.forbidden(g.rule, g.turn, i%b.size, i/b.size) {
			dst = append(dst, Point{i % b.size, i / b.size})
		}
	}
	return dst
}
