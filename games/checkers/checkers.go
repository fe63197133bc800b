// Package checkers is the game of seed 004: 8x8 checkers under two rule sets,
// the course's ("seed") and English draughts ("english").
//
// The board is the 32 dark squares, numbered 1-32 as in English draughts
// notation: square 1 is the second cell of the top row, 4 the top-right
// corner, 29 the bottom-left corner. In taikai's coordinates (column x from
// the left, row y from the top, 0-based) square n is on row (n-1)/4, and the
// dark cells are those with x+y odd. Black starts on 1-12 (the top three rows)
// and moves down the board, White on 21-32 moving up; Black moves first.
//
// Rules common to both sets: a man moves one square diagonally forward, or
// captures by jumping an adjacent enemy piece diagonally forward onto the
// empty square beyond; capturing is mandatory; a capture goes on with the same
// piece while it can, and every capture sequence is played to its end (any
// sequence, not necessarily the longest). A piece captured during a sequence
// stays on its square until the move ends: it cannot be jumped twice, and no
// jump lands on it.
//
// Seed rules (seed 004, section 2, as the course modified them): a man that
// reaches the far row stays a man (its owner gets the evaluation's 50
// points); the game ends when the side to move has no legal move, and the
// side with the higher Score wins (equal: a draw). Men only move forward, so
// every game ends.
//
// English rules: a man that reaches the far row is crowned a king and its
// move ends there, even in the middle of a capture; kings move and capture
// diagonally backwards too; the side to move with no legal move (no pieces or
// all blocked) loses; the game is a draw after DrawPlies plies in a row with
// no capture and no man moving (the 40-move rule: 40 moves of each side).
package checkers

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/taikai-dev/taikai/games"
)

// Rule is a rule set.
type Rule int8

// The rule sets.
const (
	Seed Rule = iota
	English
)

// String names the rule set as the API does.
func (r Rule) String() string {
	if r == English {
		return "english"
	}
	return "seed"
}

// ParseRule reads "seed" (or "", the default) or "english".
func ParseRule(s string) (Rule, error) {
	switch s {
	case "", "seed":
		return Seed, nil
	case "english":
		return English, nil
	}
	return 0, fmt.Errorf("checkers rule %q: want seed or english", s)
}

// DrawPlies is the English rules' move-count draw: this many plies in a row
// with no capture and no man moving.
const DrawPlies = 80

// MaxPath is the most landings one move can have (one per captured piece).
const MaxPath = 12

// Square is a dark square, 0..31 (its number in the notation minus one).
type Square int8

// NoSquare is off the board.
const NoSquare Square = -1

// SquareAt returns the square at column x, row y, or NoSquare for a light or
// off-board cell.
func SquareAt(x, y int) Square {
	if x < 0 || x > 7 || y < 0 || y > 7 || (x+y)%2 == 0 {
		return NoSquare
	}
	return Square(y*4 + x/2)
}

// X is the square's column.
func (s Square) X() int {
	y := int(s) / 4
	return 2*(int(s)%4) + 1 - y%2
}

// Y is the square's row.
func (s Square) Y() int { return int(s) / 4 }

// String is the square's number, 1..32.
func (s Square) String() string { return strconv.Itoa(int(s) + 1) }

func bit(s Square) uint32 { return 1 << uint(s) }

// Directions: up-left, up-right, down-left, down-right. Black's men move down
// (2, 3), White's up (0, 1).
var (
	step [32][4]Square // the neighbour in a direction
	jump [32][4]Square // the square beyond it
)

func init() {
	dx := [4]int{-1, 1, -1, 1}
	dy := [4]int{-1, -1, 1, 1}
	for s := Square(0); s < 32; s++ {
		for d := range 4 {
			step[s][d] = SquareAt(s.X()+dx[d], s.Y()+dy[d])
			jump[s][d] = SquareAt(s.X()+2*dx[d], s.Y()+2*dy[d])
		}
	}
}

// Rows of each side's men: where they start and the far row they move to.
const (
	topRow    uint32 = 0x0000000f // squares 1-4
	bottomRow uint32 = 0xf0000000 // squares 29-32
)

