package tournament

import (
	"fmt"
	"slices"

	"github.com/taikai-dev/taikai/games"
)

// Slot is one game a swiss or knockout tournament asks for: entrant indexes
// (into the tournament's engines), the round, the match within the round and
// the game within the match, all from 0. Games of a match alternate colours,
// so games 2k and 2k+1 are a pair: one opening, colours swapped.
type Slot struct {
	Round, Match, Game int
	Black, White       int
}

// Key is a stable name of the slot ("r2m3g1"), stored with its game.
func (s Slot) Key() string { return fmt.Sprintf("r%dm%dg%d", s.Round, s.Match, s.Game) }

// SlotResult is a finished slot: 1 if black won, 0.5 a draw, 0 if white won.
type SlotResult struct {
	Slot
	BlackScore float64
}

// Plan is the pairing of a format that pairs each round from the results of
// the last. Its state is a pure function of the games started and finished,
// so that a tournament resumes where it stopped with nothing else stored.
type Plan interface {
	// Next returns the slots that may start now, none of them started, and
	// whether every game of the tournament has finished.
	Next(started map[string]bool, finished []SlotResult) (ready []Slot, done bool)
	// Byes lists, per round, the entrants that sat out.
	Byes(finished []SlotResult) map[int][]int
	// Total is the number of games known so far (knockout: a tied match adds
	// a game pair at a time).
	Total(finished []SlotResult) int64
}

// Limits of the formats.
const (
	MaxKnockout = 64 // entrants of a knockout
	MaxExtra    = 10 // extra game pairs of a tied knockout match
)

// NewPlan makes the plan of a swiss or knockout tournament of n entrants;
// games is the games of each match (games_per_pair), rounds the swiss's
// rounds, extra the game pairs a tied knockout match may add. Errors name
// the field.
func NewPlan(format string, n, games_, rounds, extra int) (Plan, error) {
	var errs games.Errors
	if games_ < 1 {
		errs = errs.Add(games.Invalid("games_per_pair", "want at least 1"))
	}
	switch format {
	case KindSwiss:
		if rounds < 1 || rounds > n-1 {
			errs = errs.Add(games.Invalid("rounds", "a swiss of %d engines plays 1 to %d rounds, not %d", n, n-1, rounds).With("out_of_range", map[string]any{"value": rounds, "min": 1, "max": n - 1}))
		}
		if extra != 0 {
			errs = errs.Add(games.Invalid("max_extra", "only a knockout has extra game pairs"))
		}
		if err := errs.Err(); err != nil {
			return nil, err
		}
		return &swiss{n: n, games: games_, rounds: rounds}, nil
	case KindKnockout:
		if rounds != 0 {
			errs = errs.Add(games.Invalid("rounds", "a knockout has as many rounds as its bracket: leave rounds out"))
		}
		if n > MaxKnockout {
			errs = errs.Add(games.Invalid("engines", "a knockout takes at most %d engines, got %d", MaxKnockout, n).With("too_many_engines", map[string]any{"max": MaxKnockout, "got": n}))
		}
		if games_%2 == 1 {
			errs = errs.Add(games.Invalid("games_per_pair", "%d: a knockout match is played in game pairs, want an even number", games_).With("even", map[string]any{"value": games_}))
		}
		if extra < 0 || extra > MaxExtra {
			errs = errs.Add(games.OutOfRange("max_extra", int64(extra), 0, MaxExtra, ""))
		}
		if err := errs.Err(); err != nil {
			return nil, err
		}
		return &knockout{n: n, games: games_, extra: extra}, nil
	}
	return nil, games.Invalid("format", "%q has no plan: want swiss or knockout", format)
}

// matchSlots are the games of a match between a (black first) and b.
func matchSlots(round, match, a, b, from, to int) []Slot {
	var out []Slot
	for g := from; g < to; g++ {
		s := Slot{Round: round, Match: match, Game: g, Black: a, White: b}
		if g%2 == 1 {
			s.Black, s.White = b, a
		}
		out = append(out, s)
	}
	return out
}

// ---- swiss ----

