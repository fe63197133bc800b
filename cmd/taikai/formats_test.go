package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// formatGame is a game as GET /api/tournaments/{id}/games lists it.
type formatGame struct {
	ID     int64
	Slot   string
	Status string
	Result string
	Black  struct {
		EngineID int64 `json:"engine_id"`
	}
	White struct {
		EngineID int64 `json:"engine_id"`
	}
}

// registerBuiltins registers n built-in Othello engines under names of their
// own and returns their ids.
func registerBuiltins(t *testing.T, s *serverProcess, prefix string, n int) []int64 {
	t.Helper()
	var ids []int64
	for i := range n {
		b := []string{"othello-random", "othello-greedy"}[i%2]
		ids = append(ids, s.postJSON(t, "/api/engines", fmt.Sprintf(`{"name":"%s%d","game":"othello","builtin":"%s"}`, prefix, i, b)))
	}
	return ids
}

func idList(ids []int64) string {
	var s []string
	for _, id := range ids {
		s = append(s, fmt.Sprint(id))
	}
	return strings.Join(s, ",")
}

// The acceptance run of the formats: a swiss tournament of 9 engines and 5
// rounds, and a knockout of 8 engines, each run to its end through the API
// by the real server, then checked game by game.
func TestFormatsEndToEnd(t *testing.T) {
	t.Parallel()
	bin := taikaiBinary(t)
	dir := t.TempDir()
	s := startServer(t, bin, dir+"/taikai.db", dir+"/data")
	t.Run("swiss", func(t *testing.T) {
		t.Parallel()
		ids := registerBuiltins(t, s, "sw", 9)
		tid := s.postJSON(t, "/api/tournaments", fmt.Sprintf(`{"name":"swiss","game":"othello","engines":[%s],"format":"swiss","rounds":5,
			"games_per_pair":2,"openings":{"suite":"builtin"},"move_time_ms":2000,"concurrency":2,"start":true}`, idList(ids)))
		tour := s.waitFinished(t, tid, 5*time.Minute)
		if tour.FinishedGames != 40 || tour.TotalGames != 40 {
			t.Fatalf("%d of %d games finished, want 40 (5 rounds of 4 matches of 2 games)", tour.FinishedGames, tour.TotalGames)
		}
		var list struct{ Games []formatGame }
		s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d/games?limit=1000", tid), nil, "", &list)
		met := map[[2]int64]int{} // pair of engines -> round they met in
		blackFirst := map[int64]int{}
		played := map[int]map[int64]bool{}
		type match struct{ black, white []int64 }
		matches := map[string]*match{}
		for _, g := range list.Games {
			var r, m, k int
			if _, err := fmt.Sscanf(g.Slot, "r%dm%dg%d", &r, &m, &k); err != nil || g.Status != "finished" {
				t.Fatalf("game %d: slot %q, status %s", g.ID, g.Slot, g.Status)
			}
			b, w := g.Black.EngineID, g.White.EngineID
			key := fmt.Sprintf("r%dm%d", r, m)
			if matches[key] == nil {
				matches[key] = &match{}
			}
			matches[key].black = append(matches[key].black, b)
			matches[key].white = append(matches[key].white, w)
			if played[r] == nil {
				played[r] = map[int64]bool{}
			}
			played[r][b], played[r][w] = true, true
			pair := [2]int64{min(b, w), max(b, w)}
			if prev, ok := met[pair]; ok && prev != r {
				t.Errorf("engines %d and %d met in rounds %d and %d", b, w, prev, r)
			}
			met[pair] = r
			if k == 0 {
				blackFirst[b]++
			}
		}
		for key, m := range matches {
			if len(m.black) != 2 || m.black[0] != m.white[1] || m.white[0] != m.black[1] {
				t.Errorf("match %s: blacks %v whites %v, want two games with colours swapped", key, m.black, m.white)
			}
		}
		byes := map[int64]int{}
		for r := range 5 {
			if len(played[r]) != 8 {
				t.Errorf("round %d: %d engines played, want 8 and a bye", r, len(played[r]))
			}
			for _, id := range ids {
				if !played[r][id] {
					byes[id]++
				}
			}
		}
		for id, n := range byes {
			if n > 1 {
				t.Errorf("engine %d had %d byes", id, n)
			}
		}
		for _, id := range ids {
			// 5 rounds, at most one bye: 4 or 5 matches; black first and white first
			// differ by at most 2, FIDE's absolute colour criterion.
			matchesPlayed := 5 - byes[id]
			if d := 2*blackFirst[id] - matchesPlayed; d > 2 || d < -2 {
				t.Errorf("engine %d: black first in %d of %d matches", id, blackFirst[id], matchesPlayed)
			}
		}
		var st struct {
			Standings []struct {
				EngineID int64 `json:"engine_id"`
				Points   float64
				Byes     int
				Buchholz float64
			}
		}
		s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d/standings", tid), nil, "", &st)
		var total float64
		withBye := 0
		for i, r := range st.Standings {
			total += r.Points
			withBye += r.Byes
			if i > 0 && r.Points == st.Standings[i-1].Points && r.Buchholz > st.Standings[i-1].Buchholz {
				t.Errorf("standings: %+v after %+v, not ordered by Buchholz on equal points", r, st.Standings[i-1])
			}
		}
		// 40 games give 40 points, and each of the 5 byes a match's 2.
		if total != 50 || withBye != 5 {
			t.Errorf("standings: %v points in all with %d byes, want 50 with 5", total, withBye)
		}
	})
	t.Run("listed", func(t *testing.T) {
		// Every format is listed with the others (and its format named).
		t.Parallel()
		id := s.postJSON(t, "/api/tournaments", fmt.Sprintf(`{"name":"listed","game":"othello","engines":[%s],"format":"gauntlet"}`,
			idList(registerBuiltins(t, s, "gl", 3))))
		var list struct {
			Tournaments []struct {
				ID     int64
				Format string
				Total  int64 `json:"total_games"`
			}
		}
		s.call(t, "GET", "/api/tournaments", nil, "", &list)
		for _, tj := range list.Tournaments {
			if tj.ID == id {
				if tj.Format != "gauntlet" || tj.Total != 4 {
					t.Errorf("gauntlet of 3 listed as %+v, want format gauntlet and 4 games (2 opponents, 2 games each)", tj)
				}
				return
			}
		}
		t.Errorf("the gauntlet %d is not listed: %+v", id, list.Tournaments)
	})
	t.Run("sprt", func(t *testing.T) {
		// A two-engine tournament with an SPRT finishes as soon as it decides,
		// and its pairs say so, with the LLR after each game pair.
		t.Parallel()
		// Alpha-beta told to think 20 ms a move, under a 5 s clock: strong
		// enough to decide quickly, and never out of time on a machine loaded
		// by every other test (at 100 ms a move it lost 14 pairs on time in
		// CI; greedy is too close to random to decide reliably in 200 games).
		a := s.postJSON(t, "/api/engines", fmt.Sprintf(`{"name":"sprt-alphabeta","game":"othello","command":[%q,"engine","othello-alphabeta","--host","{host}","--port","{port}","--color","{color}","--name","{name}","--time-ms","20"]}`, bin))
		b := s.postJSON(t, "/api/engines", `{"name":"sprt-random","game":"othello","builtin":"othello-random"}`)
		tid := s.postJSON(t, "/api/tournaments", fmt.Sprintf(`{"name":"sprt","game":"othello","engines":[%d,%d],"games_per_pair":200,
			"openings":{"suite":"builtin"},"sprt":{"elo0":0,"elo1":50},"move_time_ms":5000,"concurrency":2,"start":true}`, a, b))
		tour := s.waitFinished(t, tid, 5*time.Minute)
		var pairs struct {
			Pairs []struct {
				Pentanomial []int64
				SPRT        *struct {
					LLR, Upper float64
					Result     string
					History    [][2]float64
				}
			}
		}
		s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d/pairs", tid), nil, "", &pairs)
		if len(pairs.Pairs) != 1 || pairs.Pairs[0].SPRT == nil {
			t.Fatalf("pairs %+v", pairs)
		}
		sp := pairs.Pairs[0].SPRT
		if sp.Result != "H1" || sp.LLR < sp.Upper || tour.FinishedGames >= 200 || len(sp.History) == 0 {
			t.Errorf("SPRT %+v after %d of %d games, want H1 well before the end", sp, tour.FinishedGames, tour.TotalGames)
		}
		t.Logf("SPRT H1 after %d games, pentanomial %v, LLR %.2f", tour.FinishedGames, pairs.Pairs[0].Pentanomial, sp.LLR)
	})
	t.Run("knockout", func(t *testing.T) {
		t.Parallel()
		ids := registerBuiltins(t, s, "ko", 8)
		tid := s.postJSON(t, "/api/tournaments", fmt.Sprintf(`{"name":"knockout","game":"othello","engines":[%s],"format":"knockout",
			"games_per_pair":2,"max_extra":2,"openings":{"suite":"builtin"},"move_time_ms":2000,"concurrency":2,"start":true}`, idList(ids)))
		tour := s.waitFinished(t, tid, 5*time.Minute)
		var br struct {
			Engines []struct {
				EngineID int64 `json:"engine_id"`
			}
			Rounds []struct {
				Matches []struct {
					A, B, Winner, Games int
					Decided             string
				}
			}
		}
		code, body := s.do(t, "GET", fmt.Sprintf("/api/tournaments/%d/bracket", tid), "", nil)
		if code != 200 || json.Unmarshal(body, &br) != nil {
			t.Fatalf("bracket: %d %s", code, body)
		}
		if len(br.Rounds) != 3 {
			t.Fatalf("bracket of %d rounds, want 3 for 8 engines: %s", len(br.Rounds), body)
		}
		played := int64(0)
		for r, rd := range br.Rounds {
			if len(rd.Matches) != 4>>r {
				t.Errorf("round %d has %d matches, want %d", r, len(rd.Matches), 4>>r)
			}
			for _, m := range rd.Matches {
				if m.A < 0 || m.B < 0 || m.Winner < 0 || (m.Winner != m.A && m.Winner != m.B) || m.Games < 2 || m.Games%2 != 0 {
					t.Errorf("round %d: match %+v not played to a decision", r, m)
				}
				played += int64(m.Games)
			}
		}
		if played != tour.FinishedGames {
			t.Errorf("the bracket counts %d games, the tournament %d", played, tour.FinishedGames)
		}
		if tour.FinishedGames < 14 {
			t.Errorf("%d games, want at least 14 (7 matches of 2)", tour.FinishedGames)
		}
		t.Logf("knockout: %d games; bracket %s", tour.FinishedGames, body)
	})
}