// Move is a move: the piece on From goes through To[0..N-1]; a capture
// removes the pieces in Captures.
type Move struct {
	From     Square
	N        int8
	To       [MaxPath]Square
	Captures uint32
}

// Dest is where the piece ends.
func (m Move) Dest() Square { return m.To[m.N-1] }

// IsCapture reports whether the move captures.
func (m Move) IsCapture() bool { return m.Captures != 0 }

// String is the move in the notation: "11-15", "22x15x8".
func (m Move) String() string {
	var sb strings.Builder
	sb.WriteString(m.From.String())
	sep := "-"
	if m.IsCapture() {
		sep = "x"
	}
	for i := range m.N {
		sb.WriteString(sep)
		sb.WriteString(m.To[i].String())
	}
	return sb.String()
}

// Position is a position and the side to move.
type Position struct {
	Black, White, Kings uint32 // squares of each side's pieces; which are kings
	Turn                games.Color
	Rule                Rule
	Quiet               int // plies since the last capture or man move (English draw rule)
}

// Start returns the start position under a rule set.
func Start(r Rule) Position {
	return Position{Black: 0x00000fff, White: 0xfff00000, Turn: games.Black, Rule: r}
}

// Size is the board's width (a Position is a games.Board).
func (p *Position) Size() int { return 8 }

// At returns 1 for a black man, 2 for a black king, -1 and -2 for white's,
// 0 for an empty or light cell.
func (p *Position) At(x, y int) int8 {
	s := SquareAt(x, y)
	if s == NoSquare {
		return 0
	}
	var v int8
	switch {
	case p.Black&bit(s) != 0:
		v = 1
	case p.White&bit(s) != 0:
		v = -1
	default:
		return 0
	}
	if p.Kings&bit(s) != 0 {
		v *= 2
	}
	return v
}

// own and enemy are the pieces of the side to move and of the other side.
func (p *Position) own() uint32 {
	if p.Turn == games.Black {
		return p.Black
	}
	return p.White
}

func (p *Position) enemy() uint32 {
	if p.Turn == games.Black {
		return p.White
	}
	return p.Black
}

// dirs returns the directions a piece of the side to move may go.
func (p *Position) dirs(king bool) []int {
	switch {
	case king:
		return allDirs
	case p.Turn == games.Black:
		return downDirs
	}
	return upDirs
}

var (
	allDirs  = []int{0, 1, 2, 3}
	downDirs = []int{2, 3}
	upDirs   = []int{0, 1}
)

// farRow is the row where the side to move's men would crown.
func (p *Position) farRow() uint32 {
	if p.Turn == games.Black {
		return bottomRow
	}
	return topRow
}

// Moves appends the legal moves of the side to move to buf: the captures if
// there is one, else the plain moves. A finished game (Over) may still have
// moves under the English draw rule: ask Over first.
func (p *Position) Moves(buf []Move) []Move {
	buf = buf[:0]
	own, enemy := p.own(), p.enemy()
	occ := p.Black | p.White
	for b := own; b != 0; b &= b - 1 {
		s := Square(bits.TrailingZeros32(b))
		m := Move{From: s}
		buf = p.jumps(buf, s, p.Kings&bit(s) != 0, occ&^bit(s), enemy, m)
	}
	if len(buf) > 0 {
		return buf
	}
	for b := own; b != 0; b &= b - 1 {
		s := Square(bits.TrailingZeros32(b))
		for _, d := range p.dirs(p.Kings&bit(s) != 0) {
			if t := step[s][d]; t != NoSquare && occ&bit(t) == 0 {
				m := Move{From: s, N: 1}
				m.To[0] = t
				buf = append(buf, m)
			}
		}
	}
	return buf
}

// HasCapture reports whether the side to move must capture.
func (p *Position) HasCapture() bool {
	occ := p.Black | p.White
	enemy := p.enemy()
	for b := p.own(); b != 0; b &= b - 1 {
		s := Square(bits.TrailingZeros32(b))
		for _, d := range p.dirs(p.Kings&bit(s) != 0) {
			over, land := step[s][d], jump[s][d]
			if land != NoSquare && enemy&bit(over) != 0 && occ&bit(land) == 0 {
				return true
			}
		}
	}
	return false
}

