package web_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestGamesCSVRound (issue 37, item 11): in a round robin, games.csv's round
// is the round the game was scheduled in, not its place in the schedule.
// Four entrants play three rounds of two games.
func TestGamesCSVRound(t *testing.T) {
	s := newAPIServer(t)
	var ids []string
	for _, name := range []string{"a", "b", "c", "d"} {
		e := s.post(t, "/api/engines", fmt.Sprintf(`{"name":%q,"game":"othello","builtin":"othello-random"}`, name))
		ids = append(ids, fmt.Sprint(e["id"]))
	}
	tr := s.post(t, "/api/tournaments", fmt.Sprintf(`{"name":"rr","game":"othello","engines":[%s],"games_per_pair":1,"move_time_ms":1000,"start":true}`, strings.Join(ids, ",")))
	path := fmt.Sprintf("/api/tournaments/%v", tr["id"])
	waitAPI(t, "the tournament", 2*time.Minute, func() bool {
		code, body := s.do(t, apiRequest{method: "GET", path: path})
		var got struct {
			Status string `json:"status"`
		}
		if code != 200 || json.Unmarshal(body, &got) != nil {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		return got.Status == "finished"
	})
	code, body := s.do(t, apiRequest{method: "GET", path: path + "/games.csv"})
	recs, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	if code != 200 || err != nil || len(recs) != 7 {
		t.Fatalf("games.csv: %d %v %q", code, err, body)
	}
	perRound := map[string]int{}
	for _, r := range recs[1:] {
		perRound[r[1]]++
	}
	if want := map[string]int{"1": 2, "2": 2, "3": 2}; fmt.Sprint(perRound) != fmt.Sprint(want) {
		t.Errorf("games by round %v, want %v (4 entrants: 3 rounds of 2 games)", perRound, want)
	}
}

// TestMistypedTokenMessage (issue 37, item 12): a mistyped participant
// token that lost its tkp_ prefix is not told "wrong admin token", which a
// student reads as their token taken for the admin's.
func TestMistypedTokenMessage(t *testing.T) {
	s := newAPIServer(t)
	code, body := s.do(t, apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{}`), contentType: "application/json", auth: "Bearer kp_1_abcdef"})
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || code != 403 {
		t.Fatalf("a mistyped token: %d %s", code, body)
	}
	if m := e.Error.Message; strings.Contains(m, "wrong admin token") || !strings.Contains(m, "participant token") || !strings.Contains(m, "tkp_") || !strings.Contains(m, "admin token") {
		t.Errorf("a mistyped participant token is told %q, want that it is neither a participant token (tkp_...) nor the admin token", m)
	}
}

// TestEnginesPerParticipant (issue 37, item 10): a participant may have
// three engines at once by default (--max-engines-per-participant); the
// fourth is refused with a 409 naming the limit and the setting, and a
// withdrawn engine frees its place.
func TestEnginesPerParticipant(t *testing.T) {
	s := startSite(t)
	_, token := newMember(t, s, "Aiko")
	m := member{s: s, token: token}
	var ids []int64
	for i := 1; i <= 4; i++ {
		var out struct {
			ID    int64 `json:"id"`
			Error struct {
				Message string `json:"message"`
				Field   string `json:"field"`
			} `json:"error"`
		}
		code := m.upload(t, "POST", "/api/engines", map[string]any{"name": fmt.Sprintf("aiko-%d", i), "game": "othello", "protocol": "othello-move", "command": studentCommand}, studentEngine(t, "othello-random"), &out)
		if i <= 3 {
			if code != 201 {
				t.Fatalf("engine %d: %d %+v", i, code, out.Error)
			}
			ids = append(ids, out.ID)
			continue
		}
		if code != 409 || !strings.Contains(out.Error.Message, "--max-engines-per-participant 3") || !strings.Contains(out.Error.Message, "you have 3 engines") {
			t.Errorf("a fourth engine: %d %+v, want 409 naming the limit of 3 and its setting", code, out.Error)
		}
	}
	if code := m.call(t, "DELETE", fmt.Sprintf("/api/engines/%d", ids[0]), nil, nil); code != 204 && code != 200 {
		t.Fatalf("withdraw: %d", code)
	}
	if code := m.upload(t, "POST", "/api/engines", map[string]any{"name": "aiko-5", "game": "othello", "protocol": "othello-move", "command": studentCommand}, studentEngine(t, "othello-random"), nil); code != 201 {
		t.Errorf("an engine after one was withdrawn: %d, want 201", code)
	}
}