// swiss pairs each round within score groups: entrants in order of points
// (then by their index, the seed), each paired with the next one it has not
// met, backtracking until nobody meets an opponent twice. With an odd field
// the lowest ranked entrant that has had no bye sits out and scores a won
// match (the match's games, as points). In each match the entrant whose
// black-first matches exceed its white-first ones by less has black first; on a tie, the one that had white first
// in its last match; then the higher ranked. Pairing avoids putting together
// two entrants that both had black first (or white first) two more times
// than the other colour, so that no entrant's black-first and white-first
// matches differ by more than 2 (FIDE's absolute colour criterion) unless
// only such a pairing avoids a repeat; within a match colours alternate.
type swiss struct{ n, games, rounds int }

// round is one swiss round's pairing: matches [black-first, other] and the bye.
type round struct {
	matches [][2]int
	bye     int // -1: none
}

// pairings returns the pairings of rounds 0..upto-1 and reports whether
// round upto can be paired (every game before it finished).
func (s *swiss) pairings(finished []SlotResult, upto int) ([]round, bool) {
	results := map[string]SlotResult{}
	for _, r := range finished {
		results[r.Key()] = r
	}
	var rounds []round
	points := make([]float64, s.n)
	met := make([]map[int]bool, s.n)
	for i := range met {
		met[i] = map[int]bool{}
	}
	byes := make([]bool, s.n)
	blackFirst := make([]int, s.n)
	played := make([]int, s.n)     // matches
	lastWhite := make([]bool, s.n) // had white first in its last match
	for r := range upto {
		rd := s.pair(points, met, byes, blackFirst, played, lastWhite)
		rounds = append(rounds, rd)
		for m, p := range rd.matches {
			for _, sl := range matchSlots(r, m, p[0], p[1], 0, s.games) {
				res, ok := results[sl.Key()]
				if !ok {
					return rounds, false
				}
				points[sl.Black] += res.BlackScore
				points[sl.White] += 1 - res.BlackScore
			}
			met[p[0]][p[1]], met[p[1]][p[0]] = true, true
			blackFirst[p[0]]++
			played[p[0]]++
			played[p[1]]++
			lastWhite[p[0]], lastWhite[p[1]] = false, true
		}
		if rd.bye >= 0 {
			byes[rd.bye] = true
			points[rd.bye] += float64(s.games)
		}
	}
	return rounds, true
}

// pair makes one round's pairing from the standing before it.
func (s *swiss) pair(points []float64, met []map[int]bool, byes []bool, blackFirst, played []int, lastWhite []bool) round {
	order := make([]int, s.n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case points[a] > points[b]:
			return -1
		case points[a] < points[b]:
			return 1
		}
		return a - b
	})
	rank := make([]int, s.n)
	for i, e := range order {
		rank[e] = i
	}
	rd := round{bye: -1}
	if s.n%2 == 1 {
		// The lowest ranked without a bye; if all have had one, the lowest.
		rd.bye = order[s.n-1]
		for i := s.n - 1; i >= 0; i-- {
			if !byes[order[i]] {
				rd.bye = order[i]
				break
			}
		}
		order = slices.DeleteFunc(order, func(e int) bool { return e == rd.bye })
	}
	// Colour surplus: black-first matches minus white-first ones. Two
	// entrants both at +2 (or both at -2) would push one of them to 3.
	clash := func(a, b int) bool {
		da, db := 2*blackFirst[a]-played[a], 2*blackFirst[b]-played[b]
		return (da >= 2 && db >= 2) || (da <= -2 && db <= -2)
	}
	pairs, ok := pairUp(order, func(a, b int) bool { return !met[a][b] && !clash(a, b) })
	if !ok {
		pairs, ok = pairUp(order, func(a, b int) bool { return !met[a][b] })
	}
	if !ok {
		// Every pairing repeats a match: repeats are allowed.
		pairs, _ = pairUp(order, func(int, int) bool { return true })
	}
	for _, p := range pairs {
		a, b := p[0], p[1]
		da, db := 2*blackFirst[a]-played[a], 2*blackFirst[b]-played[b]
		switch {
		case da != db:
			if db < da {
				a, b = b, a
			}
		case lastWhite[a] != lastWhite[b]:
			if lastWhite[b] {
				a, b = b, a
			}
		case rank[b] < rank[a]:
			a, b = b, a
		}
		rd.matches = append(rd.matches, [2]int{a, b})
	}
	return rd
}

