package storage

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/taikai-dev/taikai/games"
	_ "github.com/taikai-dev/taikai/games/checkers"
)

// Checkers moves keep their paths through the store; a placing move's
// encoding is what it always was (an older list reads the same).
func TestMovesWithPaths(t *testing.T) {
	g, _ := games.Lookup("checkers")
	rng := rand.New(rand.NewPCG(3, 4))
	captures := 0
	for range 50 {
		r, _ := g.New("english", 8)
		var moves []games.Ply
		for !r.Finished() {
			m := r.Random(rng)
			if len(m.Path) > 1 {
				captures++
			}
			moves = append(moves, games.Ply{Color: r.Turn(), Move: m, MS: int64(rng.IntN(5000))})
			r.Play(m)
		}
		blob, auto := encodeMoves(moves, 8)
		got, err := decodeMoves(blob, auto, 8)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, moves) {
			t.Fatalf("moves changed in the store:\n got %v\nwant %v", got, moves)
		}
	}
	if captures == 0 {
		t.Fatal("no multi-jump in 50 random games: the test checks too little")
	}
	// d3 (x 3, y 2) in 1 ms: the cell 19 and 1, as before paths.
	blob, _ := encodeMoves([]games.Ply{{Color: games.Black, Move: games.Move{X: 3, Y: 2}, MS: 1}}, 8)
	if !reflect.DeepEqual(blob, []byte{19, 1}) {
		t.Errorf("a placing move encodes as %v, want [19 1]", blob)
	}
	for _, bad := range [][]byte{{70, 1}, {66, 1, 2}, {66, 64, 1, 0}} {
		if _, err := decodeMoves(bad, nil, 8); err == nil {
			t.Errorf("%v decoded", bad)
		}
	}
}
