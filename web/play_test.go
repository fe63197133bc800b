package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines/sandbox"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/internal/testkit"
	"github.com/taikai-dev/taikai/internal/testkit/sandboxkit"
	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/web"
)

// playAnswer is the answer of POST /api/play.
type playAnswer struct {
	GameID       int64  `json:"game_id"`
	TournamentID int64  `json:"tournament_id"`
	Color        string `json:"color"`
	SeatToken    string `json:"seat_token"`
	URL          string `json:"url"`
	Second       *struct {
		Color     string `json:"color"`
		SeatToken string `json:"seat_token"`
		URL       string `json:"url"`
	} `json:"second"`
}

// seatView is GET /api/games/{id}/seat.
type seatView struct {
	Color     string   `json:"color"`
	Turn      string   `json:"turn"`
	Plies     int      `json:"plies"`
	Board     []string `json:"board"`
	Over      bool     `json:"over"`
	Result    string   `json:"result"`
	Reason    string   `json:"reason"`
	Cause     string   `json:"cause"`
	Forbidden [][2]int `json:"forbidden"`
	Legal     []struct {
		X    *int     `json:"x"`
		Y    *int     `json:"y"`
		Path [][2]int `json:"path"`
		Text string   `json:"text"`
	} `json:"legal"`
}

type apiErr struct {
	Error struct {
		Code          string         `json:"code"`
		Message       string         `json:"message"`
		MessageKey    string         `json:"message_key"`
		MessageParams map[string]any `json:"message_params"`
		Field         string         `json:"field"`
	} `json:"error"`
}

// seatCall does a request with a seat token ("" for none) and decodes the
// answer into out.
func seatCall(tb testing.TB, s *site, method, path, token string, body any, out any) int {
	tb.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return s.do(tb, req, out)
}

// waitTurn waits until it is the seat's turn or the game is over.
func waitTurn(tb testing.TB, s *site, id int64, token string) seatView {
	tb.Helper()
	deadline := time.Now().Add(60 * time.Second)
	plies := -1
	for time.Now().Before(deadline) {
		var v seatView
		path := fmt.Sprintf("/api/games/%d/seat", id)
		if plies >= 0 {
			path += fmt.Sprintf("?after=%d", plies)
		}
		if code := seatCall(tb, s, "GET", path, token, nil, &v); code != 200 {
			tb.Fatalf("GET seat: %d", code)
		}
		if v.Over || v.Turn == v.Color {
			return v
		}
		plies = v.Plies
	}
	tb.Fatalf("game %d: not my turn within 60 s", id)
	return seatView{}
}

// mirror is the test's own game, played by the games package's rules (an
// independent move generator): it replays the game's moves, once
// GET /api/games/{id} shows at least plies of them (the live view follows
// the referee a moment later).
func mirror(tb testing.TB, s *site, id int64, game string, plies int) games.Rules {
	tb.Helper()
	var g struct {
		Rule  string `json:"rule"`
		Size  int    `json:"size"`
		Moves []struct {
			Text string `json:"text"`
		} `json:"moves"`
	}
	waitAPI(tb, fmt.Sprintf("game %d's ply %d", id, plies), 30*time.Second, func() bool {
		s.mustCall(tb, "GET", fmt.Sprintf("/api/games/%d", id), nil, &g)
		return len(g.Moves) >= plies
	})
	gm, _ := games.Lookup(game)
	r, err := gm.New(g.Rule, g.Size)
	if err != nil {
		tb.Fatal(err)
	}
	for _, m := range g.Moves {
		mv, err := gm.ParseMove(m.Text)
		if err != nil {
			tb.Fatalf("move %q: %v", m.Text, err)
		}
		if _, ok := r.Check(mv); !ok {
			tb.Fatalf("game %d: stored move %q is not legal for the test's own rules", id, m.Text)
		}
		r.Play(mv)
	}
	return r
}

// chosen is chooser.py's answer: the seat's legal moves by its own rules,
// and the one it chose.
type chosen struct {
	Legal     []chosenMove `json:"legal"`
	Forbidden bool         `json:"forbidden"` // the rule may forbid empty points
	Choice    *chosenMove  `json:"choice"`
}

type chosenMove struct {
	X    *int     `json:"x"`
	Y    *int     `json:"y"`
	Path [][2]int `json:"path"`
	Pass bool     `json:"pass"`
}

// key names a move the same way for the seat's list and chooser.py's.
func moveKey(x, y *int, path [][2]int) string {
	if x == nil || y == nil {
		return "pass"
	}
	return fmt.Sprintf("%d,%d%v", *x, *y, path)
}

