package gomoku

import (
	"fmt"
	"github.com/taikai-dev/taikai/games"
	"strings"
)

// Board is an N x N position. The zero value is a board of size 0; use NewBoard.
// The cells live in a fixed array so that Clone and the renju look-ahead copy
// it without allocating.
type Board struct {
	size   int
	stones int
	cells  [MaxSize * MaxSize]games.Color // index y*size + x
}

// NewBoard returns an empty board of the given size (MinSize..MaxSize).
func NewBoard(size int) (*Board, error) {
	if size < MinSize || size > MaxSize {
		return nil, fmt.Errorf("board size %d: want %d to %d", size, MinSize, MaxSize)
	}
	return &Board{size: size}, nil
}

// Size returns N.
func (b *Board) Size() int { return b.size }

// On reports whether (x,y) lies on the board.
func (b *Board) On(x, y int) bool { return uint(x) < uint(b.size) && uint(y) < uint(b.size) }

// At returns the stone on (x,y), Empty when the point is off the board.
func (b *Board) At(x, y int) games.Color {
	if !b.On(x, y) {
		return Empty
	}
	return b.cells[y*b.size+x]
}

// at is At with the edge as a wall, for line scans.
func (b *Board) at(x, y int) games.Color {
	if !b.On(x, y) {
		return wall
	}
	return b.cells[y*b.size+x]
}

// Clone returns an independent copy.
func (b *Board) Clone() *Board {
	c := *b
	return &c
}

// Stones returns the number of stones on the board.
func (b *Board) Stones() int { return b.stones }

// Full reports whether no empty point is left.
func (b *Board) Full() bool { return b.stones == b.size*b.size }

// Put sets (x,y) to s (Empty clears it) without any rule check, for setting up
// positions and for engines that search by placing and taking back stones. It
// panics when the point is off the board or s is not a stone value.
func (b *Board) Put(s games.Color, x, y int) {
	if !b.On(x, y) {
		panic(fmt.Sprintf("gomoku: Put(%v, %d, %d) off a %dx%d board", s, x, y, b.size, b.size))
	}
	if s != Empty && s != Black && s != White {
		panic(fmt.Sprintf("gomoku: Put(%d) is not a stone", int8(s)))
	}
	i := y*b.size + x
	switch {
	case b.cells[i] == Empty && s != Empty:
		b.stones++
	case b.cells[i] != Empty && s == Empty:
		b.stones--
	}
	b.cells[i] = s
}

// String draws the board one row per line, top row first: '.' empty, 'X' black,
// 'O' white.
func (b *Board) String() string {
	var sb strings.Builder
	sb.Grow(b.size * (b.size + 1))
	for y := range b.size {
		for x := range b.size {
			switch b.cells[y*b.size+x] {
			case Black:
				sb.WriteByte('X')
			case White:
				sb.WriteByte('O')
			default:
				sb.WriteByte('.')
			}
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// Check reports whether s may be placed on (x,y) under r.
func (b *Board) Check(r Rule, s games.Color, x, y int) games.Refusal {
	switch {
	case !b.On(x, y):
		return games.OffBoard
	case b.cells[y*b.size+x] != Empty:
		return games.Occupied
	case b.forbidden(r, s, x, y):
		return games.Forbidden
	}
	return games.Allowed
}

// Foul says which pattern forbids s the empty point (x,y) under r: NoFoul
// for a point that is not forbidden (or not empty, or off the board).
func (b *Board) Foul(r Rule, s games.Color, x, y int) Foul {
	if !b.On(x, y) || b.At(x, y) != Empty {
		return NoFoul
	}
	return b.foul(r, s, x, y)
}

// games.Forbidden reports whether the empty point (x,y) is forbidden for s under r.
// It is false for an occupied or off-board point, which Check reports instead.
func (b *Board) Forbidden(r Rule, s games.Color, x, y int) bool {
	if b.At(x, y) != Empty || !b.On(x, y) {
		return false
	}
	return b.forbidden(r, s, x, y)
}

// Wins reports whether s placed on the empty point (x,y) makes a winning five
// under r. It does not ask whether the move is allowed: under every rule a
// winning five is.
func (b *Board) Wins(r Rule, s games.Color, x, y int) bool {
	if !b.On(x, y) || b.cells[y*b.size+x] != Empty || s != Black && s != White {
		return false
	}
	g := goalOf(r, s)
	for _, d := range dirs {
		if g.five(b.run(s, x, y, d)) {
			return true
		}
	}
	return false
}

func (b *Board) forbidden(r Rule, s games.Color, x, y int) bool {
	return b.foul(r, s, x, y) != NoFoul
}

func (b *Board) foul(r Rule, s games.Color, x, y int) Foul {
	switch {
	case r == Seed && (s == Black || s == White):
		if b.doubleThree(s, x, y) {
			return DoubleThree
		}
	case r == Renju && s == Black:
		return b.renjuForbidden(x, y, false)
	}
	return NoFoul
}

// run returns the length of the line of s through (x,y) in direction d,
// counting (x,y) itself as s whatever it holds.
func (b *Board) run(s games.Color, x, y int, d dir) int {
	n := 1
	for i := 1; b.at(x+i*d.dx, y+i*d.dy) == s; i++ {
		n++
	}
	for i := 1; b.at(x-i*d.dx, y-i*d.dy) == s; i++ {
		n++
	}
	return n
}
