package tournament_test

import (
	"testing"

	"github.com/taikai-dev/taikai/tournament"
)

// Every pair meets games_per_pair times with colours alternating; within a
// round nobody plays twice; at any point in the schedule the number of games
// played differs by little between engines.
func TestRoundRobinSchedule(t *testing.T) {
	for _, n := range []int{2, 3, 4, 5, 8, 11} {
		for _, legs := range []int{1, 2, 3, 4} {
			s := tournament.RoundRobin{N: n, Legs: legs}
			total := s.Total()
			if want := int64(legs * n * (n - 1) / 2); total != want {
				t.Fatalf("n=%d legs=%d: total %d, want %d", n, legs, total, want)
			}
			meet := map[[2]int]int{}
			black := map[[2]int]int{} // games of pair (a<b) with a as black
			played := make([]int, n)
			inRound := map[int64]map[int]bool{}
			for k := range total {
				p := s.Game(k)
				if p.Black == p.White || p.Black < 0 || p.White < 0 || p.Black >= n || p.White >= n {
					t.Fatalf("n=%d legs=%d game %d: bad pairing %+v", n, legs, k, p)
				}
				a, b := min(p.Black, p.White), max(p.Black, p.White)
				meet[[2]int{a, b}]++
				if p.Black == a {
					black[[2]int{a, b}]++
				}
				if inRound[p.Round] == nil {
					inRound[p.Round] = map[int]bool{}
				}
				if inRound[p.Round][p.Black] || inRound[p.Round][p.White] {
					t.Fatalf("n=%d legs=%d: an engine plays twice in round %d", n, legs, p.Round)
				}
				inRound[p.Round][p.Black], inRound[p.Round][p.White] = true, true
				played[p.Black]++
				played[p.White]++
				lo, hi := played[0], played[0]
				for _, x := range played {
					lo, hi = min(lo, x), max(hi, x)
				}
				// Within one round some have played and some not yet: at most two apart
				// (an odd field adds the bye).
				if hi-lo > 2 {
					t.Fatalf("n=%d legs=%d after game %d: games played range %d..%d", n, legs, k, lo, hi)
				}
			}
			for a := range n {
				for b := a + 1; b < n; b++ {
					if meet[[2]int{a, b}] != legs {
						t.Errorf("n=%d legs=%d: pair %d-%d meets %d times", n, legs, a, b, meet[[2]int{a, b}])
					}
					if legs%2 == 0 && black[[2]int{a, b}] != legs/2 {
						t.Errorf("n=%d legs=%d: pair %d-%d: %d of %d games with %d as black", n, legs, a, b, black[[2]int{a, b}], legs, a)
					}
				}
			}
		}
	}
}

func BenchmarkScheduleGame(b *testing.B) {
	s := tournament.RoundRobin{N: 1000, Legs: 2}
	var sink int
	for i := int64(0); b.Loop(); i++ {
		p := s.Game(i % s.Total())
		sink += p.Black
	}
	_ = sink
}

// Paired plays each game of its schedule twice in a row, colours swapped,
// and numbers the pairs from 1.
func TestPairedSchedule(t *testing.T) {
	rr := tournament.RoundRobin{N: 5, Legs: 2}
	p := tournament.Paired{Of: rr}
	if p.Total() != 2*rr.Total() {
		t.Fatalf("total %d, want %d", p.Total(), 2*rr.Total())
	}
	for k := int64(0); k < p.Total(); k++ {
		g, base := p.Game(k), rr.Game(k/2)
		if g.Index != k || g.Pair != k/2+1 || g.Round != base.Round {
			t.Fatalf("game %d: %+v from %+v", k, g, base)
		}
		black, white := base.Black, base.White
		if k%2 == 1 {
			black, white = white, black
		}
		if g.Black != black || g.White != white {
			t.Fatalf("game %d: %d-%d, want %d-%d", k, g.Black, g.White, black, white)
		}
	}
}

// A match (taikai match) gives its first engine black in the even games,
// as the match always played them; with pairs, games 2j and 2j+1 are pair
// j+1. Before, a stored match's schedule was a round robin's, whose first
// game gives the second engine black: the games it listed as scheduled were
// not the games the match played.
func TestMatchSchedule(t *testing.T) {
	for _, paired := range []bool{false, true} {
		tour := &tournament.Tournament{Name: "m", Kind: tournament.KindMatch, Engines: []int64{1, 2}, GamesPerPair: 6,
			Settings: tournament.Settings{Game: "othello", Pairs: paired}}
		if err := tour.Validate(); err != nil {
			t.Fatal(err)
		}
		s := tour.Schedule()
		if s.Total() != 6 || tour.TotalGames != 6 {
			t.Fatalf("paired %v: total %d (tournament %d), want 6", paired, s.Total(), tour.TotalGames)
		}
		for k := range int64(6) {
			g := s.Game(k)
			var pair int64
			if paired {
				pair = k/2 + 1
			}
			if g.Index != k || g.Black != int(k%2) || g.White != 1-int(k%2) || g.Pair != pair {
				t.Errorf("paired %v: game %d is %+v; want black %d, white %d, pair %d", paired, k, g, k%2, 1-k%2, pair)
			}
		}
	}
}