// choose asks web/testdata/chooser.py, a move generator independent of
// taikai's Go rules, for the seat's legal moves and a choice among them.
func choose(tb testing.TB, python, rule string, seed uint64, raw json.RawMessage) chosen {
	tb.Helper()
	var in map[string]any
	if err := json.Unmarshal(raw, &in); err != nil {
		tb.Fatal(err)
	}
	in["rule"], in["seed"] = rule, seed
	b, err := json.Marshal(in)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, filepath.Join("testdata", "chooser.py"))
	cmd.Stdin = bytes.NewReader(b)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("chooser.py: %v: %s", err, stderr.Bytes())
	}
	var c chosen
	if err := json.Unmarshal(out, &c); err != nil {
		tb.Fatalf("chooser.py's answer %q: %v", out, err)
	}
	return c
}

// playOut plays the seat's moves until the game is over, each chosen by
// chooser.py from the seat's board by its own rules: the seat's legal list
// must be exactly chooser.py's (under a Gomoku rule with forbidden points,
// chooser.py's less the seat's forbidden ones), and the moves are sent in
// turn as text, as a path and as coordinates.
func playOut(tb testing.TB, s *site, id int64, token, game string, rng *rand.Rand) (moves int, last seatView) {
	tb.Helper()
	python := testkit.Python(tb) // run for every move: not through a shim
	var g struct {
		Rule string `json:"rule"`
	}
	s.mustCall(tb, "GET", fmt.Sprintf("/api/games/%d", id), nil, &g)
	for {
		v := waitTurn(tb, s, id, token)
		if v.Over {
			return moves, v
		}
		var raw json.RawMessage
		if code := seatCall(tb, s, "GET", fmt.Sprintf("/api/games/%d/seat", id), token, nil, &raw); code != 200 {
			tb.Fatalf("GET seat: %d", code)
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			tb.Fatal(err)
		}
		c := choose(tb, python, g.Rule, rng.Uint64(), raw)
		seat := map[string]string{} // key -> the seat's text for the move
		for _, l := range v.Legal {
			seat[moveKey(l.X, l.Y, l.Path)] = l.Text
		}
		own := map[string]bool{}
		for _, m := range c.Legal {
			own[moveKey(m.X, m.Y, m.Path)] = true
		}
		if c.Forbidden {
			for _, p := range v.Forbidden {
				k := moveKey(&p[0], &p[1], nil)
				if !own[k] {
					tb.Fatalf("game %d: the seat forbids %v, which is not an empty point; board %v", id, p, v.Board)
				}
				delete(own, k)
			}
		} else if len(v.Forbidden) > 0 {
			tb.Fatalf("game %d (%s %q): the seat forbids %v, the rule nothing", id, game, g.Rule, v.Forbidden)
		}
		for k := range own {
			if _, ok := seat[k]; !ok {
				tb.Fatalf("game %d: %s is legal by chooser.py's rules but not in the seat's legal moves %v; board %v", id, k, slices.Sorted(maps.Keys(seat)), v.Board)
			}
		}
		for k := range seat {
			if !own[k] {
				tb.Fatalf("game %d: the seat's legal move %s (%s) is not legal by chooser.py's rules; board %v", id, k, seat[k], v.Board)
			}
		}
		m := c.Choice
		if m == nil {
			tb.Fatalf("game %d: chooser.py found no move on %v, but the game is not over", id, v.Board)
		}
		text := seat[moveKey(m.X, m.Y, m.Path)]
		var body any
		switch {
		case moves%3 == 0 || m.Pass || m.X == nil:
			body = map[string]any{"text": text}
		case len(m.Path) > 0:
			body = map[string]any{"path": append([][2]int{{*m.X, *m.Y}}, m.Path...)}
		default:
			body = map[string]any{"x": *m.X, "y": *m.Y}
		}
		var after seatView
		if code := seatCall(tb, s, "POST", fmt.Sprintf("/api/games/%d/move", id), token, body, &after); code != 200 {
			tb.Fatalf("game %d: move %s (%v): status %d", id, text, body, code)
		}
		moves++
	}
}

func startPlay(tb testing.TB, s *site, body map[string]any) playAnswer {
	tb.Helper()
	var p playAnswer
	s.mustCall(tb, "POST", "/api/play", body, &p)
	if p.GameID == 0 || p.SeatToken == "" || p.URL == "" {
		tb.Fatalf("POST /api/play %v: %+v", body, p)
	}
	return p
}

