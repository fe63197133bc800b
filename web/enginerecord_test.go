package web_test

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/tournament"
)

// Shapes of the engine record's answers the tests read.
type (
	engineRecordAnswer struct {
		Engine engineAnswer     `json:"engine"`
		Games  map[string]int64 `json:"games"`
		Rating *struct {
			Elo      float64 `json:"elo"`
			EloError float64 `json:"elo_error"`
			Rank     int     `json:"rank"`
			Engines  int     `json:"engines"`
			Games    int64   `json:"games"`
		} `json:"rating"`
		Tournaments []struct {
			ID       int64   `json:"id"`
			Name     string  `json:"name"`
			Rank     int     `json:"rank"`
			Entrants int     `json:"entrants"`
			Games    int64   `json:"games"`
			Wins     int64   `json:"wins"`
			Draws    int64   `json:"draws"`
			Losses   int64   `json:"losses"`
			Elo      float64 `json:"elo"`
		} `json:"tournaments"`
		Opponents []struct {
			EngineID int64   `json:"engine_id"`
			Name     string  `json:"name"`
			Games    int64   `json:"games"`
			Wins     int64   `json:"wins"`
			Draws    int64   `json:"draws"`
			Losses   int64   `json:"losses"`
			Points   float64 `json:"points"`
			EloDiff  float64 `json:"elo_diff"`
		} `json:"opponents"`
		Violations struct {
			Refused             map[string]int   `json:"refused"`
			GamesWithViolations int64            `json:"games_with_violations"`
			LostBy              map[string]int64 `json:"lost_by"`
		} `json:"violations"`
		Time struct {
			Moves     int64    `json:"moves"`
			TotalMS   int64    `json:"total_ms"`
			MaxMS     int64    `json:"max_ms"`
			MaxGameID *int64   `json:"max_game_id"`
			MeanMS    *float64 `json:"mean_ms"`
		} `json:"time"`
	}
	engineGameAnswer struct {
		gameAnswer
		Color    string       `json:"color"`
		Opponent playerAnswer `json:"opponent"`
		Outcome  string       `json:"outcome"`
		Log      string       `json:"log"`
	}
	engineGamesAnswer struct {
		Games []engineGameAnswer `json:"games"`
		Total int64              `json:"total"`
	}
	gameDetailAnswer struct {
		gameAnswer
		Violations map[string]map[string]int `json:"violations"`
		Moves      []struct {
			moveAnswer
			Auto    bool `json:"auto"`
			Opening bool `json:"opening"`
		} `json:"moves"`
		Logs map[string]string `json:"logs"`
	}
)

// recordSite is a site with two finished round robins of othello between
// real engine processes: greedy, random (twice, under two names) and an
// engine that answers every turn with a move off the board.
type recordSite struct {
	*site
	ids         map[string]int64
	tournaments []int64
}

func playRecordTournaments(tb testing.TB) *recordSite {
	tb.Helper()
	s := startSite(tb)
	rs := &recordSite{site: s, ids: map[string]int64{}}
	for _, e := range []struct{ name, builtin string }{{"greedy", "othello-greedy"}, {"random-a", "othello-random"}, {"random-b", "othello-random"}} {
		var a engineAnswer
		s.mustCall(tb, "POST", "/api/engines", map[string]any{"name": e.name, "game": "othello", "builtin": e.builtin}, &a)
		rs.ids[e.name] = a.ID
	}
	offBoard := `exec 3<>/dev/tcp/$0/$1; while read -r l <&3; do case $l in TURN*|ERROR*) echo "PUT 9 9" >&3;; esac; done`
	var bad engineAnswer
	s.mustCall(tb, "POST", "/api/engines", map[string]any{"name": "off-board", "game": "othello", "command": []string{"bash", "-c", offBoard, "{host}", "{port}"}}, &bad)
	rs.ids["off-board"] = bad.ID
	for _, entrants := range [][]string{{"greedy", "random-a", "off-board"}, {"greedy", "random-b", "random-a"}} {
		var ids []int64
		for _, n := range entrants {
			ids = append(ids, rs.ids[n])
		}
		var t tournamentAnswer
		s.mustCall(tb, "POST", "/api/tournaments", map[string]any{
			"name": fmt.Sprintf("Record %d", len(rs.tournaments)+1), "game": "othello", "engines": ids,
			"games_per_pair": 2, "move_time_ms": 500, "concurrency": 2, "start": true,
		}, &t)
		rs.tournaments = append(rs.tournaments, t.ID)
	}
	for _, tid := range rs.tournaments {
		waitAPI(tb, fmt.Sprintf("tournament %d to finish", tid), 3*time.Minute, func() bool {
			var t tournamentAnswer
			s.mustCall(tb, "GET", fmt.Sprintf("/api/tournaments/%d", tid), nil, &t)
			return t.Status == "finished"
		})
	}
	return rs
}

