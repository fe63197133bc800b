package tournament_test

import (
	"strings"
	"testing"

	"github.com/taikai-dev/taikai/tournament"
)

// simulate plays n league games pair by pair the way the scheduler chooses
// them (both games of a pair), black always winning (a result that does
// not favour anyone over a pair), and returns the state.
func simulate(st *tournament.LeagueState, placement, pairs int) {
	for range pairs {
		a, b, ok := tournament.NextLeaguePair(st, nil, placement)
		if !ok {
			panic("no pair")
		}
		addResult(st, a, b, 1, 0, 0)
		addResult(st, b, a, 1, 0, 0)
	}
}

func addResult(st *tournament.LeagueState, black, white tournament.VersionKey, bw, d, ww int64) {
	a, b, aw, w := black, white, bw, ww
	if b.Engine < a.Engine {
		a, b, aw, w = b, a, w, aw
	}
	for i := range st.Results {
		r := &st.Results[i]
		if r.A == a && r.B == b {
			r.AWins, r.Draws, r.BWins = r.AWins+aw, r.Draws+d, r.BWins+w
			return
		}
	}
	st.Results = append(st.Results, tournament.VersionResult{A: a, B: b, AWins: aw, Draws: d, BWins: w})
}

// A new version plays the default 20 placement games first, spread over the
// field (least played opponents first: 7, 7 and 6 against three), while the
// others wait; then the league plays the least certain pairs.
func TestLeaguePlacementDefault(t *testing.T) {
	lt := &tournament.Tournament{Name: "l", Kind: tournament.KindLeague, Settings: tournament.Settings{Game: "othello"}, Engines: []int64{1, 2, 3, 4}}
	if err := lt.Validate(); err != nil {
		t.Fatal(err)
	}
	if lt.PlacementGames != 20 || !lt.Settings.Paired() || lt.TotalGames != 0 {
		t.Fatalf("league defaults: placement %d, paired %v, total %d", lt.PlacementGames, lt.Settings.Paired(), lt.TotalGames)
	}
	v := func(e int64, ver int) tournament.VersionKey { return tournament.VersionKey{Engine: e, Version: ver} }
	st := &tournament.LeagueState{Field: []tournament.VersionKey{v(1, 1), v(2, 1), v(3, 1)}}
	simulate(st, 20, 30) // 60 games: the three have placed and played on
	st.Field = append(st.Field, v(4, 2))
	before := len(st.Results)
	against := map[int64]int64{}
	for range 10 { // 10 pairs: the placement
		a, b, ok := tournament.NextLeaguePair(st, nil, lt.PlacementGames)
		if !ok || a != v(4, 2) && b != v(4, 2) {
			t.Fatalf("pair %v %v during the new version's placement", a, b)
		}
		other := a
		if a == v(4, 2) {
			other = b
		}
		against[other.Engine] += 2
		addResult(st, a, b, 1, 0, 0)
		addResult(st, b, a, 1, 0, 0)
	}
	if len(against) != 3 || against[1]+against[2]+against[3] != 20 {
		t.Fatalf("placement games by opponent %v", against)
	}
	for e, n := range against {
		if n < 6 || n > 8 {
			t.Errorf("placement: %d games against %d, want 6 to 8 (spread): %v", n, e, against)
		}
	}
	if len(st.Results) != before+3 {
		t.Errorf("%d results after placement, want %d", len(st.Results), before+3)
	}
	// Placed: the next pair is the least certain one, which need not
	// include the new version.
	a, b, _ := tournament.NextLeaguePair(st, nil, lt.PlacementGames)
	_, errs := tournament.VersionRatings(st.Results)
	best := 0.0
	for i, x := range st.Field {
		for _, y := range st.Field[i+1:] {
			n := int64(0)
			for _, r := range st.Results {
				if r.A == x && r.B == y || r.A == y && r.B == x {
					n += r.AWins + r.Draws + r.BWins
				}
			}
			best = max(best, (errs[x]*errs[x]+errs[y]*errs[y])/float64(1+n))
		}
	}
	var n int64
	for _, r := range st.Results {
		if r.A == a && r.B == b || r.A == b && r.B == a {
			n += r.AWins + r.Draws + r.BWins
		}
	}
	if got := (errs[a]*errs[a] + errs[b]*errs[b]) / float64(1+n); got != best {
		t.Errorf("after placement the pair %v %v scores %.3f, the least certain %.3f", a, b, got, best)
	}
}

// Running games count as played: two placements at once do not both pick
// the same opponent, and a version not in the field is never chosen.
func TestLeagueBusyAndField(t *testing.T) {
	v := func(e int64) tournament.VersionKey { return tournament.VersionKey{Engine: e, Version: 1} }
	st := &tournament.LeagueState{Field: []tournament.VersionKey{v(1), v(2), v(3)}}
	a, b, _ := tournament.NextLeaguePair(st, nil, 4)
	busy := [][2]tournament.VersionKey{{a, b}, {b, a}}
	c, d, _ := tournament.NextLeaguePair(st, busy, 4)
	if c == a && d == b || c == b && d == a {
		t.Errorf("with %v-%v running, the next pair is the same: %v-%v", a, b, c, d)
	}
	st.Field = st.Field[:1]
	if _, _, ok := tournament.NextLeaguePair(st, nil, 4); ok {
		t.Error("a pair from a field of one")
	}
}

// A league's settings are checked: placement games even and in range, no
// SPRT, and "entrants": "checked" with no engines listed.
func TestLeagueValidate(t *testing.T) {
	for _, c := range []struct {
		t    tournament.Tournament
		want string
	}{
		{tournament.Tournament{PlacementGames: 3, Engines: []int64{1, 2}}, "placement_games"},
		{tournament.Tournament{PlacementGames: 2000, Engines: []int64{1, 2}}, "placement_games"},
		{tournament.Tournament{Engines: []int64{1}}, "engines"},
		{tournament.Tournament{GamesPerPair: 4, Engines: []int64{1, 2}}, "games_per_pair"},
		{tournament.Tournament{EntrantsChecked: true, Engines: []int64{1, 2}}, "engines"},
	} {
		c.t.Name, c.t.Kind, c.t.Settings.Game = "l", tournament.KindLeague, "othello"
		err := c.t.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", c.t, err, c.want)
		}
	}
	ok := tournament.Tournament{Name: "l", Kind: tournament.KindLeague, Settings: tournament.Settings{Game: "othello"}, EntrantsChecked: true}
	if err := ok.Validate(); err != nil {
		t.Errorf("a league of checked entrants: %v", err)
	}
}