// TestPlayAgainstBuiltins: a person plays whole games through the REST API
// against a built-in of each game; illegal, out-of-turn and wrong-token
// moves are refused and the game goes on; the record says who was a person
// and stays out of the engine's tournaments and ratings.
func TestPlayAgainstBuiltins(t *testing.T) {
	t.Parallel()
	s := startSite(t)
	rng := rand.New(rand.NewPCG(39, 1))
	for _, c := range []struct{ game, builtin, occupied string }{
		{"othello", "othello-greedy", "d4"},
		{"gomoku", "gomoku-random", ""},
		{"checkers", "checkers-random", ""},
	} {
		t.Run(c.game, func(t *testing.T) {
			var e struct{ ID int64 }
			s.mustCall(t, "POST", "/api/engines", map[string]any{"name": c.builtin, "game": c.game, "builtin": c.builtin}, &e)
			p := startPlay(t, s, map[string]any{"engine": e.ID, "color": "black", "move_time_ms": 300})
			if p.Color != "black" {
				t.Fatalf("color %q, want black", p.Color)
			}
			id := p.GameID
			v := waitTurn(t, s, id, p.SeatToken)
			if len(v.Legal) == 0 {
				t.Fatalf("black's first turn shows no legal move: %+v", v)
			}
			// A wrong or missing seat token.
			var ae apiErr
			if code := seatCall(t, s, "POST", fmt.Sprintf("/api/games/%d/move", id), "", map[string]any{"text": v.Legal[0].Text}, &ae); code != 401 {
				t.Errorf("move without a token: %d %+v, want 401", code, ae)
			}
			if code := seatCall(t, s, "POST", fmt.Sprintf("/api/games/%d/move", id), "tks_wrong", map[string]any{"text": v.Legal[0].Text}, &ae); code != 403 {
				t.Errorf("move with a wrong token: %d %+v, want 403", code, ae)
			}
			// An illegal move: 422 naming why, and the game goes on.
			illegal := map[string]any{"othello": map[string]any{"x": 0, "y": 0}, "gomoku": map[string]any{"x": -1, "y": 3},
				"checkers": map[string]any{"text": "1-5"}}[c.game]
			why := map[string]string{"othello": "no_flip", "gomoku": "off_board", "checkers": "illegal_move"}[c.game]
			ae = apiErr{}
			if code := seatCall(t, s, "POST", fmt.Sprintf("/api/games/%d/move", id), p.SeatToken, illegal, &ae); code != 422 || ae.Error.MessageKey != why {
				t.Errorf("illegal move %v: %d %+v, want 422 %s", illegal, code, ae, why)
			}
			if c.occupied != "" {
				ae = apiErr{}
				if code := seatCall(t, s, "POST", fmt.Sprintf("/api/games/%d/move", id), p.SeatToken, map[string]any{"text": c.occupied}, &ae); code != 422 || ae.Error.MessageKey != "occupied" {
					t.Errorf("occupied %s: %d %+v, want 422 occupied", c.occupied, code, ae)
				}
			}
			ae = apiErr{}
			if code := seatCall(t, s, "POST", fmt.Sprintf("/api/games/%d/move", id), p.SeatToken, map[string]any{"text": "not a move"}, &ae); code != 400 || ae.Error.Field != "text" {
				t.Errorf("unreadable text: %d %+v, want 400 naming text", code, ae)
			}
			moves, last := playOut(t, s, id, p.SeatToken, c.game, rng)
			if !last.Over || last.Reason == "" || last.Result == "" {
				t.Fatalf("game %d after %d moves of the person: %+v, want it over with a result", id, moves, last)
			}
			t.Logf("%s: the person made %d moves; result %s (%s)", c.game, moves, last.Result, last.Reason)
			if last.Reason != "normal" {
				t.Errorf("game %d ended by %s, want normal (the person made only legal moves)", id, last.Reason)
			}
			var g struct {
				Status string `json:"status"`
				Black  struct {
					Name  string
					Human bool
				} `json:"black"`
				White struct {
					Name  string
					Human bool
				} `json:"white"`
				Violations map[string]map[string]int `json:"violations"`
			}
			waitAPI(t, "the game stored", 30*time.Second, func() bool {
				s.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", id), nil, &g)
				return g.Status != "running"
			})
			if g.Status != "finished" || !g.Black.Human || g.Black.Name != "admin" || g.White.Human || g.White.Name != c.builtin {
				t.Errorf("stored game: %+v, want finished, black the person admin (human), white %s", g, c.builtin)
			}
			if g.Violations["black"][why] != 1 {
				t.Errorf("black's violations %v: want the refused %s counted once", g.Violations["black"], why)
			}
			// After the end, a move is a conflict.
			if code := seatCall(t, s, "POST", fmt.Sprintf("/api/games/%d/move", id), p.SeatToken, map[string]any{"pass": true}, &ae); code != 409 {
				t.Errorf("move after the end: %d, want 409", code)
			}
			// Exported like any game.
			gm, _ := games.Lookup(c.game)
			ext := gm.Records[0].Ext
			res, err := http.Get(fmt.Sprintf("%s/api/games/%d.%s", s.URL, id, ext))
			if err != nil {
				t.Fatal(err)
			}
			file, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 || !bytes.Contains(file, []byte("admin")) || !bytes.Contains(file, []byte(c.builtin)) {
				t.Errorf("GET game %d.%s: %d %q, want the record with the person's name and the engine's", id, ext, res.StatusCode, file)
			}
			// Out of the engine's tournaments and the tournament list.
			var rec struct {
				Tournaments []struct{ ID int64 }    `json:"tournaments"`
				Opponents   []struct{ Name string } `json:"opponents"`
				Rating      *struct{ Games int }    `json:"rating"`
				Games       map[string]int          `json:"games"`
			}
			s.mustCall(t, "GET", fmt.Sprintf("/api/engines/%d/record", e.ID), nil, &rec)
			if len(rec.Tournaments) != 0 || len(rec.Opponents) != 0 || rec.Rating != nil {
				t.Errorf("engine %d's record: tournaments %+v, opponents %+v, rating %+v: a game with a person counts in none", e.ID, rec.Tournaments, rec.Opponents, rec.Rating)
			}
			var list0 struct {
				Games []struct {
					ID       int64
					Opponent struct {
						Name  string
						Human bool
					}
				}
			}
			s.mustCall(t, "GET", fmt.Sprintf("/api/engines/%d/games", e.ID), nil, &list0)
			if len(list0.Games) != 1 || list0.Games[0].ID != id || !list0.Games[0].Opponent.Human || list0.Games[0].Opponent.Name != "admin" {
				t.Errorf("engine %d's games: %+v, want game %d against the person admin", e.ID, list0.Games, id)
			}
			var list struct{ Tournaments []struct{ ID int64 } }
			s.mustCall(t, "GET", "/api/tournaments", nil, &list)
			for _, tt := range list.Tournaments {
				if tt.ID == p.TournamentID {
					t.Errorf("the game's tournament %d is in the tournament list", tt.ID)
				}
			}
		})
	}
}

