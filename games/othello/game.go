package othello

import (
	"fmt"
	"math/bits"

	"github.com/taikai-dev/taikai/games"
)

// Info is Othello as taikai registers it.
var Info = games.Game{
	Name:  "othello",
	Title: "Othello",
	Order: 1,
	Rule: func(name string) (string, error) {
		if name != "" && name != "standard" {
			return "", fmt.Errorf("othello has one rule, %q is not it (leave it empty)", name)
		}
		return "", nil
	},
	Size: 8, MinSize: 8, MaxSize: 8,
	New:       func(string, int) (games.Rules, error) { return &rules{b: New()}, nil },
	Notation:  func(m games.Move) string { return At(m.X, m.Y).String() },
	ParseMove: parseMove,
	OnTimeout: "forfeit",
	MaxErrors: 10,
	Records:   []games.RecordFormat{GGF},
	View: func(int) games.View {
		return games.View{Style: "cells", Stars: []games.Point{{X: 1, Y: 1}, {X: 5, Y: 1}, {X: 1, Y: 5}, {X: 5, Y: 5}}, Flips: true, Score: true, Coords: "algebraic", Pieces: "discs"}
	},
}

func init() { games.Register(Info) }

func parseMove(text string) (games.Move, error) {
	s, err := ParseSquare(text)
	if err != nil {
		return games.Move{}, err
	}
	if s == Pass {
		return games.PassMove, nil
	}
	return games.Move{X: s.X(), Y: s.Y()}, nil
}

// rules is a game of Othello as the referee plays it.
type rules struct{ b Board }

func (r *rules) Size() int { return 8 }

func (r *rules) At(x, y int) int8 { return int8(r.b.At(x, y)) }

func (r *rules) Turn() games.Color { return games.Color(r.b.Turn()) }

func (r *rules) Check(m games.Move) (games.Refusal, bool) {
	if m.Pass {
		if r.b.Legal() != 0 {
			return games.PassRefused, false
		}
		return 0, true
	}
	if m.X < 0 || m.X > 7 || m.Y < 0 || m.Y > 7 || len(m.Path) > 0 {
		return games.OffBoard, false
	}
	if r.b.At(m.X, m.Y) != Empty {
		return games.Occupied, false
	}
	if r.b.Flips(At(m.X, m.Y)) == 0 {
		return games.NoFlip, false
	}
	return 0, true
}

func (r *rules) Play(m games.Move) {
	s := Pass
	if !m.Pass {
		s = At(m.X, m.Y)
	}
	if _, err := r.b.Play(s); err != nil {
		panic("othello: Play after Check: " + err.Error())
	}
}

func (r *rules) MustPass() bool { return r.b.MustPass() }

func (r *rules) CanPass() bool { return r.b.Legal() == 0 }

func (r *rules) Finished() bool { return r.b.Over() }

func (r *rules) Winner() games.Color { return games.Color(r.b.Winner()) }

func (r *rules) Stones() (int, int) { return r.b.Count() }

func (r *rules) Highlight() []games.Point { return nil }

func (r *rules) Random(rng games.Rand) games.Move {
	legal := r.b.Legal()
	if legal == 0 {
		return games.PassMove
	}
	n := rng.IntN(bits.OnesCount64(legal))
	for ; n > 0; n-- {
		legal &= legal - 1
	}
	s := Square(bits.TrailingZeros64(legal))
	return games.Move{X: s.X(), Y: s.Y()}
}
