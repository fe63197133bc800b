// Package stats is what engine authors read off a match: Elo with its 95%
// interval, normalized Elo, the likelihood of superiority and the draw ratio,
// from game pairs (pentanomial) or single games (trinomial), and the
// generalized sequential probability ratio test (GSPRT) that stops a match as
// soon as it can tell elo0 from elo1.
//
// The formulas are those of fastchess (app/src/matchmaking/elo/
// elo_pentanomial.cpp, elo_wdl.cpp, sprt/sprt.cpp) and fishtest
// (server/fishtest/stats/stat_util.py, LLRcalc.py), written anew here:
//
//   - a game pair scores 0, 0.25, 0.5, 0.75 or 1 per game; μ is the mean and
//     σ² the variance of that score over the N pairs (over the N games, with
//     scores 0, 0.5 and 1, for trinomial counts);
//   - Elo = −400·log10(1/μ − 1), and its interval is μ ± 1.96·σ/√N mapped
//     through the same function (the error is half its width);
//   - nElo = (μ − 0.5)/(√2·σ)·800/ln 10 for pairs, (μ − 0.5)/σ·800/ln 10 for
//     games, with the error 1.96·(800/ln 10)/√(2N) and 1.96·(800/ln 10)/√N;
//   - LOS = Φ((μ − 0.5)/(σ/√N));
//   - the LLR is that of the GSPRT: the log-likelihood of the counts under
//     the distribution of greatest likelihood whose mean is the score of elo1
//     (model logistic; for model normalized, whose t-value (μ − 0.5)/σ is
//     that of nElo elo1), minus the same for elo0 (fishtest's LLR_logistic
//     and LLR_normalized). Empty categories get 1e-3 of a count first.
package stats

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Penta counts game pairs by the first engine's points in the pair: 0, 0.5,
// 1, 1.5 and 2 (LL, LD, DD or WL, WD, WW).
type Penta [5]int64

// WDL counts single games from the first engine's view.
type WDL struct{ W, D, L int64 }

// Estimate is what the tables show. Elo is finite (JSON has no infinity): a
// score of 0% or 100%, or an interval that leaves (0, 1), is taken at the
// nearest score a match of that size could tell apart from it (half a point
// from the end), as the chess tools print a large finite Elo. Where every
// game (pair) scored the same and that is not even, the spread is unknown:
// EloError and NElo are NaN (callers show them as unknown, JSON as null).
type Estimate struct {
	Games     int64   // games counted (2 per pair for Penta)
	Score     float64 // mean score per game, 0..1
	Elo       float64 // logistic Elo difference
	EloError  float64 // half-width of the 95% interval of Elo
	NElo      float64 // normalized Elo
	NEloError float64 // its 95% half-width
	LOS       float64 // likelihood of superiority, 0..1
	// DrawRatio is the fraction of draws: of games for WDL, of game pairs
	// scored one point (DD or WL, fastchess's "DD+WL") for Penta.
	DrawRatio float64
}

const (
	z95       = 1.959963984540054 // the 97.5% quantile of the normal distribution
	nEloScale = 800 / math.Ln10
)

// pairScores are a pair's points per game, by Penta index.
var pairScores = []float64{0, 0.25, 0.5, 0.75, 1}

// gameScores are a game's points, in WDL order.
var gameScores = []float64{1, 0.5, 0}

// FromPenta estimates from game pairs.
func FromPenta(p Penta) Estimate {
	n := sum(p[:])
	if n == 0 {
		return Estimate{}
	}
	mu, variance := moments(p[:], pairScores)
	nf := float64(n)
	e := estimate(mu, math.Sqrt(variance/nf), 2*nf)
	e.NElo = nelo(mu, math.Sqrt2*math.Sqrt(variance))
	e.NEloError = z95 * nEloScale / math.Sqrt(2*nf)
	e.Games = 2 * n
	e.DrawRatio = float64(p[2]) / nf
	return e
}

