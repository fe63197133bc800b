package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The league's REST: created with its fields, its ladder before any game,
// the errors that name their field, pause only for a running league, and
// the snapshot, a normal tournament of its current versions.
func TestLeagueREST(t *testing.T) {
	s := newAPIServer(t)
	var ids []int64
	for _, name := range []string{"a", "b", "c"} {
		e := s.post(t, "/api/engines", fmt.Sprintf(`{"name":%q,"game":"othello","builtin":"othello-random"}`, name))
		ids = append(ids, int64(e["id"].(float64)))
	}
	lg := s.post(t, "/api/tournaments", fmt.Sprintf(`{"name":"ladder","game":"othello","format":"league","engines":[%d,%d,%d],"move_time_ms":500,"concurrency":2}`, ids[0], ids[1], ids[2]))
	if lg["format"] != "league" || lg["placement_games"] != 20.0 || lg["total_games"] != nil || lg["status"] != "pending" {
		t.Errorf("league as created: %v", lg)
	}
	lid := int64(lg["id"].(float64))

	for _, c := range []struct {
		name, path, body string
		code             int
		field            string
	}{
		{"checked round robin", "/api/tournaments", fmt.Sprintf(`{"name":"x","game":"othello","entrants":"checked","engines":[%d,%d]}`, ids[0], ids[1]), 400, "entrants"},
		{"odd placement", "/api/tournaments", fmt.Sprintf(`{"name":"x","game":"othello","format":"league","placement_games":3,"engines":[%d,%d]}`, ids[0], ids[1]), 400, "placement_games"},
		{"placement of a round robin", "/api/tournaments", fmt.Sprintf(`{"name":"x","game":"othello","placement_games":4,"engines":[%d,%d]}`, ids[0], ids[1]), 400, "placement_games"},
		{"bad entrants", "/api/tournaments", `{"name":"x","game":"othello","format":"league","entrants":"all"}`, 400, "entrants"},
		{"pause a pending league", fmt.Sprintf("/api/tournaments/%d/pause", lid), ``, 409, ""},
		{"snapshot with engines", fmt.Sprintf("/api/tournaments/%d/snapshot", lid), fmt.Sprintf(`{"format":"round_robin","engines":[%d]}`, ids[0]), 400, "engines"},
		{"snapshot as a league", fmt.Sprintf("/api/tournaments/%d/snapshot", lid), `{"format":"league"}`, 400, "format"},
		{"versions=some", fmt.Sprintf("/api/tournaments/%d/standings?versions=some", lid), ``, 400, "versions"},
	} {
		method := "POST"
		if strings.Contains(c.path, "standings") {
			method = "GET"
		}
		code, body := s.do(t, apiRequest{method: method, path: c.path, body: strings.NewReader(c.body), contentType: "application/json"})
		if code != c.code || !strings.Contains(string(body), c.field) {
			t.Errorf("%s: %d %s, want %d naming %q", c.name, code, body, c.code, c.field)
		}
	}

	var st struct {
		Standings []struct {
			EngineID  int64 `json:"engine_id"`
			Version   int
			Games     int64
			Current   bool
			Placement bool
			Previous  any
			EloError  float64 `json:"elo_error"`
		}
		TotalGames *int64 `json:"total_games"`
	}
	code, body := s.do(t, apiRequest{method: "GET", path: fmt.Sprintf("/api/tournaments/%d/standings", lid)})
	if code != http.StatusOK || json.Unmarshal(body, &st) != nil {
		t.Fatalf("standings: %d %s", code, body)
	}
	if len(st.Standings) != 3 || st.TotalGames != nil {
		t.Fatalf("standings before any game: %s", body)
	}
	for _, r := range st.Standings {
		if r.Version != 1 || r.Games != 0 || !r.Current || !r.Placement || r.Previous != nil || r.EloError <= 0 {
			t.Errorf("row before any game: %+v", r)
		}
	}

	snap := s.post(t, fmt.Sprintf("/api/tournaments/%d/snapshot", lid), `{"format":"round_robin","games_per_pair":2}`)
	if snap["format"] != "round_robin" || snap["name"] != "ladder (final)" || snap["total_games"] != 6.0 || snap["game"] != "othello" || len(snap["engines"].([]any)) != 3 {
		t.Errorf("snapshot: %v", snap)
	}
	if set := snap["settings"].(map[string]any); set["move_time_ms"] != 500.0 {
		t.Errorf("snapshot settings %v, want the league's clock", set)
	}
	rr := int64(snap["id"].(float64))
	if code, body := s.do(t, apiRequest{method: "POST", path: fmt.Sprintf("/api/tournaments/%d/snapshot", rr), body: strings.NewReader(`{}`), contentType: "application/json"}); code != 400 {
		t.Errorf("snapshot of a round robin: %d %s", code, body)
	}

	// A league's games are not known before they start: none is listed
	// as scheduled.
	code, body = s.do(t, apiRequest{method: "GET", path: fmt.Sprintf("/api/tournaments/%d/games", lid)})
	if code != 200 || strings.TrimSpace(string(body)) != `{"games":[]}` {
		t.Errorf("games of a league before any game: %d %s", code, body)
	}

	var vs struct {
		Versions []struct {
			Version int
			Ratings []any
		}
	}
	code, body = s.do(t, apiRequest{method: "GET", path: fmt.Sprintf("/api/engines/%d/versions", ids[0])})
	if code != 200 || json.Unmarshal(body, &vs) != nil || len(vs.Versions) != 1 || vs.Versions[0].Ratings == nil {
		t.Errorf("versions: %d %s", code, body)
	}
}
