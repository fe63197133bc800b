package tournament_test

import (
	"math/rand/v2"
	"testing"

	"github.com/taikai-dev/taikai/tournament"
)

// playPlan runs a plan to its end, deciding each game with result (black's
// score), starting every ready slot at once, and returns the finished games.
func playPlan(t *testing.T, p tournament.Plan, result func(s tournament.Slot) float64) []tournament.SlotResult {
	t.Helper()
	started := map[string]bool{}
	var finished []tournament.SlotResult
	for range 10000 {
		ready, done := p.Next(started, finished)
		if done {
			if len(ready) != 0 {
				t.Fatalf("done with %d slots ready", len(ready))
			}
			return finished
		}
		if len(ready) == 0 {
			t.Fatalf("nothing ready and not done after %d games", len(finished))
		}
		for _, s := range ready {
			if started[s.Key()] {
				t.Fatalf("slot %s offered twice", s.Key())
			}
			started[s.Key()] = true
		}
		// Finish them in another order than offered, as games do.
		for i := len(ready) - 1; i >= 0; i-- {
			finished = append(finished, tournament.SlotResult{Slot: ready[i], BlackScore: result(ready[i])})
		}
	}
	t.Fatal("no end after 10000 steps")
	return nil
}

func TestSwissNineFive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for name, result := range map[string]func(tournament.Slot) float64{
		"random":       func(tournament.Slot) float64 { return float64(rng.IntN(3)) / 2 },
		"lower wins":   func(s tournament.Slot) float64 { return map[bool]float64{true: 1, false: 0}[s.Black < s.White] },
		"all drawn":    func(tournament.Slot) float64 { return 0.5 },
		"black always": func(tournament.Slot) float64 { return 1 },
	} {
		t.Run(name, func(t *testing.T) {
			p, err := tournament.NewPlan(tournament.KindSwiss, 9, 2, 5, 0)
			if err != nil {
				t.Fatal(err)
			}
			finished := playPlan(t, p, result)
			if int64(len(finished)) != p.Total(finished) || len(finished) != 40 {
				t.Fatalf("%d games, total %d, want 40", len(finished), p.Total(finished))
			}
			met := map[[2]int]int{}
			perRound := map[int]map[int]bool{}
			blackFirst, matches := make([]int, 9), make([]int, 9)
			for _, r := range finished {
				a, b := min(r.Black, r.White), max(r.Black, r.White)
				if prev, ok := met[[2]int{a, b}]; ok && prev != r.Round {
					t.Errorf("%d and %d met in rounds %d and %d", a, b, prev, r.Round)
				}
				met[[2]int{a, b}] = r.Round
				if perRound[r.Round] == nil {
					perRound[r.Round] = map[int]bool{}
				}
				perRound[r.Round][r.Black], perRound[r.Round][r.White] = true, true
				if r.Game == 0 {
					blackFirst[r.Black]++
					matches[r.Black]++
					matches[r.White]++
				}
			}
			byes := p.Byes(finished)
			had := map[int]int{}
			for r := range 5 {
				if len(perRound[r]) != 8 || len(byes[r]) != 1 || perRound[r][byes[r][0]] {
					t.Errorf("round %d: %d played, byes %v", r, len(perRound[r]), byes[r])
				}
				for _, e := range byes[r] {
					had[e]++
				}
			}
			for e, n := range had {
				if n > 1 {
					t.Errorf("entrant %d had %d byes", e, n)
				}
			}
			for e := range 9 {
				if d := 2*blackFirst[e] - matches[e]; d > 2 || d < -2 {
					t.Errorf("entrant %d black first in %d of %d matches", e, blackFirst[e], matches[e])
				}
			}
			buch := tournament.Buchholz(9, finished, byes, 2)
			if len(buch) != 9 {
				t.Errorf("buchholz %v", buch)
			}
		})
	}
}