// TestPlayTwoPeople: two people play each other through the two seat links;
// out of turn is a 409 and counts against nobody.
func TestPlayTwoPeople(t *testing.T) {
	s := startSite(t)
	p := startPlay(t, s, map[string]any{"engine": nil, "game": "othello", "color": "white"})
	if p.Color != "white" || p.Second == nil || p.Second.Color != "black" || p.Second.SeatToken == p.SeatToken {
		t.Fatalf("two people: %+v, want the caller white and a second seat black", p)
	}
	white, black := p.SeatToken, p.Second.SeatToken
	// Spectators see it among the games being played, like any game.
	var running struct{ Games []struct{ ID int64 } }
	s.mustCall(t, "GET", "/api/games", nil, &running)
	if !slices.ContainsFunc(running.Games, func(g struct{ ID int64 }) bool { return g.ID == p.GameID }) {
		t.Errorf("GET /api/games %+v: the game with people %d is not among the running games", running.Games, p.GameID)
	}
	var ae apiErr
	if code := seatCall(t, s, "POST", fmt.Sprintf("/api/games/%d/move", p.GameID), white, map[string]any{"text": "f5"}, &ae); code != 409 {
		t.Fatalf("white before black's first move: %d %+v, want 409", code, ae)
	}
	rng := rand.New(rand.NewPCG(39, 2))
	gm, _ := games.Lookup("othello")
	plies := 0
	for n := 0; ; n++ {
		r := mirror(t, s, p.GameID, "othello", plies)
		if r.Turn() == games.None || r.Finished() {
			break
		}
		token := map[games.Color]string{games.Black: black, games.White: white}[r.Turn()]
		other := map[games.Color]string{games.Black: white, games.White: black}[r.Turn()]
		m := r.Random(rng)
		if n == 5 {
			if code := seatCall(t, s, "POST", fmt.Sprintf("/api/games/%d/move", p.GameID), other, map[string]any{"text": gm.Notation(m)}, &ae); code != 409 {
				t.Fatalf("move out of turn: %d, want 409", code)
			}
		}
		var after seatView
		if code := seatCall(t, s, "POST", fmt.Sprintf("/api/games/%d/move", p.GameID), token, map[string]any{"text": gm.Notation(m)}, &after); code != 200 {
			t.Fatalf("ply %d %s: %d", n+1, gm.Notation(m), code)
		}
		plies = after.Plies
	}
	v := waitTurn(t, s, p.GameID, black)
	if !v.Over || v.Reason != "normal" {
		t.Fatalf("two people's game: %+v, want over, normal", v)
	}
	var g struct {
		Status       string
		Black, White struct{ Human bool }
		Violations   map[string]map[string]int `json:"violations"`
	}
	waitAPI(t, "the game stored", 30*time.Second, func() bool {
		s.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", p.GameID), nil, &g)
		return g.Status != "running"
	})
	if !g.Black.Human || !g.White.Human {
		t.Errorf("stored: %+v, want both sides human", g)
	}
	if len(g.Violations["black"])+len(g.Violations["white"]) != 0 {
		t.Errorf("violations %v: a move out of turn is refused before the referee, counted against nobody", g.Violations)
	}
}