// pairUp pairs the entrants in order, each with the first one after it that
// it may meet, backtracking until everyone is paired.
func pairUp(order []int, may func(a, b int) bool) ([][2]int, bool) {
	if len(order) == 0 {
		return nil, true
	}
	a := order[0]
	for i := 1; i < len(order); i++ {
		b := order[i]
		if !may(a, b) {
			continue
		}
		rest := slices.Concat(order[1:i], order[i+1:])
		if pairs, ok := pairUp(rest, may); ok {
			return append([][2]int{{a, b}}, pairs...), true
		}
	}
	return nil, false
}

func (s *swiss) Next(started map[string]bool, finished []SlotResult) ([]Slot, bool) {
	done := map[string]bool{}
	for _, r := range finished {
		done[r.Key()] = true
	}
	for r := range s.rounds {
		rounds, ok := s.pairings(finished, r+1)
		if !ok && len(rounds) < r+1 {
			return nil, false
		}
		var ready []Slot
		complete := true
		for m, p := range rounds[r].matches {
			for _, sl := range matchSlots(r, m, p[0], p[1], 0, s.games) {
				if !done[sl.Key()] {
					complete = false
					if !started[sl.Key()] {
						ready = append(ready, sl)
					}
				}
			}
		}
		if !complete {
			return ready, false
		}
	}
	return nil, true
}

func (s *swiss) Byes(finished []SlotResult) map[int][]int {
	out := map[int][]int{}
	rounds, _ := s.pairings(finished, s.rounds)
	for r, rd := range rounds {
		if rd.bye >= 0 && s.roundStarted(finished, r) {
			out[r] = []int{rd.bye}
		}
	}
	return out
}

// roundStarted: a game of round r has finished (a bye counts once its round
// is under way).
func (s *swiss) roundStarted(finished []SlotResult, r int) bool {
	for _, f := range finished {
		if f.Round == r {
			return true
		}
	}
	return false
}

func (s *swiss) Total([]SlotResult) int64 { return int64(s.rounds) * int64(s.n/2) * int64(s.games) }

// Buchholz is each entrant's tie-break: the sum of the final points (a bye
// scoring byePoints) of the opponents it met, one term per round; its own
// bye adds nothing.
func Buchholz(n int, finished []SlotResult, byes map[int][]int, byePoints float64) []float64 {
	points := make([]float64, n)
	for _, r := range finished {
		points[r.Black] += r.BlackScore
		points[r.White] += 1 - r.BlackScore
	}
	for _, list := range byes {
		for _, e := range list {
			if e >= 0 && e < n {
				points[e] += byePoints
			}
		}
	}
	seen := map[[3]int]bool{} // (entrant, round, opponent)
	out := make([]float64, n)
	for _, r := range finished {
		for _, pr := range [][2]int{{r.Black, r.White}, {r.White, r.Black}} {
			if k := [3]int{pr[0], r.Round, pr[1]}; !seen[k] {
				seen[k] = true
				out[pr[0]] += points[pr[1]]
			}
		}
	}
	return out
}

// ---- knockout ----

// knockout is a bracket: entrants seeded by their index, padded to a power of
// two with byes that go to the top seeds (1 v 8, 4 v 5, 2 v 7, 3 v 6 for 8).
// A match is games games, colours alternating; a match tied after them is
// extended by a game pair at a time, up to extra pairs; still tied, the
// higher seed (the lower index) goes on.
type knockout struct{ n, games, extra int }

// BracketMatch is one match of a knockout as the bracket draws it.
type BracketMatch struct {
	A      int     `json:"a"` // entrant index, -1 for a bye or not known yet
	B      int     `json:"b"`
	ScoreA float64 `json:"score_a"`
	ScoreB float64 `json:"score_b"`
	Games  int     `json:"games"`
	Winner int     `json:"winner"` // entrant index, -1 while undecided
	// Decided says how: "score", "seed" (tied after every extra pair),
	// "bye", or "" while undecided.
	Decided string `json:"decided,omitempty"`
}

// BracketRound is one round of a knockout.
type BracketRound struct {
	Matches []BracketMatch `json:"matches"`
}

// seeds is the bracket order of size (a power of two) seeds.
func seeds(size int) []int {
	order := []int{0}
	for len(order) < size {
		k := 2 * len(order)
		next := make([]int, 0, k)
		for _, s := range order {
			next = append(next, s, k-1-s)
		}
		order = next
	}
	return order
}

