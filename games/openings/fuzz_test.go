package openings_test

import (
	"bytes"
	"testing"

	"github.com/taikai-dev/taikai/games"
	_ "github.com/taikai-dev/taikai/games/all"
	"github.com/taikai-dev/taikai/games/openings"
)

// Whatever a suite file or a record file (GGF, PSQ, PDN) holds, reading it
// as openings never panics, and a suite read holds openings within the
// limits whose moves replay under the game's rules.
func FuzzParseFile(f *testing.F) {
	for _, seed := range []struct{ name, game, text string }{
		{"s.txt", "othello", "# a suite\nd3c3e6d6c5d2e7b6\nf5d6c3\n"},
		{"s.txt", "gomoku", "h8 h9 i9\nh9 e11 k6\n"},
		{"s.txt", "checkers", "11-15 23-19\n9-13 22-18\n"},
		{"g.ggf", "othello", "(;GM[Othello]PC[x]BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]B[f5//1.2]W[d6]B[c3/0.5/2]W[d3];)\n(;GM[Othello]B[D3]W[c5];)\n"},
		{"g.psq", "gomoku", "Piskvorky 15x15, 11:11, 0\n8,8,120\n9,9,40\n7,9,0\n10,10,0\nblack\nwhite\n0\n"},
		{"g.pdn", "checkers", "[Event \"x\"]\n[GameType \"21\"]\n1. 11-15 23-19 2. 8-11 22-17 1-0\n"},
		{"g.pdn", "checkers", "[Event \"x\"]\n1. 11-15 24-20 2. 8-33 1-0\n"},
	} {
		f.Add(seed.name, seed.game, []byte(seed.text))
	}
	f.Fuzz(func(t *testing.T, name, game string, text []byte) {
		g, ok := games.Lookup(game)
		if !ok {
			return
		}
		s, err := openings.ParseFile(name, game, "", g.Size, bytes.NewReader(text), 0)
		if err != nil {
			return
		}
		for _, o := range s.Openings {
			if len(o.Moves) > openings.MaxMoves {
				t.Fatalf("opening %d has %d moves, over %d", o.Index, len(o.Moves), openings.MaxMoves)
			}
			rules, err := g.New(s.Rule, s.Size)
			if err != nil {
				t.Fatal(err)
			}
			for i, m := range o.Moves {
				if why, ok := rules.Check(m); !ok {
					t.Fatalf("opening %d, move %d %+v: refused (%v)", o.Index, i+1, m, why)
				}
				rules.Play(m)
			}
		}
	})
}