// jumps appends every complete capture sequence that continues m from the
// square where m now stands (m.From if it has not moved). occ is every
// piece but the moving one; captured pieces stay in occ until the move ends.
func (p *Position) jumps(out []Move, cur Square, king bool, occ, enemy uint32, m Move) []Move {
	found := false
	for _, d := range p.dirs(king) {
		over, land := step[cur][d], jump[cur][d]
		if land == NoSquare || enemy&bit(over) == 0 || m.Captures&bit(over) != 0 || occ&bit(land) != 0 {
			continue
		}
		found = true
		next := m
		next.To[next.N] = land
		next.N++
		next.Captures |= bit(over)
		if !king && p.Rule == English && p.farRow()&bit(land) != 0 {
			out = append(out, next) // crowned: the move ends
			continue
		}
		out = p.jumps(out, land, king, occ, enemy, next)
	}
	if !found && m.N > 0 {
		out = append(out, m)
	}
	return out
}

// Play makes a move (one Moves returned).
func (p *Position) Play(m Move) {
	from, to := bit(m.From), bit(m.Dest())
	king := p.Kings&from != 0
	if p.Turn == games.Black {
		p.Black = p.Black&^from | to
		p.White &^= m.Captures
	} else {
		p.White = p.White&^from | to
		p.Black &^= m.Captures
	}
	p.Kings &^= from | m.Captures
	switch {
	case king:
		p.Kings |= to
	case p.Rule == English && p.farRow()&to != 0:
		p.Kings |= to
	}
	if m.IsCapture() || !king {
		p.Quiet = 0
	} else {
		p.Quiet++
	}
	p.Turn = p.Turn.Opponent()
}

// Over reports whether the game is over: the side to move has no legal move,
// or (English) the move-count draw has come.
func (p *Position) Over() bool {
	if p.Rule == English && p.Quiet >= DrawPlies {
		return true
	}
	var buf [48]Move
	return len(p.Moves(buf[:0])) == 0
}

// Winner of a finished game: under seed rules the higher Score (None if
// equal); under English rules the side not to move, or None for the
// move-count draw.
func (p *Position) Winner() games.Color {
	if p.Rule == Seed {
		b, w := p.Score()
		switch {
		case b > w:
			return games.Black
		case w > b:
			return games.White
		}
		return games.None
	}
	var buf [48]Move
	if p.Quiet >= DrawPlies && len(p.Moves(buf[:0])) > 0 {
		return games.None
	}
	return p.Turn.Opponent()
}

// Count returns the pieces of each side.
func (p *Position) Count() (black, white int) {
	return bits.OnesCount32(p.Black), bits.OnesCount32(p.White)
}

// Perft counts the move paths of the given depth from p.
func Perft(p Position, depth int) int64 {
	if depth == 0 {
		return 1
	}
	if p.Rule == English && p.Quiet >= DrawPlies {
		return 0
	}
	var buf [48]Move
	moves := p.Moves(buf[:0])
	if depth == 1 {
		return int64(len(moves))
	}
	var n int64
	for _, m := range moves {
		q := p
		q.Play(m)
		n += Perft(q, depth-1)
	}
	return n
}

// plainMove reports whether from-to[0] is a step the side to move's piece
// could make if capturing were not mandatory.
func (p *Position) plainMove(from Square, to []Square) bool {
	if len(to) != 1 || p.own()&bit(from) == 0 || (p.Black|p.White)&bit(to[0]) != 0 {
		return false
	}
	for _, d := range p.dirs(p.Kings&bit(from) != 0) {
		if step[from][d] == to[0] {
			return true
		}
	}
	return false
}

// stopsEarly reports whether from along to is the start of a legal capture
// sequence that goes on.
func (p *Position) stopsEarly(from Square, to []Square) bool {
	var buf [48]Move
	for _, m := range p.Moves(buf[:0]) {
		if m.From != from || int(m.N) <= len(to) || !m.IsCapture() {
			continue
		}
		same := true
		for i, t := range to {
			same = same && m.To[i] == t
		}
		if same {
			return true
		}
	}
	return false
}

