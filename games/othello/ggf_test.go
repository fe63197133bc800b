package othello

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/games"
)

// Random games written as GGF read back to the same moves; RE is the disc
// difference, or ±64 with the forfeit's flag.
func TestGGFRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var recs []games.RecordGame
	for i := range 5 {
		r, _ := Info.New("", 8)
		var plies []games.Ply
		for !r.Finished() {
			m := r.Random(rng)
			plies = append(plies, games.Ply{Color: r.Turn(), Move: m, MS: int64(rng.IntN(3000))})
			r.Play(m)
		}
		b, w := r.Stones()
		rec := games.RecordGame{Black: "b[1]", White: "w", Moves: plies, Winner: r.Winner(), Reason: games.ReasonNormal, Stones: [2]int{b, w}, Date: time.Unix(0, 0)}
		if i == 4 {
			rec.Reason, rec.Winner = games.ReasonTimeout, games.White
		}
		recs = append(recs, rec)
	}
	var buf bytes.Buffer
	if err := GGF.Write(&buf, recs); err != nil {
		t.Fatal(err)
	}
	got, err := GGF.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("%d games read, %d written", len(got), len(recs))
	}
	for i, moves := range got {
		if len(moves) != len(recs[i].Moves) {
			t.Fatalf("game %d: %d moves read, %d written", i+1, len(moves), len(recs[i].Moves))
		}
		for j, m := range moves {
			if !m.Equal(recs[i].Moves[j].Move) {
				t.Fatalf("game %d move %d: %+v read, %+v written", i+1, j+1, m, recs[i].Moves[j].Move)
			}
		}
	}
	buf.Reset()
	_ = GGF.Write(&buf, recs)
	text := buf.String()
	if !strings.Contains(text, "PB[b(1)]") || !strings.Contains(text, "RE[-64.000:t]") || strings.Count(text, "(;GM[Othello]") != 5 {
		t.Errorf("GGF text:\n%s", text)
	}
	for _, bad := range []string{"", "(;GM[Chess];)", "(;GM[Othello]B[z9];)", "(;GM[Othello]B[f5]", "(;GM[Othello]TY[10];)", "(;GM[Othello]xx;)"} {
		if _, err := GGF.Read(strings.NewReader(bad)); err == nil {
			t.Errorf("%q read", bad)
		}
	}
}
