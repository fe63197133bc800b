package stats

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A case is a set of counts with the figures fastchess printed for them
// (published outputs: its README's example and a public dev log of an engine
// tested with it, model normalized, bounds [0, 10] unless said), which were
// computed by neither this package nor its reference script.
type fixedCase struct {
	counts     []int64 // 5: pentanomial, 3: W, D, L
	elo0, elo1 float64
	model      string
	// Figures, NaN where the source did not print one.
	elo, eloErr, nelo, neloErr, los, llr float64
}

var nan = math.NaN()

var published = []fixedCase{
	// fastchess README: Ptnml [0, 0, 2, 0, 37], [0, 20].
	{[]int64{0, 0, 2, 0, 37}, 0, 20, Normalized, 631.91, nan, 1056.68, 77.10, nan, 2.96},
	// eschec's dev log (fastchess, 200 games each).
	{[]int64{1, 11, 47, 25, 16}, 0, 10, Normalized, 77.71, 33.03, 117.50, 48.15, 100.00, 1.71},
	{[]int64{1, 15, 25, 33, 26}, 0, 10, Normalized, 123.02, 40.58, 159.46, 48.15, 100.00, 2.19},
	{[]int64{1, 24, 42, 25, 8}, 0, 10, Normalized, 26.11, 31.23, 40.51, 48.15, 95.04, 0.60},
	{[]int64{2, 23, 32, 35, 8}, 0, 10, Normalized, 41.89, 33.28, 61.39, 48.15, 99.38, 0.92},
}

// figures computes a case's figures with this package.
func figures(c fixedCase) map[string]float64 {
	t := SPRT{Elo0: c.elo0, Elo1: c.elo1, Alpha: 0.05, Beta: 0.05, Model: c.model}
	var e Estimate
	var llr float64
	if len(c.counts) == 5 {
		p := Penta(c.counts)
		e, llr = FromPenta(p), t.LLR(p)
	} else {
		w := WDL{c.counts[0], c.counts[1], c.counts[2]}
		e, llr = FromWDL(w), t.LLRWDL(w)
	}
	return map[string]float64{"elo": e.Elo, "elo_error": e.EloError, "nelo": e.NElo, "nelo_error": e.NEloError, "los": 100 * e.LOS, "llr": llr}
}

func check(t *testing.T, what string, got map[string]float64, want map[string]float64) {
	t.Helper()
	for k, w := range want {
		if math.IsNaN(w) {
			continue
		}
		if g := got[k]; math.Abs(g-w) > 0.01+1e-9 {
			t.Errorf("%s: %s = %.4f, want %.4f", what, k, g, w)
		}
	}
}

// The figures agree with fastchess's published output to its two decimals.
func TestPublishedFastchessFigures(t *testing.T) {
	for _, c := range published {
		check(t, fmt.Sprint("counts ", c.counts), figures(c), map[string]float64{
			"elo": c.elo, "elo_error": c.eloErr, "nelo": c.nelo, "nelo_error": c.neloErr, "los": c.los, "llr": c.llr,
		})
	}
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

// The figures agree within 0.1 with an independent computation (a Python
// script with other numerics) on counts of every shape: pentanomial and
// trinomial, even, lopsided, with empty categories, both models.
func TestAgainstReference(t *testing.T) {
	cases := append([]fixedCase(nil), published...)
	for _, c := range []fixedCase{
		{counts: []int64{10, 40, 100, 40, 10}, elo0: 0, elo1: 5, model: Logistic},
		{counts: []int64{3, 20, 50, 30, 12}, elo0: -3, elo1: 3, model: Logistic},
		{counts: []int64{0, 2, 9, 20, 30}, elo0: 0, elo1: 50, model: Logistic},
		{counts: []int64{0, 0, 0, 0, 12}, elo0: 0, elo1: 50, model: Logistic},
		{counts: []int64{5, 0, 30, 0, 7}, elo0: 0, elo1: 10, model: Normalized},
		{counts: []int64{120, 300, 110}, elo0: 0, elo1: 5, model: Logistic},
		{counts: []int64{60, 10, 30}, elo0: 0, elo1: 20, model: Normalized},
	} {
		cases = append(cases, c)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is needed for the reference computation")
		}
		t.Skip("no python3")
	}
	var req []map[string]any
	for _, c := range cases {
		req = append(req, map[string]any{"counts": c.counts, "elo0": c.elo0, "elo1": c.elo1, "model": c.model})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "python3", "testdata/reference.py")
	cmd.Stdin = strings.NewReader(jsonOf(req))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference.py: %v\n%s", err, stderr.String())
	}
	var ref []map[string]float64
	if err := json.Unmarshal(out, &ref); err != nil || len(ref) != len(cases) {
		t.Fatalf("reference.py: %v, %d results for %d cases: %s", err, len(ref), len(cases), out)
	}
	for i, c := range cases {
		got := figures(c)
		for k, w := range ref[i] {
			if k == "los" {
				w *= 100
			}
			if math.IsInf(w, 0) {
				continue // the reference has no finite Elo at a score of 100%
			}
			if g := got[k]; math.Abs(g-w) > 0.1 {
				t.Errorf("counts %v %s: %s = %.4f, reference %.4f", c.counts, c.model, k, g, w)
			}
		}
	}
	t.Logf("%d sets of counts agree with the reference", len(cases))
}