// ParseMove reads a move in the notation: square numbers separated by "-"
// (a plain move) or "x" (a capture): "11-15", "22x15x8". It checks the form,
// not legality.
func ParseMove(text string) (from Square, to []Square, capture bool, err error) {
	sep := "-"
	if strings.ContainsAny(text, "xX") {
		sep, capture = "x", true
		text = strings.ReplaceAll(text, "X", "x")
	}
	parts := strings.Split(text, sep)
	if len(parts) < 2 || len(parts) > MaxPath+1 {
		return 0, nil, false, fmt.Errorf("move %q: want squares 1-32 joined by - or x, as 11-15 or 22x15x8", text)
	}
	if !capture && len(parts) != 2 {
		return 0, nil, false, fmt.Errorf("move %q: a plain move has two squares (a capture joins its squares with x)", text)
	}
	sq := make([]Square, len(parts))
	for i, s := range parts {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 32 || s[0] == '+' || s[0] == '0' {
			return 0, nil, false, fmt.Errorf("move %q: %q is not a square 1-32", text, s)
		}
		sq[i] = Square(n - 1)
	}
	return sq[0], sq[1:], capture, nil
}

// Find returns the legal move from from along to, if there is one.
func (p *Position) Find(from Square, to []Square) (Move, bool) {
	var buf [48]Move
	for _, m := range p.Moves(buf[:0]) {
		if m.From != from || int(m.N) != len(to) {
			continue
		}
		same := true
		for i, t := range to {
			if m.To[i] != t {
				same = false
				break
			}
		}
		if same {
			return m, true
		}
	}
	return Move{}, false
}

// errFEN says what ParseFEN wants.
var errFEN = errors.New(`want "B:W21,22,K30:B1,2" (side to move, then each side's squares; K marks a king)`)

// ParseFEN reads a position in the PDN FEN form "B:W21,22,K30:B1,2,K9"
// (side to move, then White's and Black's squares in either order, a K before
// a king's square).
func ParseFEN(s string, r Rule) (Position, error) {
	p := Position{Rule: r}
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) != 3 {
		return p, errFEN
	}
	switch parts[0] {
	case "B":
		p.Turn = games.Black
	case "W":
		p.Turn = games.White
	default:
		return p, errFEN
	}
	for _, side := range parts[1:] {
		if side == "" {
			return p, errFEN
		}
		set := &p.Black
		switch side[0] {
		case 'B':
		case 'W':
			set = &p.White
		default:
			return p, errFEN
		}
		if len(side) == 1 {
			continue
		}
		for _, f := range strings.Split(side[1:], ",") {
			king := strings.HasPrefix(f, "K")
			n, err := strconv.Atoi(strings.TrimPrefix(f, "K"))
			if err != nil || n < 1 || n > 32 {
				return p, fmt.Errorf("square %q: %w", f, errFEN)
			}
			b := bit(Square(n - 1))
			if (p.Black|p.White)&b != 0 {
				return p, fmt.Errorf("square %d twice", n)
			}
			*set |= b
			if king {
				p.Kings |= b
			}
		}
	}
	return p, nil
}

// FEN writes the position as ParseFEN reads it.
func (p *Position) FEN() string {
	var sb strings.Builder
	if p.Turn == games.White {
		sb.WriteString("W")
	} else {
		sb.WriteString("B")
	}
	for _, side := range []struct {
		c   string
		set uint32
	}{{"W", p.White}, {"B", p.Black}} {
		sb.WriteString(":" + side.c)
		first := true
		for b := side.set; b != 0; b &= b - 1 {
			s := Square(bits.TrailingZeros32(b))
			if !first {
				sb.WriteByte(',')
			}
			first = false
			if p.Kings&bit(s) != 0 {
				sb.WriteByte('K')
			}
			sb.WriteString(s.String())
		}
	}
	return sb.String()
}