// TestPlayResignAndIdle: a resignation ends the game for the engine; a seat
// with no move for --play-idle resigns.
func TestPlayResignAndIdle(t *testing.T) {
	t.Parallel()
	s := startSite(t, func(srv *web.Server) { srv.Play.Idle = 2 * time.Second })
	var e struct{ ID int64 }
	s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "rnd", "game": "othello", "builtin": "othello-random"}, &e)

	p := startPlay(t, s, map[string]any{"engine": e.ID, "color": "white"})
	v := waitTurn(t, s, p.GameID, p.SeatToken)
	if v.Over {
		t.Fatalf("over before white's first move: %+v", v)
	}
	var after seatView
	if code := seatCall(t, s, "POST", fmt.Sprintf("/api/games/%d/resign", p.GameID), p.SeatToken, nil, &after); code != 200 {
		t.Fatalf("resign: %d", code)
	}
	v = waitTurn(t, s, p.GameID, p.SeatToken)
	if !v.Over || v.Result != "black" || v.Reason != "resign" || v.Cause != "" {
		t.Errorf("after resigning: %+v, want black (the engine) to win by resign", v)
	}

	p = startPlay(t, s, map[string]any{"engine": e.ID, "color": "black"})
	v = waitTurn(t, s, p.GameID, p.SeatToken) // black's turn at once
	if v.Over {
		var g map[string]any
		s.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", p.GameID), nil, &g)
		t.Fatalf("over before black's first move: %+v\n%v", v, g)
	}
	start := time.Now()
	v = waitTurn(t, s, p.GameID, p.SeatToken)
	// The seat answers at once while it is black's turn: ask every 50 ms
	// until the end (asked back to back, the loop took a CPU for the 2 s).
	waitAPI(t, "the idle seat's end", 60*time.Second, func() bool {
		if !v.Over {
			var st seatView
			seatCall(t, s, "GET", fmt.Sprintf("/api/games/%d/seat?after=%d", p.GameID, v.Plies), p.SeatToken, nil, &st)
			v = st
		}
		return v.Over
	})
	if !v.Over || v.Result != "white" || v.Reason != "resign" || v.Cause != "idle" {
		t.Errorf("an idle seat: %+v, want white to win by resign, cause idle", v)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("the idle seat resigned after %v, before its 2 s", took)
	}
}

// TestPlaySandboxedUpload: a person plays an uploaded engine, which plays
// in the sandbox as in any game.
func TestPlaySandboxedUpload(t *testing.T) {
	t.Parallel()
	bin := sandboxkit.Helper(t)
	s := startSite(t, func(srv *web.Server) {
		srv.Service.Runner.Launcher.Self = bin
		srv.Service.Runner.Launcher.Sandbox = true
	})
	// The student's program: the built-in random player, run by a script
	// from the engine's own directory inside the sandbox.
	files := map[string]string{"run.sh": fmt.Sprintf("#!/bin/sh\nexec %s engine othello-random --protocol othello-move -H \"$1\" -p \"$2\"\n", sandbox.HelperPath)}
	var e struct{ ID int64 }
	if code := s.upload(t, map[string]any{"name": "student", "game": "othello", "protocol": "othello-move", "command": []string{"./run.sh", "{host}", "{port}"}}, files, &e); code != 201 {
		t.Fatalf("upload: %d", code)
	}
	p := startPlay(t, s, map[string]any{"engine": e.ID, "color": "white", "move_time_ms": 2000})
	moves, last := playOut(t, s, p.GameID, p.SeatToken, "othello", rand.New(rand.NewPCG(39, 3)))
	if !last.Over || last.Reason != "normal" {
		t.Fatalf("against the uploaded engine: %+v after %d moves, want a normal end", last, moves)
	}
	var g struct {
		Status, Sandbox string
		White           struct{ Human bool }
	}
	waitAPI(t, "the game stored", 30*time.Second, func() bool {
		s.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", p.GameID), nil, &g)
		return g.Status != "running"
	})
	if g.Status != "finished" || g.Sandbox != "on" || !g.White.Human {
		t.Errorf("game %d: %+v, want finished in the sandbox, white the person", p.GameID, g)
	}
	t.Logf("against the sandboxed upload: the person made %d moves, %s (%s)", moves, last.Result, last.Reason)
}