// FromWDL estimates from single games.
func FromWDL(w WDL) Estimate {
	c := []int64{w.W, w.D, w.L}
	n := sum(c)
	if n == 0 {
		return Estimate{}
	}
	mu, variance := moments(c, gameScores)
	nf := float64(n)
	e := estimate(mu, math.Sqrt(variance/nf), nf)
	e.NElo = nelo(mu, math.Sqrt(variance))
	e.NEloError = z95 * nEloScale / math.Sqrt(nf)
	e.Games = n
	e.DrawRatio = float64(w.D) / nf
	return e
}

// nelo is the normalized Elo of a mean score with standard deviation sd;
// NaN when sd is 0 and the score is not even.
func nelo(mu, sd float64) float64 {
	switch {
	case sd > 0:
		return (mu - 0.5) / sd * nEloScale
	case mu == 0.5:
		return 0
	}
	return math.NaN()
}

// estimate fills in Elo, its error and LOS from a mean score, its standard
// error, and the number of games (for the nearest telling score).
func estimate(mu, se, games float64) Estimate {
	lo, hi := mu-z95*se, mu+z95*se
	e := Estimate{Score: mu, Elo: elo(mu, games)}
	if se == 0 && mu != 0.5 && games > 0 {
		// Every game (pair) scored the same, and not even: the results have
		// no spread to measure. The exact binomial (Clopper-Pearson) 95%
		// interval of a score of n out of n (or 0 out of n) still bounds it:
		// from (2.5%)^(1/n) to 1 (issue 37: a clean sweep's honest interval).
		edge := math.Pow(0.025, 1/games)
		lo, hi = edge, 1.0
		if mu < 0.5 {
			lo, hi = 0, 1-edge
		}
	}
	e.EloError = (elo(hi, games) - elo(lo, games)) / 2
	switch {
	case se > 0:
		e.LOS = phi((mu - 0.5) / se)
	case mu > 0.5:
		e.LOS = 1
	case mu < 0.5:
		e.LOS = 0
	default:
		e.LOS = 0.5
	}
	return e
}

// elo is the logistic Elo of a score, the score kept half a point inside
// (0, 1) for a match of games games.
func elo(s, games float64) float64 {
	eps := 0.5 / games
	s = min(max(s, eps), 1-eps)
	return -400 * math.Log10(1/s-1)
}

// scoreOf is the expected score of an Elo difference (logistic).
func scoreOf(elo float64) float64 { return 1 / (1 + math.Pow(10, -elo/400)) }

func phi(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

func sum(c []int64) int64 {
	var n int64
	for _, v := range c {
		n += v
	}
	return n
}

// moments returns the mean and variance of the scores weighted by counts.
func moments(counts []int64, scores []float64) (mu, variance float64) {
	n := float64(sum(counts))
	for i, c := range counts {
		mu += float64(c) / n * scores[i]
	}
	for i, c := range counts {
		d := scores[i] - mu
		variance += float64(c) / n * d * d
	}
	return mu, variance
}

// SPRT is a sequential probability ratio test of elo0 (H0) against elo1 (H1).
type SPRT struct {
	Elo0  float64 `json:"elo0"`
	Elo1  float64 `json:"elo1"`
	Alpha float64 `json:"alpha"`
	Beta  float64 `json:"beta"`
	// Model is "normalized" (elo0 and elo1 are normalized Elo, fastchess's
	// default) or "logistic" (they are Elo differences).
	Model string `json:"model"`
}

// Models of the SPRT's bounds.
const (
	Logistic   = "logistic"
	Normalized = "normalized"
)

// ParseSPRT reads "elo0=0 elo1=5 alpha=0.05 beta=0.05 model=logistic", as
// separate words or one string, in any order. elo0 and elo1 are required;
// alpha and beta default to 0.05, model to normalized (as fastchess).
func ParseSPRT(args ...string) (SPRT, error) {
	t := SPRT{Alpha: 0.05, Beta: 0.05, Model: Normalized}
	var seen0, seen1 bool
	for _, w := range strings.Fields(strings.Join(args, " ")) {
		key, val, ok := strings.Cut(w, "=")
		if !ok {
			return SPRT{}, fmt.Errorf("sprt: %q: want name=value (elo0, elo1, alpha, beta, model)", w)
		}
		if key == "model" {
			if val != Logistic && val != Normalized {
				return SPRT{}, fmt.Errorf("sprt: model: %q: want logistic or normalized", val)
			}
			t.Model = val
			continue
		}
		var dst *float64
		switch key {
		case "elo0":
			dst, seen0 = &t.Elo0, true
		case "elo1":
			dst, seen1 = &t.Elo1, true
		case "alpha":
			dst = &t.Alpha
		case "beta":
			dst = &t.Beta
		default:
			return SPRT{}, fmt.Errorf("sprt: unknown setting %q (want elo0, elo1, alpha, beta, model)", key)
		}
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return SPRT{}, fmt.Errorf("sprt: %s: %q is not a number", key, val)
		}
		*dst = f
	}
	switch {
	case !seen0:
		return SPRT{}, fmt.Errorf("sprt: elo0 is required (elo0=0 elo1=5)")
	case !seen1:
		return SPRT{}, fmt.Errorf("sprt: elo1 is required (elo0=0 elo1=5)")
	case t.Elo0 >= t.Elo1:
		return SPRT{}, fmt.Errorf("sprt: elo0 (%g) must be less than elo1 (%g)", t.Elo0, t.Elo1)
	case t.Alpha <= 0 || t.Alpha >= 0.5:
		return SPRT{}, fmt.Errorf("sprt: alpha: %g is outside (0, 0.5)", t.Alpha)
	case t.Beta <= 0 || t.Beta >= 0.5:
		return SPRT{}, fmt.Errorf("sprt: beta: %g is outside (0, 0.5)", t.Beta)
	case math.Abs(t.Elo0) > 2000 || math.Abs(t.Elo1) > 2000:
		return SPRT{}, fmt.Errorf("sprt: elo0 and elo1 must be within ±2000")
	}
	return t, nil
}