// Buchholz on a hand-computed example: A beat B, C drew D, then A drew C, B
// beat D (one game a match); byes none.
func TestBuchholz(t *testing.T) {
	r := func(round, black, white int, s float64) tournament.SlotResult {
		return tournament.SlotResult{Slot: tournament.Slot{Round: round, Black: black, White: white}, BlackScore: s}
	}
	fin := []tournament.SlotResult{r(0, 0, 1, 1), r(0, 2, 3, 0.5), r(1, 0, 2, 0.5), r(1, 1, 3, 1)}
	// Points: A 1.5, B 1, C 1, D 0.5. A met B and C: 2; B met A, D: 2; C met D, A: 2; D met C, B: 2.
	got := tournament.Buchholz(4, fin, nil, 1)
	for i, want := range []float64{2, 2, 2, 2} {
		if got[i] != want {
			t.Errorf("entrant %d: %v, want %v", i, got[i], want)
		}
	}
	// With a bye for D worth 1 point, everyone who met D gains 1.
	got = tournament.Buchholz(4, fin, map[int][]int{2: {3}}, 1)
	for i, want := range []float64{2, 3, 3, 2} {
		if got[i] != want {
			t.Errorf("with the bye, entrant %d: %v, want %v", i, got[i], want)
		}
	}
}

func TestKnockout(t *testing.T) {
	for _, tc := range []struct {
		n, extra int
		result   func(tournament.Slot) float64
		minGames int
	}{
		{8, 2, func(s tournament.Slot) float64 { return map[bool]float64{true: 1, false: 0}[s.Black < s.White] }, 14},
		{5, 1, func(s tournament.Slot) float64 { return 1 }, 8},    // black always wins: every match tied, extended, seed decides
		{6, 0, func(s tournament.Slot) float64 { return 0.5 }, 10}, // all drawn, no extension
	} {
		p, err := tournament.NewPlan(tournament.KindKnockout, tc.n, 2, 0, tc.extra)
		if err != nil {
			t.Fatal(err)
		}
		fin := playPlan(t, p, tc.result)
		b := p.(interface {
			Bracket([]tournament.SlotResult) []tournament.BracketRound
		}).Bracket(fin)
		size := 1
		for size < tc.n {
			size *= 2
		}
		matches := 0
		for r, rd := range b {
			if len(rd.Matches) != size>>(r+1) {
				t.Errorf("n %d round %d: %d matches", tc.n, r, len(rd.Matches))
			}
			for _, m := range rd.Matches {
				if m.Winner < 0 {
					t.Errorf("n %d round %d: undecided %+v", tc.n, r, m)
				}
				if m.Decided != "bye" {
					matches++
				}
			}
		}
		if matches != tc.n-1 || len(fin) < tc.minGames || int64(len(fin)) != p.Total(fin) {
			t.Errorf("n %d: %d matches, %d games (total %d), want %d matches and at least %d games", tc.n, matches, len(fin), p.Total(fin), tc.n-1, tc.minGames)
		}
		if tc.n == 5 && len(fin) != (tc.n-1)*(2+2*tc.extra) {
			t.Errorf("tied matches: %d games, want each extended by %d pair", len(fin), tc.extra)
		}
		if tc.n == 8 && b[len(b)-1].Matches[0].Winner != 0 {
			t.Errorf("the lower index always wins, but the final went to %d", b[len(b)-1].Matches[0].Winner)
		}
	}
	for _, bad := range []struct{ n, games, rounds, extra int }{{8, 3, 0, 0}, {8, 2, 2, 0}, {8, 2, 0, 11}, {65, 2, 0, 0}} {
		if _, err := tournament.NewPlan(tournament.KindKnockout, bad.n, bad.games, bad.rounds, bad.extra); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, err := tournament.NewPlan(tournament.KindSwiss, 9, 2, 9, 0); err == nil {
		t.Error("swiss of 9 rounds for 9 engines accepted")
	}
}