// TestPlayRenjuForbidden: under Renju the seat lists black's forbidden
// points, and playing one is a 422 naming it; the game goes on.
func TestPlayRenjuForbidden(t *testing.T) {
	s := startSite(t)
	p := startPlay(t, s, map[string]any{"engine": nil, "game": "gomoku", "rule": "renju", "color": "black"})
	black, white := p.SeatToken, p.Second.SeatToken
	// Black's 8,7 9,7 and 7,8 7,9: 7,7 would make two open threes.
	for i, m := range [][2]int{{8, 7}, {0, 0}, {9, 7}, {0, 2}, {7, 8}, {0, 4}, {7, 9}, {0, 6}} {
		token := black
		if i%2 == 1 {
			token = white
		}
		if code := seatCall(t, s, "POST", fmt.Sprintf("/api/games/%d/move", p.GameID), token, map[string]any{"x": m[0], "y": m[1]}, nil); code != 200 {
			t.Fatalf("move %d %v: %d", i+1, m, code)
		}
	}
	v := waitTurn(t, s, p.GameID, black)
	if !slices.Contains(v.Forbidden, [2]int{7, 7}) {
		t.Fatalf("black's forbidden points %v: want 7,7 (double three)", v.Forbidden)
	}
	for _, l := range v.Legal {
		if l.X != nil && *l.X == 7 && *l.Y == 7 {
			t.Errorf("7,7 is both forbidden and legal")
		}
	}
	var ae apiErr
	if code := seatCall(t, s, "POST", fmt.Sprintf("/api/games/%d/move", p.GameID), black, map[string]any{"x": 7, "y": 7}, &ae); code != 422 || ae.Error.MessageKey != "forbidden" ||
		!strings.Contains(ae.Error.Message, "forbidden: double three") || ae.Error.MessageParams["detail"] != "double three" {
		t.Errorf("7,7: %d %+v, want 422 forbidden: double three", code, ae)
	}
	if code := seatCall(t, s, "POST", fmt.Sprintf("/api/games/%d/move", p.GameID), black, map[string]any{"x": 12, "y": 12}, nil); code != 200 {
		t.Errorf("a legal move after the refused one: %d", code)
	}
	var w seatView
	seatCall(t, s, "GET", fmt.Sprintf("/api/games/%d/seat", p.GameID), white, nil, &w)
	if len(w.Forbidden) != 0 {
		t.Errorf("white's forbidden points %v: Renju forbids black only", w.Forbidden)
	}
}

