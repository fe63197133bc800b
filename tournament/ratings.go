package tournament

import (
	"math"
	"sort"
)

// EloDiff returns the Elo difference a score implies for the first of two
// players and the half-width of its 95% confidence interval, finite at every
// score. The interval is the normal one on the per-game results, as
// cutechess-cli computes it, while that stays inside scores of 0 to 1;
// and is not empty; otherwise it is the Wilson score interval, which does. At
// a score of 0% or 100% (where the Elo difference itself is infinite), and
// with no game, one virtual draw is added first, as BayesElo's prior does:
// 2-0 reads 279.6, not infinity.
func EloDiff(wins, draws, losses int64) (diff, margin float64) {
	w, d, l := float64(wins), float64(draws), float64(losses)
	if d == 0 && (w == 0 || l == 0) {
		d = 1 // a score of 0% or 100%, or no game at all
	}
	n := w + d + l
	s := (w + d/2) / n
	variance := (w*(1-s)*(1-s) + d*(0.5-s)*(0.5-s) + l*s*s) / n
	const z = 1.959964
	half := z * math.Sqrt(variance/n)
	lo, hi := s-half, s+half
	if lo <= 0 || hi >= 1 || variance == 0 {
		// Wilson: the interval of a proportion that never leaves (0, 1),
		// and is not empty when every game had the same result (all draws).
		c := (s + z*z/(2*n)) / (1 + z*z/n)
		h := z / (1 + z*z/n) * math.Sqrt(s*(1-s)/n+z*z/(4*n*n))
		lo, hi = c-h, c+h
	}
	return eloOfScore(s), (eloOfScore(hi) - eloOfScore(lo)) / 2
}

func eloOfScore(s float64) float64 {
	if s <= 0 {
		return math.Inf(-1)
	}
	if s >= 1 {
		return math.Inf(1)
	}
	return 400 * math.Log10(s/(1-s))
}

// priorDraws is the number of virtual draws each engine plays against an
// opponent rated 0, as BayesElo's prior does: it keeps the rating of an engine
// that won or lost everything finite, and weighs little against real games.
const priorDraws = 2.0

// Ratings computes Elo ratings by maximum likelihood under the Bradley-Terry
// model, with a draw counting as half a win and half a loss (the model BayesElo
// and Ordo use), anchored so that the average is 0. err is the half-width of a
// 95% interval from the diagonal of the Fisher information.
func Ratings(ids []int64, pairs []PairResult) (elo, err map[int64]float64) {
	n := len(ids)
	at := make(map[int64]int, n)
	for i, id := range ids {
		at[id] = i
	}
	type edge struct {
		i, j  int
		games float64
	}
	var (
		edges []edge
		wins  = make([]float64, n) // score of each engine, prior included
	)
	for _, p := range pairs {
		i, ok1 := at[p.A]
		j, ok2 := at[p.B]
		games := float64(p.AWins + p.Draws + p.BWins)
		if !ok1 || !ok2 || games == 0 {
			continue
		}
		edges = append(edges, edge{i, j, games})
		wins[i] += float64(p.AWins) + float64(p.Draws)/2
		wins[j] += float64(p.BWins) + float64(p.Draws)/2
	}
	for i := range wins {
		wins[i] += priorDraws / 2
	}
	// Minorisation-maximisation (Hunter 2004) on gamma = 10^(r/400); gamma 1 is
	// the prior's opponent.
	gamma := make([]float64, n)
	for i := range gamma {
		gamma[i] = 1
	}
	denom := make([]float64, n)
	for iter := 0; iter < 10000; iter++ {
		for i := range denom {
			denom[i] = priorDraws / (gamma[i] + 1)
		}
		for _, e := range edges {
			d := e.games / (gamma[e.i] + gamma[e.j])
			denom[e.i] += d
			denom[e.j] += d
		}
		change := 0.0
		for i := range gamma {
			g := wins[i] / denom[i]
			change = math.Max(change, math.Abs(math.Log(g/gamma[i])))
			gamma[i] = g
		}
		// Stop when no rating moves by a thousandth of an Elo point.
		if change < 0.001*math.Ln10/400 {
			break
		}
	}
	r := make([]float64, n)
	mean := 0.0
	for i, g := range gamma {
		r[i] = 400 * math.Log10(g)
		mean += r[i] / float64(n)
	}
	// Fisher information of each rating, in Elo units.
	info := make([]float64, n)
	k := math.Ln10 / 400
	for i := range info {
		p := 1 / (1 + math.Pow(10, -r[i]/400))
		info[i] = priorDraws * p * (1 - p) * k * k
	}
	for _, e := range edges {
		p := 1 / (1 + math.Pow(10, (r[e.j]-r[e.i])/400))
		v := e.games * p * (1 - p) * k * k
		info[e.i] += v
		info[e.j] += v
	}
	elo, err = make(map[int64]float64, n), make(map[int64]float64, n)
	for i, id := range ids {
		elo[id] = r[i] - mean
		err[id] = 1.959964 / math.Sqrt(info[i])
	}
	return elo, err
}

// Table completes standings rows with points, score and ratings, and sorts them
// best first: by points, then Elo, then disc difference, then name.
func Table(rows []Standing, pairs []PairResult) []Standing {
	ids := make([]int64, len(rows))
	for i, s := range rows {
		ids[i] = s.EngineID
	}
	elo, errs := Ratings(ids, pairs)
	for i := range rows {
		s := &rows[i]
		s.Points = float64(s.Wins) + float64(s.Draws)/2
		if s.Games > 0 {
			s.ScorePct = 100 * s.Points / float64(s.Games)
		}
		s.Elo = math.Round(elo[s.EngineID]*10) / 10
		s.EloError = math.Round(errs[s.EngineID]*10) / 10
	}
	sortTable(rows)
	return rows
}

// sortTable orders a table: points, then Buchholz (swiss), Elo, disc
// difference and name.
func sortTable(rows []Standing) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		switch {
		case a.Points != b.Points:
			return a.Points > b.Points
		case a.Buchholz != b.Buchholz:
			return a.Buchholz > b.Buchholz
		case a.Elo != b.Elo:
			return a.Elo > b.Elo
		case a.DiscDiff != b.DiscDiff:
			return a.DiscDiff > b.DiscDiff
		}
		return a.Name < b.Name
	})
}