// String writes the test as ParseSPRT reads it.
func (t SPRT) String() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	return "elo0=" + f(t.Elo0) + " elo1=" + f(t.Elo1) + " alpha=" + f(t.Alpha) + " beta=" + f(t.Beta) + " model=" + t.Model
}

// Bounds are the LLR's: H0 is accepted at or below lower, H1 at or over upper.
func (t SPRT) Bounds() (lower, upper float64) {
	return math.Log(t.Beta / (1 - t.Alpha)), math.Log((1 - t.Beta) / t.Alpha)
}

// Decision is what an SPRT decides from an LLR, as stored and sent.
type Decision string

// Decisions of an SPRT.
const (
	AcceptH0 Decision = "H0"       // H0 accepted: elo0 rather than elo1
	AcceptH1 Decision = "H1"       // H1 accepted: elo1 rather than elo0
	Continue Decision = "continue" // play on
)

// Result says what an LLR decides: AcceptH0, AcceptH1 or Continue.
func (t SPRT) Result(llr float64) Decision {
	lo, hi := t.Bounds()
	switch {
	case llr >= hi:
		return AcceptH1
	case llr <= lo:
		return AcceptH0
	}
	return Continue
}

// LLR is the GSPRT's log-likelihood ratio on game pairs.
func (t SPRT) LLR(p Penta) float64 { return t.llr(p[:], pairScores, math.Sqrt2) }

// LLRWDL is the GSPRT's log-likelihood ratio on single games.
func (t SPRT) LLRWDL(w WDL) float64 { return t.llr([]int64{w.W, w.D, w.L}, gameScores, 1) }

// regularization is added to every empty category before the LLR is
// computed, as fishtest does (LLRcalc.regularize), so that one-sided counts
// (37 won pairs and 2 drawn) have a finite, sensible LLR.
const regularization = 1e-3

// llr computes the GSPRT on counts of results with the given scores; k is
// √2 for pairs (a pair's nElo divides its t-value by √2).
func (t SPRT) llr(counts []int64, scores []float64, k float64) float64 {
	n := float64(sum(counts))
	if n == 0 {
		return 0
	}
	freq := make([]float64, len(counts))
	var total float64
	for i, c := range counts {
		freq[i] = float64(c)
		if c == 0 {
			freq[i] = regularization
		}
		total += freq[i]
	}
	for i := range freq {
		freq[i] /= total
	}
	var p0, p1 []float64
	if t.Model == Normalized {
		p0 = mleTValue(freq, scores, t.Elo0/nEloScale*k)
		p1 = mleTValue(freq, scores, t.Elo1/nEloScale*k)
	} else {
		p0 = mleMean(freq, scores, scoreOf(t.Elo0))
		p1 = mleMean(freq, scores, scoreOf(t.Elo1))
	}
	var llr float64
	for i, f := range freq {
		llr += f * math.Log(p1[i]/p0[i])
	}
	return n * llr
}