// TestPlayWhoAndHowMany: who may start a game with a person, and the
// limits of games in flight.
func TestPlayWhoAndHowMany(t *testing.T) {
	s := startSite(t, func(srv *web.Server) { srv.Play.PerPerson, srv.Play.PerEngine = 2, 1 })
	var greedy, rnd struct{ ID int64 }
	s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "greedy", "game": "othello", "builtin": "othello-greedy"}, &greedy)
	s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "rnd", "game": "othello", "builtin": "othello-random"}, &rnd)
	var ae apiErr
	// A guest, on a server without --play-guests.
	if code := seatCall(t, s, "POST", "/api/play", "", map[string]any{"engine": greedy.ID}, &ae); code != 401 {
		t.Errorf("a guest: %d %+v, want 401", code, ae)
	}
	// A participant: the built-ins and their own engines, not another's.
	var inv invitedAnswer
	s.mustCall(t, "POST", "/api/participants", map[string]string{"name": "ann"}, &inv)
	ann := member{s: s, token: accept(t, s, inv.Participants[0].Invitation.Code)}
	s.mustCall(t, "POST", "/api/participants", map[string]string{"name": "bob"}, &inv)
	bob := member{s: s, token: accept(t, s, inv.Participants[0].Invitation.Code)}
	var bobs struct{ ID int64 }
	if code := bob.upload(t, "POST", "/api/engines", map[string]any{"name": "bob-bot", "game": "othello", "protocol": "othello-move", "command": studentCommand}, studentEngine(t, "othello-random"), &bobs); code != 201 {
		t.Fatalf("bob's engine: %d", code)
	}
	if code := ann.call(t, "POST", "/api/play", map[string]any{"engine": bobs.ID}, &ae); code != 403 || ae.Error.Field != "engine" {
		t.Errorf("ann plays bob's engine: %d %+v, want 403", code, ae)
	}
	var p playAnswer
	if code := ann.call(t, "POST", "/api/play", map[string]any{"engine": greedy.ID, "color": "black"}, &p); code != 201 {
		t.Fatalf("ann plays a built-in: %d", code)
	}
	var g struct{ Black struct{ Name string } }
	s.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", p.GameID), nil, &g)
	if g.Black.Name != "ann" {
		t.Errorf("the person's name in the record: %q, want ann", g.Black.Name)
	}
	// One game at a time against greedy (--play-per-engine 1).
	if code := ann.call(t, "POST", "/api/play", map[string]any{"engine": greedy.ID}, &ae); code != 429 || ae.Error.Field != "engine" {
		t.Errorf("a second game against greedy: %d %+v, want 429", code, ae)
	}
	var p2 playAnswer
	if code := ann.call(t, "POST", "/api/play", map[string]any{"engine": rnd.ID}, &p2); code != 201 {
		t.Fatalf("ann's second game: %d", code)
	}
	// Two at a time per person (--play-per-person 2).
	if code := ann.call(t, "POST", "/api/play", map[string]any{"engine": nil, "game": "othello"}, &ae); code != 429 {
		t.Errorf("ann's third game: %d %+v, want 429", code, ae)
	}
	// A seat's token is for its own game only.
	if code := seatCall(t, s, "POST", fmt.Sprintf("/api/games/%d/resign", p2.GameID), p.SeatToken, nil, &ae); code != 403 {
		t.Errorf("resigning game %d with game %d's token: %d, want 403", p2.GameID, p.GameID, code)
	}
	waitTurn(t, s, p.GameID, p.SeatToken) // begun: the engine has connected
	if code := seatCall(t, s, "POST", fmt.Sprintf("/api/games/%d/resign", p.GameID), p.SeatToken, nil, nil); code != 200 {
		t.Fatalf("resign: %d", code)
	}
	waitTurn(t, s, p.GameID, p.SeatToken)
	waitAPI(t, "a seat free again", 30*time.Second, func() bool {
		return ann.call(t, "POST", "/api/play", map[string]any{"engine": greedy.ID}, nil) == 201
	})
}

