package gomoku

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/taikai-dev/taikai/games"
)

// Info is Gomoku as taikai registers it.
var Info = games.Game{
	Name:  "gomoku",
	Title: "Gomoku",
	Order: 2,
	Rules: ruleNames[:],
	Rule: func(name string) (string, error) {
		r, err := ParseRule(name)
		if err != nil {
			return "", err
		}
		return r.String(), nil
	},
	Size: DefaultSize, MinSize: MinSize, MaxSize: MaxSize,
	New: func(rule string, size int) (games.Rules, error) {
		r, err := ParseRule(rule)
		if err != nil {
			return nil, err
		}
		g, err := NewGame(size, r)
		if err != nil {
			return nil, err
		}
		return &rules{g: g, turn: games.Black}, nil
	},
	Notation:  func(m games.Move) string { return strconv.Itoa(m.X) + "," + strconv.Itoa(m.Y) },
	ParseMove: parseMove,
	OnTimeout: "random",
	// The gomoku server let a client retry until its clock ran out.
	MaxErrors: -1,
	View:      view,
	Records:   []games.RecordFormat{PSQ},
}

func init() { games.Register(Info) }

// parseMove reads "x,y" (the protocol's coordinates) or "pass".
func parseMove(text string) (games.Move, error) {
	if strings.EqualFold(text, "pass") {
		return games.PassMove, nil
	}
	xs, ys, ok := strings.Cut(text, ",")
	x, errx := strconv.Atoi(strings.TrimSpace(xs))
	y, erry := strconv.Atoi(strings.TrimSpace(ys))
	if !ok || errx != nil || erry != nil || x < 0 || y < 0 || x >= MaxSize || y >= MaxSize {
		return games.Move{}, fmt.Errorf("point %q: want x,y (0-based column and row)", text)
	}
	return games.Move{X: x, Y: y}, nil
}

// view draws stones on the points, with the star points of a go board.
func view(n int) games.View {
	v := games.View{Style: "points", Coords: "renju", Pieces: "stones", Win: "five in a row", Draw: "board full"}
	if n < 9 {
		return v
	}
	a := 2
	if n >= 13 {
		a = 3
	}
	v.Stars = []games.Point{{X: a, Y: a}, {X: n - 1 - a, Y: a}, {X: a, Y: n - 1 - a}, {X: n - 1 - a, Y: n - 1 - a}}
	if n%2 == 1 {
		v.Stars = append(v.Stars, games.Point{X: (n - 1) / 2, Y: (n - 1) / 2})
	}
	return v
}

// rules is a game of Gomoku as the referee plays it. It keeps its own
// alternating turn: when the game skips a side that has no allowed point
// (every empty point forbidden for it), the referee records a pass for that
// side, so that stored colours alternate.
type rules struct {
	g       *Game
	turn    games.Color
	allowed []Point
}

func (r *rules) Size() int { return r.g.Board().Size() }

func (r *rules) At(x, y int) int8 { return int8(r.g.Board().At(x, y)) }

func (r *rules) Turn() games.Color {
	if r.g.Over() {
		return games.None
	}
	return r.turn
}

func (r *rules) Check(m games.Move) (games.Refusal, bool) {
	if m.Pass {
		if r.MustPass() {
			return 0, true
		}
		return games.PassRefused, false
	}
	if r.MustPass() {
		return games.Forbidden, false
	}
	if len(m.Path) > 0 {
		return games.OffBoard, false
	}
	switch r.g.Check(m.X, m.Y) {
	case games.Allowed:
		return 0, true
	case games.Occupied:
		return games.Occupied, false
	case games.Forbidden:
		return games.Forbidden, false
	}
	return games.OffBoard, false
}

// Explain names the pattern that forbids m ("double three"), "" if none does.
func (r *rules) Explain(m games.Move) string {
	if m.Pass || len(m.Path) > 0 {
		return ""
	}
	return r.g.Board().Foul(r.g.Rule(), r.g.Turn(), m.X, m.Y).String()
}

func (r *rules) Play(m games.Move) {
	if !m.Pass {
		if v := r.g.Play(m.X, m.Y); v != games.Allowed {
			panic("gomoku: Play after Check: " + v.String())
		}
	}
	r.turn = r.turn.Opponent()
}

// MustPass: the game skipped the side whose turn it would be.
func (r *rules) MustPass() bool {
	return !r.g.Over() && r.g.Turn() != r.turn
}

func (r *rules) CanPass() bool { return r.MustPass() }

func (r *rules) Finished() bool { return r.g.Over() }

func (r *rules) Winner() games.Color { return games.Color(r.g.Winner()) }

func (r *rules) Stones() (black, white int) {
	b := r.g.Board()
	for _, p := range r.g.Moves() {
		if b.At(p.X, p.Y) == Black {
			black++
		} else {
			white++
		}
	}
	return black, white
}

func (r *rules) Highlight() []games.Point {
	var out []games.Point
	for _, p := range r.g.Five() {
		out = append(out, games.Point(p))
	}
	return out
}

func (r *rules) Random(rng games.Rand) games.Move {
	if r.MustPass() {
		return games.PassMove
	}
	r.allowed = r.g.Allowed(r.allowed[:0])
	if len(r.allowed) == 0 {
		return games.PassMove
	}
	p := r.allowed[rng.IntN(len(r.allowed))]
	return games.Move{X: p.X, Y: p.Y}
}