// Bracket plays the results into the bracket.
func (k *knockout) Bracket(finished []SlotResult) []BracketRound {
	size := 1
	for size < k.n {
		size *= 2
	}
	byMatch := map[[2]int][]SlotResult{}
	for _, r := range finished {
		byMatch[[2]int{r.Round, r.Match}] = append(byMatch[[2]int{r.Round, r.Match}], r)
	}
	var rounds []BracketRound
	order := seeds(size)
	var entrants []int
	for _, s := range order {
		if s >= k.n {
			s = -1
		}
		entrants = append(entrants, s)
	}
	for r := 0; len(entrants) > 1; r++ {
		var rd BracketRound
		var winners []int
		for m := 0; m < len(entrants)/2; m++ {
			bm := BracketMatch{A: entrants[2*m], B: entrants[2*m+1], Winner: -1}
			switch {
			case bm.A >= 0 && bm.B < 0 && r == 0:
				bm.Winner, bm.Decided = bm.A, "bye"
			case bm.B >= 0 && bm.A < 0 && r == 0:
				bm.Winner, bm.Decided = bm.B, "bye"
			case bm.A >= 0 && bm.B >= 0:
				k.score(&bm, byMatch[[2]int{r, m}])
			}
			rd.Matches = append(rd.Matches, bm)
			winners = append(winners, bm.Winner)
		}
		rounds = append(rounds, rd)
		entrants = winners
	}
	return rounds
}

// needed is the number of games a match has to play given its games so far.
func (k *knockout) needed(bm *BracketMatch, results []SlotResult) int {
	need := k.games
	for {
		played := 0
		var a, b float64
		for _, r := range results {
			if r.Game < need {
				played++
				sa := r.BlackScore
				if r.Black != bm.A {
					sa = 1 - sa
				}
				a += sa
				b += 1 - sa
			}
		}
		if played < need || a != b || need >= k.games+2*k.extra {
			return need
		}
		need += 2
	}
}

// score fills in a match's score and winner from its games.
func (k *knockout) score(bm *BracketMatch, results []SlotResult) {
	need := k.needed(bm, results)
	for _, r := range results {
		if r.Game >= need {
			continue
		}
		bm.Games++
		sa := r.BlackScore
		if r.Black != bm.A {
			sa = 1 - sa
		}
		bm.ScoreA += sa
		bm.ScoreB += 1 - sa
	}
	if bm.Games < need {
		return
	}
	switch {
	case bm.ScoreA > bm.ScoreB:
		bm.Winner, bm.Decided = bm.A, "score"
	case bm.ScoreB > bm.ScoreA:
		bm.Winner, bm.Decided = bm.B, "score"
	default:
		bm.Winner, bm.Decided = min(bm.A, bm.B), "seed"
	}
}

func (k *knockout) Next(started map[string]bool, finished []SlotResult) ([]Slot, bool) {
	var ready []Slot
	rounds := k.Bracket(finished)
	byMatch := map[[2]int][]SlotResult{}
	for _, r := range finished {
		byMatch[[2]int{r.Round, r.Match}] = append(byMatch[[2]int{r.Round, r.Match}], r)
	}
	for r, rd := range rounds {
		for m, bm := range rd.Matches {
			if bm.A < 0 || bm.B < 0 || bm.Winner >= 0 {
				continue
			}
			need := k.needed(&bm, byMatch[[2]int{r, m}])
			for _, sl := range matchSlots(r, m, bm.A, bm.B, 0, need) {
				if !started[sl.Key()] {
					ready = append(ready, sl)
				}
			}
		}
	}
	final := rounds[len(rounds)-1].Matches[0]
	return ready, final.Winner >= 0
}

func (k *knockout) Byes([]SlotResult) map[int][]int {
	out := map[int][]int{}
	for _, bm := range k.Bracket(nil)[0].Matches {
		if bm.Decided == "bye" {
			out[0] = append(out[0], bm.Winner)
		}
	}
	return out
}

func (k *knockout) Total(finished []SlotResult) int64 {
	total := int64(k.n-1) * int64(k.games)
	byMatch := map[[2]int][]SlotResult{}
	for _, r := range finished {
		byMatch[[2]int{r.Round, r.Match}] = append(byMatch[[2]int{r.Round, r.Match}], r)
	}
	for r, rd := range k.Bracket(finished) {
		for m, bm := range rd.Matches {
			if bm.A >= 0 && bm.B >= 0 {
				total += int64(k.needed(&bm, byMatch[[2]int{r, m}]) - k.games)
			}
		}
	}
	return total
}
