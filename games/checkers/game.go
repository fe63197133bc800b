package checkers

import (
	"github.com/taikai-dev/taikai/games"
)

// Info is checkers as taikai registers it.
var Info = games.Game{
	Name:  "checkers",
	Title: "Checkers",
	Order: 3,
	Rules: []string{"seed", "english"},
	Rule: func(name string) (string, error) {
		r, err := ParseRule(name)
		if err != nil {
			return "", err
		}
		return r.String(), nil
	},
	Size: 8, MinSize: 8, MaxSize: 8,
	New: func(rule string, _ int) (games.Rules, error) {
		r, err := ParseRule(rule)
		if err != nil {
			return nil, err
		}
		return &rules{p: Start(r)}, nil
	},
	Notation:  Notation,
	ParseMove: parseMove,
	OnTimeout: "forfeit",
	MaxErrors: 10,
	Records:   []games.RecordFormat{PDN},
	View: func(int) games.View {
		return games.View{Style: "cells", Dark: true, Coords: "squares", Pieces: "pieces",
			Win: "no move left", Draw: "equal scores, or 80 quiet plies"}
	},
}

func init() { games.Register(Info) }

// ToMove converts a move to the games vocabulary: the start square and the
// path of landings.
func ToMove(m Move) games.Move {
	g := games.Move{X: m.From.X(), Y: m.From.Y(), Path: make([]games.Point, m.N)}
	for i := range m.N {
		g.Path[i] = games.Point{X: m.To[i].X(), Y: m.To[i].Y()}
	}
	return g
}

// squares converts a games.Move back to squares; ok is false for a pass or
// a point that is not a dark square.
func squares(m games.Move) (from Square, to []Square, ok bool) {
	if m.Pass || len(m.Path) == 0 {
		return 0, nil, false
	}
	from = SquareAt(m.X, m.Y)
	to = make([]Square, len(m.Path))
	for i, q := range m.Path {
		to[i] = SquareAt(q.X, q.Y)
		if to[i] == NoSquare {
			return 0, nil, false
		}
	}
	return from, to, from != NoSquare
}

// Notation prints a move as "11-15" or "22x15x8": a path whose first step
// spans two rows is a capture.
func Notation(m games.Move) string {
	from, to, ok := squares(m)
	if !ok {
		if m.Pass {
			return "pass"
		}
		return "?"
	}
	sep := "-"
	if d := m.Path[0].Y - m.Y; d == 2 || d == -2 {
		sep = "x"
	}
	s := from.String()
	for _, t := range to {
		s += sep + t.String()
	}
	return s
}

func parseMove(text string) (games.Move, error) {
	from, to, _, err := ParseMove(text)
	if err != nil {
		return games.Move{}, err
	}
	g := games.Move{X: from.X(), Y: from.Y(), Path: make([]games.Point, len(to))}
	for i, t := range to {
		g.Path[i] = games.Point{X: t.X(), Y: t.Y()}
	}
	return g, nil
}

// rules is a game of checkers as the referee plays it.
type rules struct {
	p     Position
	moves []Move // the legal moves of p, computed once per position
	fresh bool
}

func (r *rules) legal() []Move {
	if !r.fresh {
		r.moves = r.p.Moves(r.moves)
		r.fresh = true
	}
	return r.moves
}

func (r *rules) Size() int { return 8 }

func (r *rules) At(x, y int) int8 { return r.p.At(x, y) }

func (r *rules) Turn() games.Color {
	if r.Finished() {
		return games.None
	}
	return r.p.Turn
}

// Check finds m among the legal moves. A refused move is must_capture when
// a capture is due and m is a plain move the rules would otherwise allow, or
// a capture sequence stopped while it could go on; else illegal_move.
func (r *rules) Check(m games.Move) (games.Refusal, bool) {
	if m.Pass {
		return games.PassRefused, false
	}
	from, to, ok := squares(m)
	if !ok {
		if len(m.Path) == 0 {
			return games.IllegalMove, false
		}
		return games.OffBoard, false
	}
	if _, ok := r.p.Find(from, to); ok {
		return 0, true
	}
	if r.p.HasCapture() && (r.p.plainMove(from, to) || r.p.stopsEarly(from, to)) {
		return games.MustCapture, false
	}
	return games.IllegalMove, false
}

func (r *rules) Play(m games.Move) {
	from, to, _ := squares(m)
	mv, ok := r.p.Find(from, to)
	if !ok {
		panic("checkers: Play after Check: " + Notation(m))
	}
	r.p.Play(mv)
	r.fresh = false
}

// MustPass: checkers has no passes (a side with no move has lost, or ends
// the game under the seed rules).
func (r *rules) MustPass() bool { return false }

func (r *rules) CanPass() bool { return false }

func (r *rules) Finished() bool {
	if r.p.Rule == English && r.p.Quiet >= DrawPlies {
		return true
	}
	return len(r.legal()) == 0
}

func (r *rules) Winner() games.Color { return r.p.Winner() }

func (r *rules) Stones() (int, int) { return r.p.Count() }

// Score is what the game is decided by: the seed's evaluation under the seed
// rules, the pieces under the English rules.
func (r *rules) Score() (int, int) {
	if r.p.Rule == Seed {
		return r.p.Score()
	}
	return r.p.Count()
}

func (r *rules) Highlight() []games.Point { return nil }

func (r *rules) Random(rng games.Rand) games.Move {
	moves := r.legal()
	if len(moves) == 0 {
		return games.PassMove
	}
	return ToMove(moves[rng.IntN(len(moves))])
}

// Of returns the position of a game of checkers the referee plays.
func Of(g games.Rules) (Position, bool) {
	r, ok := g.(*rules)
	if !ok {
		return Position{}, false
	}
	return r.p, true
}
