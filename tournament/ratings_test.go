package tournament_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/taikai-dev/taikai/tournament"
)

func TestEloDiff(t *testing.T) {
	for _, tc := range []struct {
		w, d, l int64
		diff    float64
	}{
		{50, 0, 50, 0},
		{75, 0, 25, 190.85},  // 400*log10(3)
		{60, 20, 20, 147.19}, // score 0.7: 400*log10(0.7/0.3)
		{25, 0, 75, -190.85},
	} {
		diff, margin := tournament.EloDiff(tc.w, tc.d, tc.l)
		if math.Abs(diff-tc.diff) > 0.01 {
			t.Errorf("EloDiff(%d,%d,%d) = %.2f, want %.2f", tc.w, tc.d, tc.l, diff, tc.diff)
		}
		if margin <= 0 || margin > 200 {
			t.Errorf("EloDiff(%d,%d,%d) margin %.1f", tc.w, tc.d, tc.l, margin)
		}
	}
}

// A finite, honest interval at every score (issue 16, item 9): 5-1 printed
// "279.6 +/- inf" and 2-0 "inf +/- NaN".
func TestEloDiffFiniteEverywhere(t *testing.T) {
	for _, tc := range []struct {
		w, d, l int64
		diff    float64 // want, within 0.1; NaN: only finite
	}{
		{5, 0, 1, 279.6}, // score 5/6: 400*log10(5)
		{2, 0, 0, 279.6}, // with one virtual draw: 2.5/3
		{0, 0, 2, -279.6},
		{10, 0, 0, 528.9}, // 10.5/11: 400*log10(21)
		{0, 3, 0, 0},
		{0, 0, 0, 0},
		{1, 0, 0, 190.8}, // 1.5/2: 400*log10(3)
		{99, 1, 0, math.NaN()},
		{3, 0, 1, math.NaN()},
	} {
		diff, margin := tournament.EloDiff(tc.w, tc.d, tc.l)
		if math.IsInf(diff, 0) || math.IsNaN(diff) || math.IsInf(margin, 0) || math.IsNaN(margin) || margin <= 0 {
			t.Errorf("EloDiff(%d,%d,%d) = %v +/- %v, want finite with a positive margin", tc.w, tc.d, tc.l, diff, margin)
			continue
		}
		if !math.IsNaN(tc.diff) && math.Abs(diff-tc.diff) > 0.1 {
			t.Errorf("EloDiff(%d,%d,%d) = %.1f, want %.1f", tc.w, tc.d, tc.l, diff, tc.diff)
		}
		// The interval holds the estimate and shrinks as games add up.
		d2, m2 := tournament.EloDiff(tc.w*10, tc.d*10, tc.l*10)
		if tc.w+tc.d+tc.l > 0 && !(m2 < margin) {
			t.Errorf("EloDiff x10 of (%d,%d,%d): margin %.1f, not below %.1f (diff %.1f)", tc.w, tc.d, tc.l, m2, margin, d2)
		}
	}
}

// mmReference is a slow, tight maximum-likelihood fit written independently
// (gradient ascent on the log-likelihood, same prior) to check Ratings against.
func mmReference(n int, pairs []tournament.PairResult, index map[int64]int) []float64 {
	r := make([]float64, n)
	k := math.Ln10 / 400
	for iter := 0; iter < 200000; iter++ {
		grad := make([]float64, n)
		for i := range n {
			p := 1 / (1 + math.Exp(-k*r[i])) // against the prior's opponent rated 0
			grad[i] += 2 * (0.5 - p)
		}
		for _, pr := range pairs {
			i, j := index[pr.A], index[pr.B]
			g := float64(pr.AWins + pr.Draws + pr.BWins)
			p := 1 / (1 + math.Exp(-k*(r[i]-r[j])))
			s := float64(pr.AWins) + float64(pr.Draws)/2
			grad[i] += s - g*p
			grad[j] -= s - g*p
		}
		worst := 0.0
		for i := range r {
			r[i] += 2 * grad[i] / float64(len(pairs)+1)
			worst = math.Max(worst, math.Abs(grad[i]))
		}
		if worst < 1e-7 {
			break
		}
	}
	mean := 0.0
	for _, x := range r {
		mean += x / float64(n)
	}
	for i := range r {
		r[i] -= mean
	}
	return r
}

func TestRatingsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	strength := []float64{-300, -100, 0, 50, 400}
	ids := []int64{11, 12, 13, 14, 15}
	index := map[int64]int{}
	for i, id := range ids {
		index[id] = i
	}
	var pairs []tournament.PairResult
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			pr := tournament.PairResult{A: ids[i], B: ids[j]}
			p := 1 / (1 + math.Pow(10, (strength[j]-strength[i])/400))
			for range 300 {
				switch x := rng.Float64(); {
				case x < p*0.9:
					pr.AWins++
				case x < p*0.9+0.1:
					pr.Draws++
				default:
					pr.BWins++
				}
			}
			pairs = append(pairs, pr)
		}
	}
	elo, errs := tournament.Ratings(ids, pairs)
	ref := mmReference(len(ids), pairs, index)
	for i, id := range ids {
		if math.Abs(elo[id]-ref[i]) > 0.5 {
			t.Errorf("engine %d: Elo %.2f, reference %.2f", id, elo[id], ref[i])
		}
		if errs[id] < 10 || errs[id] > 100 {
			t.Errorf("engine %d: error bar %.1f for 1200 games", id, errs[id])
		}
	}
	sum := 0.0
	for _, e := range elo {
		sum += e
	}
	if math.Abs(sum) > 1e-6 {
		t.Errorf("ratings sum to %v, want 0 (anchored at the average)", sum)
	}
	if !(elo[11] < elo[12] && elo[12] < elo[13] && elo[14] < elo[15]) {
		t.Errorf("ratings out of order: %v", elo)
	}
}

func TestTableOrderAndPoints(t *testing.T) {
	rows := []tournament.Standing{
		{EngineID: 1, Name: "a", Games: 4, Wins: 1, Draws: 2, Losses: 1},
		{EngineID: 2, Name: "b", Games: 4, Wins: 3, Draws: 0, Losses: 1},
		{EngineID: 3, Name: "c", Games: 4, Wins: 0, Draws: 2, Losses: 2},
	}
	pairs := []tournament.PairResult{{A: 1, B: 2, AWins: 0, Draws: 0, BWins: 2}, {A: 1, B: 3, AWins: 1, Draws: 1, BWins: 0}, {A: 2, B: 3, AWins: 1, Draws: 1, BWins: 0}}
	got := tournament.Table(rows, pairs)
	if got[0].Name != "b" || got[0].Points != 3 || got[0].ScorePct != 75 || got[2].Name != "c" || got[2].Points != 1 {
		t.Errorf("table %+v", got)
	}
}