// Edge cases give finite figures: no games, all wins, all draws.
func TestEdges(t *testing.T) {
	if e := FromPenta(Penta{}); e != (Estimate{}) {
		t.Errorf("no pairs: %+v", e)
	}
	for _, p := range []Penta{{0, 0, 0, 0, 5}, {5, 0, 0, 0, 0}, {0, 0, 7, 0, 0}, {1, 0, 0, 0, 5}} {
		e := FromPenta(p)
		for _, v := range []float64{e.Elo, e.NEloError, e.LOS} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("%v: %+v is not finite", p, e)
			}
		}
		// The spread of one kind of pair that is not even is unknown: no
		// nElo; the Elo's interval is the exact binomial one (issue 37).
		unknown := p[0]+p[4] > 0 && p[1]+p[2]+p[3] == 0 && (p[0] == 0 || p[4] == 0)
		if math.IsNaN(e.EloError) || math.IsInf(e.EloError, 0) || e.EloError <= 0 && p[2] == 0 || math.IsNaN(e.NElo) != unknown {
			t.Errorf("%v: error %v, nElo %v; unknown is %v", p, e.EloError, e.NElo, unknown)
		}
		for _, m := range []string{Logistic, Normalized} {
			if l := (SPRT{Elo0: 0, Elo1: 10, Alpha: .05, Beta: .05, Model: m}).LLR(p); math.IsNaN(l) || math.IsInf(l, 0) {
				t.Errorf("%v %s: LLR %v", p, m, l)
			}
		}
	}
	if e := FromPenta(Penta{0, 0, 0, 0, 5}); e.Elo <= 0 || e.LOS != 1 {
		t.Errorf("all won: %+v", e)
	}
	if l := (SPRT{Elo1: 5, Alpha: .05, Beta: .05}).LLR(Penta{}); l != 0 {
		t.Errorf("LLR of nothing %v", l)
	}
}

func TestParseSPRT(t *testing.T) {
	got, err := ParseSPRT("elo0=0", "elo1=5 alpha=0.1", "beta=0.2 model=logistic")
	if err != nil || got != (SPRT{Elo0: 0, Elo1: 5, Alpha: 0.1, Beta: 0.2, Model: Logistic}) {
		t.Fatalf("%+v %v", got, err)
	}
	back, err := ParseSPRT(got.String())
	if err != nil || back != got {
		t.Errorf("round trip %q: %+v %v", got.String(), back, err)
	}
	def, err := ParseSPRT("elo1=5 elo0=-1")
	if err != nil || def.Alpha != 0.05 || def.Beta != 0.05 || def.Model != Normalized {
		t.Errorf("defaults %+v %v", def, err)
	}
	for in, want := range map[string]string{
		"elo0=0":                       "elo1",
		"elo1=5":                       "elo0",
		"elo0=x elo1=5":                "elo0",
		"elo0=0 elo1=5 gamma=1":        "gamma",
		"elo0=5 elo1=0":                "elo0",
		"elo0=0 elo1=5 alpha=0.7":      "alpha",
		"elo0=0 elo1=5 beta=0":         "beta",
		"elo0=0 elo1=5 model=bayesian": "model",
		"elo0=0 elo1=5 alpha":          "alpha",
	} {
		if _, err := ParseSPRT(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error naming %s", in, err, want)
		}
	}
}