// mleMean is the distribution of greatest likelihood for the frequencies
// whose mean score is s.
func mleMean(freq, scores []float64, s float64) []float64 {
	a := make([]float64, len(scores))
	for i, x := range scores {
		a[i] = x - s
	}
	return tilt(freq, a)
}

// mleTValue is the distribution of greatest likelihood for the frequencies
// whose t-value (μ − 0.5)/σ is tv, found as fishtest does (LLRcalc.MLE_t_value):
// the constraint is linearized around the current estimate, starting from the
// uniform distribution, until it no longer moves.
func mleTValue(freq, scores []float64, tv float64) []float64 {
	p := make([]float64, len(freq))
	for i := range p {
		p[i] = 1 / float64(len(p))
	}
	a := make([]float64, len(scores))
	for range 100 {
		mu, variance := momentsF(p, scores)
		sigma := math.Sqrt(variance)
		for i, x := range scores {
			d := (mu - x) / sigma
			a[i] = x - 0.5 - tv*sigma*(1+d*d)/2
		}
		next := tilt(freq, a)
		moved := 0.0
		for i := range p {
			moved = max(moved, math.Abs(next[i]-p[i]))
		}
		p = next
		if moved < 1e-12 {
			break
		}
	}
	return p
}

// tilt returns p_i = f_i/(1 + λ·a_i), with λ such that the p_i sum to one
// (Lagrange's condition for the most likely distribution with Σ p_i·a_i = 0:
// Σ f_i·a_i/(1 + λ·a_i) = 0). That sum falls as λ grows over the interval
// where every 1 + λ·a_i is positive, so λ is found by bisection there.
func tilt(freq, a []float64) []float64 {
	lo, hi := math.Inf(-1), math.Inf(1)
	for _, v := range a {
		switch {
		case v > 0:
			lo = max(lo, -1/v)
		case v < 0:
			hi = min(hi, -1/v)
		}
	}
	p := make([]float64, len(freq))
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		copy(p, freq) // every a_i of one sign: no such distribution; none is more likely
		return p
	}
	g := func(lambda float64) float64 {
		var s float64
		for i, f := range freq {
			s += f * a[i] / (1 + lambda*a[i])
		}
		return s
	}
	for range 200 {
		m := (lo + hi) / 2
		if g(m) > 0 {
			lo = m
		} else {
			hi = m
		}
	}
	lambda := (lo + hi) / 2
	for i, f := range freq {
		p[i] = f / (1 + lambda*a[i])
	}
	return p
}

func momentsF(freq, scores []float64) (mu, variance float64) {
	for i, f := range freq {
		mu += f * scores[i]
	}
	for i, f := range freq {
		d := scores[i] - mu
		variance += f * d * d
	}
	return mu, variance
}

// Counter counts a match's games as they finish, from the first engine's
// view: every game (WDL) and, for games played in pairs, each pair once its
// second game is in (Penta).
type Counter struct {
	WDL   WDL
	Penta Penta
	open  map[int64]int // pair → the first engine's half points in its first game
}

// Add counts a game in which the first engine scored half half-points (2 a
// win, 1 a draw, 0 a loss); pair is its game pair (0: not in a pair). It
// reports whether the game completed its pair.
func (c *Counter) Add(pair int64, half int) bool {
	switch half {
	case 2:
		c.WDL.W++
	case 1:
		c.WDL.D++
	default:
		c.WDL.L++
	}
	if pair == 0 {
		return false
	}
	first, ok := c.open[pair]
	if !ok {
		if c.open == nil {
			c.open = map[int64]int{}
		}
		c.open[pair] = half
		return false
	}
	delete(c.open, pair)
	c.Penta[first+half]++
	return true
}