// TestPlayOwnerAllows: another participant may play an engine once its
// owner allows it (PATCH playable_by_others), and not after they stop it;
// only the owner or the admin may say so.
func TestPlayOwnerAllows(t *testing.T) {
	s := startSite(t)
	var inv invitedAnswer
	s.mustCall(t, "POST", "/api/participants", map[string]string{"name": "ann"}, &inv)
	ann := member{s: s, token: accept(t, s, inv.Participants[0].Invitation.Code)}
	s.mustCall(t, "POST", "/api/participants", map[string]string{"name": "bob"}, &inv)
	bob := member{s: s, token: accept(t, s, inv.Participants[0].Invitation.Code)}
	var bobs struct {
		ID               int64
		PlayableByOthers bool `json:"playable_by_others"`
	}
	if code := bob.upload(t, "POST", "/api/engines", map[string]any{"name": "bob-bot", "game": "othello", "protocol": "othello-move", "command": studentCommand}, studentEngine(t, "othello-random"), &bobs); code != 201 {
		t.Fatalf("bob's engine: %d", code)
	}
	if bobs.PlayableByOthers {
		t.Errorf("a new engine: playable_by_others true, want false by default")
	}
	path := fmt.Sprintf("/api/engines/%d", bobs.ID)
	badge := func() bool {
		t.Helper()
		res, err := http.Get(fmt.Sprintf("%s/engines/%d", s.URL, bobs.ID))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		page, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("GET /engines/%d: %d", bobs.ID, res.StatusCode)
		}
		return bytes.Contains(page, []byte(`id="playable-badge"`))
	}
	if badge() {
		t.Errorf("GET /engines/%d: a playable badge before bob allowed it", bobs.ID)
	}
	var ae apiErr
	if code := ann.call(t, "POST", "/api/play", map[string]any{"engine": bobs.ID}, &ae); code != 403 || ae.Error.Field != "engine" {
		t.Fatalf("ann plays bob's engine before he allows it: %d %+v, want 403", code, ae)
	}
	// Only the owner (or the admin) says who may play it.
	if code := ann.call(t, "PATCH", path, map[string]any{"playable_by_others": true}, &ae); code != 403 {
		t.Errorf("ann allows bob's engine: %d %+v, want 403", code, ae)
	}
	if code := bob.call(t, "PATCH", path, map[string]any{"playable_by_others": "yes"}, &ae); code != 400 {
		t.Errorf("playable_by_others \"yes\": %d %+v, want 400", code, ae)
	}
	if code := bob.call(t, "PATCH", path, map[string]any{}, &ae); code != 400 || ae.Error.Field != "playable_by_others" {
		t.Errorf("an empty PATCH: %d %+v, want 400 naming playable_by_others", code, ae)
	}
	if code := bob.call(t, "PATCH", path, map[string]any{"playable_by_others": true}, &bobs); code != 200 || !bobs.PlayableByOthers {
		t.Fatalf("bob allows his engine: %d %+v", code, bobs)
	}
	s.mustCall(t, "GET", path, nil, &bobs)
	if !bobs.PlayableByOthers {
		t.Errorf("GET %s after bob allowed it: playable_by_others false", path)
	}
	// The engine's page says so (and said nothing before).
	if !badge() {
		t.Errorf("GET /engines/%d after bob allowed it: no playable badge", bobs.ID)
	}
	var p playAnswer
	if code := ann.call(t, "POST", "/api/play", map[string]any{"engine": bobs.ID, "color": "black"}, &p); code != 201 {
		t.Fatalf("ann plays bob's engine once he allows it: %d", code)
	}
	waitTurn(t, s, p.GameID, p.SeatToken)
	if code := seatCall(t, s, "POST", fmt.Sprintf("/api/games/%d/resign", p.GameID), p.SeatToken, nil, nil); code != 200 {
		t.Fatalf("resign: %d", code)
	}
	// The admin may stop it too, and then ann may not.
	s.mustCall(t, "PATCH", path, map[string]any{"playable_by_others": false}, &bobs)
	if code := ann.call(t, "POST", "/api/play", map[string]any{"engine": bobs.ID}, &ae); code != 403 {
		t.Errorf("ann plays bob's engine after the admin stopped it: %d %+v, want 403", code, ae)
	}
}

// TestPlayEngineFault: an engine that fails is scored as in any game: the
// person wins.
func TestPlayEngineFault(t *testing.T) {
	s := startSite(t)
	var e struct{ ID int64 }
	files := map[string]string{"run.sh": "#!/bin/sh\necho 'no engine here' >&2\nexit 3\n"}
	if code := s.upload(t, map[string]any{"name": "broken", "game": "othello", "protocol": "othello-move", "command": []string{"./run.sh", "{host}", "{port}"}, "connect_timeout_ms": 5000}, files, &e); code != 201 {
		t.Fatalf("upload: %d", code)
	}
	p := startPlay(t, s, map[string]any{"engine": e.ID, "color": "black"})
	var v seatView
	waitAPI(t, "the game's end", 60*time.Second, func() bool {
		seatCall(t, s, "GET", fmt.Sprintf("/api/games/%d/seat", p.GameID), p.SeatToken, nil, &v)
		return v.Over && v.Result != ""
	})
	if v.Result != "black" || (v.Reason != "crash" && v.Reason != "no_connect") {
		t.Errorf("against an engine that exits at once: %+v, want black (the person) to win by crash or no_connect", v)
	}
	var ae apiErr
	if code := seatCall(t, s, "POST", fmt.Sprintf("/api/games/%d/move", p.GameID), p.SeatToken, map[string]any{"text": "f5"}, &ae); code != 409 {
		t.Errorf("a move after the end: %d %+v, want 409", code, ae)
	}
}

// TestPlayNotResumed: a server that starts again cancels the games with
// people it finds running (their seats went with the server that stopped),
// and resumes nothing of them.
func TestPlayNotResumed(t *testing.T) {
	s := startSite(t)
	var e struct{ ID int64 }
	s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "rnd", "game": "othello", "builtin": "othello-random"}, &e)
	p := startPlay(t, s, map[string]any{"engine": e.ID, "color": "black"})
	// A second service on the same database, as after a restart.
	again := &tournament.Service{Store: s.DB}
	defer again.Close()
	if err := again.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	tt, err := s.DB.Tournament(context.Background(), p.TournamentID)
	if err != nil {
		t.Fatal(err)
	}
	if tt.Status != tournament.StatusCancelled {
		t.Errorf("the game with a person after a restart: tournament %s, want cancelled", tt.Status)
	}
}