func TestBoundsAndResult(t *testing.T) {
	s := SPRT{Elo0: 0, Elo1: 5, Alpha: 0.05, Beta: 0.05}
	lo, hi := s.Bounds()
	if math.Abs(lo+2.944) > 0.001 || math.Abs(hi-2.944) > 0.001 {
		t.Errorf("bounds %v %v, want ±2.944", lo, hi)
	}
	for llr, want := range map[float64]Decision{3: "H1", hi: "H1", -3: "H0", lo: "H0", 0: "continue", 2.9: "continue"} {
		if got := s.Result(llr); got != want {
			t.Errorf("Result(%v) = %s, want %s", llr, got, want)
		}
	}
}

// simulate plays pairs between engines whose true difference is elo (a
// win, draw and loss model with 30% draws per game) until the SPRT decides
// or max pairs, and returns the decision and the pairs played.
func simulate(rng *rand.Rand, t SPRT, elo float64, maxPairs int) (Decision, int) {
	s := scoreOf(elo)
	draw := 0.3
	win := s - draw/2
	var p Penta
	for n := 1; n <= maxPairs; n++ {
		pts := 0
		for range 2 {
			switch r := rng.Float64(); {
			case r < win:
				pts += 2
			case r < win+draw:
				pts++
			}
		}
		p[pts]++
		if r := t.Result(t.LLR(p)); r != "continue" {
			return r, n
		}
	}
	return "continue", maxPairs
}

// The test decides as a test should: a true +50 Elo reaches H1 well before
// 1000 pairs, and equal engines rarely accept H1 (alpha = 5%).
func TestSPRTDecides(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, model := range []string{Logistic, Normalized} {
		sp := SPRT{Elo0: 0, Elo1: 50, Alpha: 0.05, Beta: 0.05, Model: model}
		h1, falseH1 := 0, 0
		for range 20 {
			if r, n := simulate(rng, sp, 50, 1000); r == "H1" && n < 1000 {
				h1++
			}
			if r, _ := simulate(rng, sp, 0, 1000); r == "H1" {
				falseH1++
			}
		}
		if h1 < 15 || falseH1 > 4 {
			t.Errorf("%s: +50 Elo reached H1 in %d of 20 runs (want most), equal engines in %d (want few)", model, h1, falseH1)
		}
	}
}

// Counter counts every game and each pair once both its games are in,
// whatever order the games of different pairs finish in.
func TestCounter(t *testing.T) {
	var c Counter
	for _, g := range []struct {
		pair     int64
		half     int
		complete bool
	}{{1, 2, false}, {2, 0, false}, {1, 1, true}, {0, 2, false}, {2, 0, true}, {3, 2, false}} {
		if got := c.Add(g.pair, g.half); got != g.complete {
			t.Errorf("Add(%d, %d) = %v, want %v", g.pair, g.half, got, g.complete)
		}
	}
	if c.WDL != (WDL{W: 3, D: 1, L: 2}) || c.Penta != (Penta{1, 0, 0, 1, 0}) {
		t.Errorf("WDL %+v, Penta %v", c.WDL, c.Penta)
	}
}

// TestCleanSweepInterval (issue 37, item 16): 10 games won of 10 have a
// finite interval, the exact binomial one: the score's lower bound is
// 0.025^(1/10) = 0.6915 (Elo +140.5), its upper 1 (Elo at the nearest
// telling score, 0.95: +511.5), half the width of which is the error.
func TestCleanSweepInterval(t *testing.T) {
	e := FromWDL(WDL{W: 10})
	want := (elo(1, 10) - elo(math.Pow(0.025, 0.1), 10)) / 2
	if math.IsNaN(e.EloError) || math.Abs(e.EloError-want) > 1e-9 || math.Abs(want-185.5) > 0.5 {
		t.Errorf("10 of 10: Elo %.1f +/- %.1f, want +/- %.1f (185.5)", e.Elo, e.EloError, want)
	}
	if l := FromWDL(WDL{L: 10}); math.Abs(l.EloError-want) > 1e-9 || math.Abs(l.Elo+e.Elo) > 1e-9 {
		t.Errorf("0 of 10: %+v", l)
	}
}