// finishedGames lists the finished games of the site's tournaments from
// their games lists (not from the engine's record).
func (rs *recordSite) finishedGames(tb testing.TB) []gameAnswer {
	tb.Helper()
	var all []gameAnswer
	for _, tid := range rs.tournaments {
		var list struct {
			Games []gameAnswer `json:"games"`
		}
		rs.mustCall(tb, "GET", fmt.Sprintf("/api/tournaments/%d/games?status=finished", tid), nil, &list)
		all = append(all, list.Games...)
	}
	return all
}

// TestEngineRecord checks an engine's record against a recount of the games
// lists of real tournaments played by real engine processes: its results
// against each opponent, its rating (tournament.Ratings over the same
// games, the standings' model), its place in each table, its violations
// and time use as the games' own pages have them, and its games with their
// logs.
func TestEngineRecord(t *testing.T) {
	t.Parallel()
	rs := playRecordTournaments(t)
	games := rs.finishedGames(t)
	if len(games) != 12 {
		t.Fatalf("%d finished games, want 12", len(games))
	}

	// The recount: pair results of every engine, from the games lists.
	type key struct{ a, b int64 }
	pairs := map[key]*tournament.PairResult{}
	for _, g := range games {
		a, b := g.Black.EngineID, g.White.EngineID
		aWin, bWin := *g.Result == "black", *g.Result == "white"
		if a > b {
			a, b, aWin, bWin = b, a, bWin, aWin
		}
		p := pairs[key{a, b}]
		if p == nil {
			p = &tournament.PairResult{A: a, B: b}
			pairs[key{a, b}] = p
		}
		switch {
		case aWin:
			p.AWins++
		case bWin:
			p.BWins++
		default:
			p.Draws++
		}
	}
	var list []tournament.PairResult
	seen := map[int64]bool{}
	var pool []int64
	for _, p := range pairs {
		list = append(list, *p)
		for _, e := range []int64{p.A, p.B} {
			if !seen[e] {
				seen[e] = true
				pool = append(pool, e)
			}
		}
	}
	elo, errs := tournament.Ratings(pool, list)

	for _, name := range []string{"greedy", "off-board", "random-b"} {
		id := rs.ids[name]
		var rec engineRecordAnswer
		rs.mustCall(t, "GET", fmt.Sprintf("/api/engines/%d/record", id), nil, &rec)
		if rec.Engine.ID != id || rec.Engine.Name != name {
			t.Fatalf("%s: record of engine %d %q", name, rec.Engine.ID, rec.Engine.Name)
		}
		t.Logf("%s: rating %+v, opponents %+v, violations %+v, time %+v", name, *rec.Rating, rec.Opponents, rec.Violations, rec.Time)

		// Results against each opponent.
		want := map[int64][3]int64{} // opponent: wins, draws, losses
		var mine []gameAnswer
		for _, g := range games {
			if g.Black.EngineID != id && g.White.EngineID != id {
				continue
			}
			mine = append(mine, g)
			color, opp := "black", g.White.EngineID
			if g.White.EngineID == id {
				color, opp = "white", g.Black.EngineID
			}
			r := want[opp]
			switch *g.Result {
			case color:
				r[0]++
			case "draw":
				r[1]++
			default:
				r[2]++
			}
			want[opp] = r
		}
		if rec.Games["finished"] != int64(len(mine)) {
			t.Errorf("%s: %d finished games in the record, %d in the games lists", name, rec.Games["finished"], len(mine))
		}
		if len(rec.Opponents) != len(want) {
			t.Errorf("%s: %d opponents, want %d", name, len(rec.Opponents), len(want))
		}
		for _, o := range rec.Opponents {
			w := want[o.EngineID]
			if got := [3]int64{o.Wins, o.Draws, o.Losses}; got != w || o.Games != w[0]+w[1]+w[2] || o.Points != float64(w[0])+float64(w[1])/2 {
				t.Errorf("%s against %s: %d games +%d =%d -%d (%.1f points), the games lists give +%d =%d -%d", name, o.Name, o.Games, o.Wins, o.Draws, o.Losses, o.Points, w[0], w[1], w[2])
			}
			if d, _ := tournament.EloDiff(w[0], w[1], w[2]); math.Abs(o.EloDiff-d) > 0.051 {
				t.Errorf("%s against %s: Elo difference %.1f, want %.2f", name, o.Name, o.EloDiff, d)
			}
		}

		// The rating: the standings' model over every game of the pool.
		if rec.Rating == nil {
			t.Fatalf("%s: no rating after %d games", name, len(mine))
		}
		if math.Abs(rec.Rating.Elo-elo[id]) > 0.051 || math.Abs(rec.Rating.EloError-errs[id]) > 0.051 {
			t.Errorf("%s: rating %.1f ± %.1f, tournament.Ratings over the games lists gives %.2f ± %.2f", name, rec.Rating.Elo, rec.Rating.EloError, elo[id], errs[id])
		}
		rank := 1
		for _, e := range pool {
			if elo[e] > elo[id] {
				rank++
			}
		}
		if rec.Rating.Rank != rank || rec.Rating.Engines != len(pool) || rec.Rating.Games != int64(len(games)) {
			t.Errorf("%s: rank %d of %d engines over %d games, want %d of %d over %d", name, rec.Rating.Rank, rec.Rating.Engines, rec.Rating.Games, rank, len(pool), len(games))
		}

		// Its line of each tournament's table, as the standings have it.
		var entered []int64
		for _, tr := range rec.Tournaments {
			entered = append(entered, tr.ID)
			var st struct {
				Standings []struct {
					standingAnswer
					Elo float64 `json:"elo"`
				} `json:"standings"`
			}
			rs.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d/standings", tr.ID), nil, &st)
			i := slices.IndexFunc(st.Standings, func(r struct {
				standingAnswer
				Elo float64 `json:"elo"`
			}) bool {
				return r.EngineID == id
			})
			if i < 0 {
				t.Errorf("%s: tournament %d lists it, its standings do not", name, tr.ID)
				continue
			}
			r := st.Standings[i]
			if tr.Rank != i+1 || tr.Entrants != len(st.Standings) || tr.Games != r.Games || tr.Wins != r.Wins || tr.Draws != r.Draws || tr.Losses != r.Losses || tr.Elo != r.Elo {
				t.Errorf("%s in tournament %d: place %d of %d, %d games +%d =%d -%d, Elo %.1f; the standings: place %d of %d, %d games +%d =%d -%d, Elo %.1f",
					name, tr.ID, tr.Rank, tr.Entrants, tr.Games, tr.Wins, tr.Draws, tr.Losses, tr.Elo, i+1, len(st.Standings), r.Games, r.Wins, r.Draws, r.Losses, r.Elo)
			}
		}
		var wantEntered []int64
		for _, tid := range rs.tournaments {
			for _, g := range mine {
				if g.TournamentID == tid {
					wantEntered = append(wantEntered, tid)
					break
				}
			}
		}
		slices.Sort(entered)
		if !slices.Equal(entered, wantEntered) {
			t.Errorf("%s: tournaments %v, want %v", name, entered, wantEntered)
		}

		// Violations and time use, from each game's own page.
		refused := map[string]int{}
		lostBy := map[string]int64{}
		var withViolations, moves, total, slowest int64
		for _, g := range mine {
			var d gameDetailAnswer
			rs.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", g.ID), nil, &d)
			color := "black"
			if g.White.EngineID == id {
				color = "white"
			}
			n := 0
			for k, v := range d.Violations[color] {
				refused[k] += v
				n += v
			}
			if n > 0 {
				withViolations++
			}
			if *g.Reason != "normal" && *g.Result != "draw" && *g.Result != color {
				lostBy[*g.Reason]++
			}
			for _, m := range d.Moves {
				if m.Color == color && !m.Auto && !m.Opening {
					moves++
					total += m.MS
					slowest = max(slowest, m.MS)
				}
			}
		}
		v := rec.Violations
		if len(v.Refused) != len(refused) || v.GamesWithViolations != withViolations || len(v.LostBy) != len(lostBy) {
			t.Errorf("%s: violations %v in %d games, lost by %v; the games give %v in %d games, lost by %v", name, v.Refused, v.GamesWithViolations, v.LostBy, refused, withViolations, lostBy)
		}
		for k, n := range refused {
			if v.Refused[k] != n {
				t.Errorf("%s: %d refused %s, the games give %d", name, v.Refused[k], k, n)
			}
		}
		for k, n := range lostBy {
			if v.LostBy[k] != n {
				t.Errorf("%s: lost %d games by %s, the games give %d", name, v.LostBy[k], k, n)
			}
		}
		if tm := rec.Time; tm.Moves != moves || tm.TotalMS != total || tm.MaxMS != slowest {
			t.Errorf("%s: time %d moves, %d ms, slowest %d ms; the games give %d moves, %d ms, slowest %d ms", name, tm.Moves, tm.TotalMS, tm.MaxMS, moves, total, slowest)
		}

		// Its games, a page of 3 at a time: the same games, its colour and
		// outcome, and a log that can be read.
		var got []engineGameAnswer
		for offset := 0; ; offset += 3 {
			var page engineGamesAnswer
			rs.mustCall(t, "GET", fmt.Sprintf("/api/engines/%d/games?limit=3&offset=%d", id, offset), nil, &page)
			if page.Total != int64(len(mine)) {
				t.Fatalf("%s: %d games in all, the games lists have %d", name, page.Total, len(mine))
			}
			got = append(got, page.Games...)
			if len(page.Games) < 3 {
				break
			}
		}
		if len(got) != len(mine) {
			t.Fatalf("%s: %d games listed, want %d", name, len(got), len(mine))
		}
		byID := map[int64]gameAnswer{}
		for _, g := range mine {
			byID[g.ID] = g
		}
		for i, g := range got {
			if i > 0 && g.ID >= got[i-1].ID {
				t.Errorf("%s: game %d listed after game %d, want newest first", name, g.ID, got[i-1].ID)
			}
			w, ok := byID[g.ID]
			if !ok {
				t.Errorf("%s: game %d is not one of its games", name, g.ID)
				continue
			}
			color, opp := "black", w.White
			if w.White.EngineID == id {
				color, opp = "white", w.Black
			}
			outcome := map[bool]string{true: "win", false: "loss"}[*w.Result == color]
			if *w.Result == "draw" {
				outcome = "draw"
			}
			if g.Color != color || g.Opponent.EngineID != opp.EngineID || g.Outcome != outcome {
				t.Errorf("%s: game %d as %s against %d, %s; want %s against %d, %s", name, g.ID, g.Color, g.Opponent.EngineID, g.Outcome, color, opp.EngineID, outcome)
			}
			if want := fmt.Sprintf("/api/games/%d/log/%s", g.ID, color); g.Log != want {
				t.Errorf("%s: game %d log %q, want %q", name, g.ID, g.Log, want)
			}
		}
		if code := rs.call(t, "GET", got[0].Log, nil, nil); code != http.StatusOK {
			t.Errorf("%s: GET %s: %d", name, got[0].Log, code)
		}
	}

	// The engine that moved off the board lost every game by it.
	var bad engineRecordAnswer
	rs.mustCall(t, "GET", fmt.Sprintf("/api/engines/%d/record", rs.ids["off-board"]), nil, &bad)
	if bad.Violations.LostBy["illegal"] != 4 || bad.Violations.Refused["off_board"] == 0 {
		t.Errorf("off-board: lost by %v, refused %v; want 4 games lost by illegal, off_board refusals", bad.Violations.LostBy, bad.Violations.Refused)
	}

	// Bad requests name the field; a missing engine is not found.
	for _, c := range []struct {
		path, field string
		code        int
	}{
		{fmt.Sprintf("/api/engines/%d/games?limit=0", rs.ids["greedy"]), "limit", 400},
		{fmt.Sprintf("/api/engines/%d/games?limit=501", rs.ids["greedy"]), "limit", 400},
		{fmt.Sprintf("/api/engines/%d/games?offset=-1", rs.ids["greedy"]), "offset", 400},
		{"/api/engines/999/record", "", 404},
		{"/api/engines/999/games", "", 404},
		{"/api/engines/x/record", "id", 404},
	} {
		var e errorAnswer
		if code := rs.call(t, "GET", c.path, nil, &e); code != c.code || e.Error.Field != c.field || e.Error.Message == "" {
			t.Errorf("GET %s: %d field %q %q, want %d field %q", c.path, code, e.Error.Field, e.Error.Message, c.code, c.field)
		}
	}
}
