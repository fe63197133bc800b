package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// leagueRow is a row of a league's ladder (GET .../standings).
type leagueRow struct {
	EngineID  int64 `json:"engine_id"`
	Name      string
	Version   int
	Elo       float64
	EloError  float64 `json:"elo_error"`
	Games     int64
	Wins      int64
	Draws     int64
	Losses    int64
	Current   bool
	Placement bool
	Previous  *struct {
		Version int
		Elo     float64
	}
	EloChange *float64 `json:"elo_change"`
}

// leagueGame is a game of a league as the games list has it.
type leagueGame struct {
	ID     int64
	Status string
	Result *string
	Pair   int64
	Black  struct {
		EngineID int64 `json:"engine_id"`
		Version  int
	}
	White struct {
		EngineID int64 `json:"engine_id"`
		Version  int
	}
}

// leagueEngine uploads (POST) or replaces (PUT) an engine whose one file,
// run.sh, runs this taikai binary's built-in player as an othello-move
// client: a program that answers at once.
func leagueEngine(tb testing.TB, s *serverProcess, token, method, path, name, bin, player string) int64 {
	tb.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	meta, _ := mw.CreateFormField("meta")
	fmt.Fprintf(meta, `{"name":%q,"game":"othello","protocol":"othello-move","command":["./run.sh","{host}","{port}"]}`, name)
	fw, _ := mw.CreateFormFile("file", "run.sh")
	fmt.Fprintf(fw, "#!/bin/sh\nexec %q engine %s --protocol othello-move --time-ms 20 -H \"$1\" -p \"$2\"\n", bin, player)
	mw.Close()
	req, err := http.NewRequest(method, s.url+path, &body)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	var out struct{ ID int64 }
	b := new(bytes.Buffer)
	b.ReadFrom(res.Body)
	if res.StatusCode >= 300 || json.Unmarshal(b.Bytes(), &out) != nil {
		tb.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	return out.ID
}

func ladder(tb testing.TB, s *serverProcess, tid int64, all bool) []leagueRow {
	tb.Helper()
	q := ""
	if all {
		q = "?versions=all"
	}
	var st struct{ Standings []leagueRow }
	s.call(tb, "GET", fmt.Sprintf("/api/tournaments/%d/standings%s", tid, q), nil, "", &st)
	return st.Standings
}

func leagueGames(tb testing.TB, s *serverProcess, tid int64) []leagueGame {
	tb.Helper()
	var list struct{ Games []leagueGame }
	s.call(tb, "GET", fmt.Sprintf("/api/tournaments/%d/games?limit=100000", tid), nil, "", &list)
	return list.Games
}

// waitLadder polls a league's ladder (all versions) until ok, for at most
// within.
func waitLadder(tb testing.TB, s *serverProcess, tid int64, what string, within time.Duration, ok func([]leagueRow) bool) []leagueRow {
	tb.Helper()
	deadline := time.Now().Add(scaled(within))
	for {
		rows := ladder(tb, s, tid, true)
		if ok(rows) {
			return rows
		}
		if time.Now().After(deadline) {
			tb.Fatalf("league %d: %s: not after %v: %+v\n%s", tid, what, within, rows, s.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func rowOf(rows []leagueRow, engine int64, version int) *leagueRow {
	for i := range rows {
		if rows[i].EngineID == engine && rows[i].Version == version {
			return &rows[i]
		}
	}
	return nil
}

// TestLeagueEndToEnd runs a league in the real server among four uploaded
// engines: random, greedy, and two random ones replaced mid-league (PUT) by
// greedy and by alpha-beta. The new versions play their placement games,
// the alpha-beta version leads and is rated above its random predecessor by
// more than both intervals, the old versions play no more games, a SIGKILL
// loses and doubles nothing, and the ladder equals a recount of the games.
func TestLeagueEndToEnd(t *testing.T) {
	t.Parallel()
	bin := taikaiBinary(t)
	dir := t.TempDir()
	var flags []string
	if sandboxErr(t) != nil {
		flags = append(flags, "--sandbox=off")
	}
	db, data := filepath.Join(dir, "taikai.db"), filepath.Join(dir, "data")
	s := startServer(t, bin, db, data, flags...)
	const token = "e2e-token"
	random := leagueEngine(t, s, token, "POST", "/api/engines", "lg-random", bin, "othello-random")
	greedy := leagueEngine(t, s, token, "POST", "/api/engines", "lg-greedy", bin, "othello-greedy")
	x := leagueEngine(t, s, token, "POST", "/api/engines", "lg-x", bin, "othello-random")
	y := leagueEngine(t, s, token, "POST", "/api/engines", "lg-y", bin, "othello-random")
	const placement = 6
	tid := s.postJSON(t, "/api/tournaments", fmt.Sprintf(
		`{"name":"league","game":"othello","format":"league","engines":[%d,%d,%d,%d],"placement_games":%d,"move_time_ms":2000,"concurrency":2,"start":true}`,
		random, greedy, x, y, placement))
	var tr struct {
		Format         string
		PlacementGames int    `json:"placement_games"`
		TotalGames     *int64 `json:"total_games"`
		Status         string
		FinishedGames  int64 `json:"finished_games"`
	}
	s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d", tid), nil, "", &tr)
	if tr.Format != "league" || tr.PlacementGames != placement || tr.TotalGames != nil || tr.Status != "running" {
		t.Fatalf("league as created: %+v", tr)
	}

	// Every first version plays enough for its rating to mean something.
	waitLadder(t, s, tid, "16 games of every first version", 4*time.Minute, func(rows []leagueRow) bool {
		for _, id := range []int64{random, greedy, x, y} {
			if r := rowOf(rows, id, 1); r == nil || r.Games < 16 {
				return false
			}
		}
		return true
	})
	leagueEngine(t, s, token, "PUT", fmt.Sprintf("/api/engines/%d", x), "lg-x", bin, "othello-greedy")
	leagueEngine(t, s, token, "PUT", fmt.Sprintf("/api/engines/%d", y), "lg-y", bin, "othello-alphabeta")
	// Every game started from now on plays the new versions: the old ones'
	// games all have ids up to here.
	var lastOld int64
	for _, g := range leagueGames(t, s, tid) {
		lastOld = max(lastOld, g.ID)
	}

	// A SIGKILL once the new versions have started playing.
	waitLadder(t, s, tid, "games of the new versions", 3*time.Minute, func(rows []leagueRow) bool {
		r := rowOf(rows, y, 2)
		return r != nil && r.Games >= 4
	})
	before := map[int64]leagueGame{}
	for _, g := range leagueGames(t, s, tid) {
		if g.Status == "finished" {
			before[g.ID] = g
		}
	}
	pid := s.cmd.Process.Pid
	s.stop(t, syscall.SIGKILL)
	if left := waitNoEngines(t, bin, pid); len(left) > 0 {
		t.Logf("engines %v of the killed server were left to the next start", left)
	}
	s = startServer(t, bin, db, data, flags...)
	after := leagueGames(t, s, tid)
	seen := map[int64]bool{}
	for _, g := range after {
		if seen[g.ID] {
			t.Errorf("game %d listed twice after the restart", g.ID)
		}
		seen[g.ID] = true
		if b, ok := before[g.ID]; ok && (g.Status != "finished" || *g.Result != *b.Result) {
			t.Errorf("game %d: %s %v after the restart, was finished %v", g.ID, g.Status, g.Result, *b.Result)
		}
		delete(before, g.ID)
	}
	for id := range before {
		t.Errorf("finished game %d lost by the SIGKILL", id)
	}

	// The league goes on: the new versions finish their placement, and
	// alpha-beta leads, above its random predecessor by more than both
	// intervals.
	rows := waitLadder(t, s, tid, "alpha-beta leading, clear of its predecessor", 5*time.Minute, func(rows []leagueRow) bool {
		ab, old := rowOf(rows, y, 2), rowOf(rows, y, 1)
		xg := rowOf(rows, x, 2)
		if ab == nil || old == nil || xg == nil || ab.Placement || xg.Placement || ab.Games < placement || xg.Games < placement {
			return false
		}
		var lead *leagueRow
		for i := range rows {
			if rows[i].Current {
				lead = &rows[i]
				break
			}
		}
		return lead == ab && ab.Elo-old.Elo > ab.EloError+old.EloError
	})
	ab, old := rowOf(rows, y, 2), rowOf(rows, y, 1)
	t.Logf("alpha-beta v2 %.1f ± %.1f (%d games), random v1 %.1f ± %.1f (%d games)", ab.Elo, ab.EloError, ab.Games, old.Elo, old.EloError, old.Games)
	if ab.Previous == nil || ab.Previous.Version != 1 || ab.EloChange == nil {
		t.Errorf("alpha-beta's row has no previous version: %+v", ab)
	}
	if old.Current || rowOf(ladder(t, s, tid, false), y, 1) != nil {
		t.Errorf("the replaced version is listed as current: %+v", old)
	}

	// Pause: no game starts; once the running ones end, the ladder equals
	// a recount of the games.
	var paused struct{ Status string }
	s.call(t, "POST", fmt.Sprintf("/api/tournaments/%d/pause", tid), nil, "", &paused)
	if paused.Status != "paused" {
		t.Fatalf("paused league: %+v", paused)
	}
	var games []leagueGame
	deadline := time.Now().Add(scaled(time.Minute))
	for {
		games = leagueGames(t, s, tid)
		running := 0
		for _, g := range games {
			if g.Status == "running" {
				running++
			}
		}
		if running == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d games still running a minute after the pause", running)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Resumed after a pause, it plays on.
	s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d", tid), nil, "", &tr)
	n := tr.FinishedGames
	s.call(t, "POST", fmt.Sprintf("/api/tournaments/%d/start", tid), nil, "", &paused)
	waitLadder(t, s, tid, "a game after the resume", time.Minute, func([]leagueRow) bool {
		s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d", tid), nil, "", &tr)
		return tr.FinishedGames > n
	})
	// Cancelled, it is over: its running games are aborted, not scored,
	// and the ladder equals a recount of the finished games.
	s.call(t, "POST", fmt.Sprintf("/api/tournaments/%d/cancel", tid), nil, "", &paused)
	if paused.Status != "cancelled" {
		t.Errorf("cancelled league: %+v", paused)
	}
	games = leagueGames(t, s, tid)
	for _, g := range games {
		if g.Status != "finished" && g.Status != "aborted" {
			t.Errorf("game %d is %s after the cancel", g.ID, g.Status)
		}
	}
	type key struct {
		engine  int64
		version int
	}
	count := map[key]*leagueRow{}
	tally := func(k key, res string) {
		r := count[k]
		if r == nil {
			r = &leagueRow{}
			count[k] = r
		}
		r.Games++
		switch res {
		case "win":
			r.Wins++
		case "draw":
			r.Draws++
		default:
			r.Losses++
		}
	}
	for _, g := range games {
		if g.Black.Version == 0 || g.White.Version == 0 {
			t.Errorf("game %d has no versions: %+v", g.ID, g)
		}
		for _, side := range []struct {
			engine  int64
			version int
		}{{g.Black.EngineID, g.Black.Version}, {g.White.EngineID, g.White.Version}} {
			if (side.engine == x || side.engine == y) && side.version == 1 && g.ID > lastOld {
				t.Errorf("game %d (started after the replacement) plays engine %d's old version", g.ID, side.engine)
			}
		}
		if g.Status != "finished" {
			continue
		}
		bres, wres := "draw", "draw"
		switch *g.Result {
		case "black":
			bres, wres = "win", "loss"
		case "white":
			bres, wres = "loss", "win"
		}
		tally(key{g.Black.EngineID, g.Black.Version}, bres)
		tally(key{g.White.EngineID, g.White.Version}, wres)
	}
	all := ladder(t, s, tid, true)
	if len(all) != len(count) {
		t.Errorf("%d ladder rows, %d versions played: %+v", len(all), len(count), all)
	}
	for _, r := range all {
		c := count[key{r.EngineID, r.Version}]
		if c == nil || c.Games != r.Games || c.Wins != r.Wins || c.Draws != r.Draws || c.Losses != r.Losses {
			t.Errorf("ladder row %s v%d %+v, the games say %+v", r.Name, r.Version, r, c)
		}
	}
	t.Logf("%d games in all", len(games))
	s.stop(t, syscall.SIGTERM)
}

// TestLeagueJoinsCheckedUpload: a league of "entrants": "checked" takes an
// engine a participant (not the admin) uploads while it runs, once the
// engine's pre-flight check has passed, and plays it.
func TestLeagueJoinsCheckedUpload(t *testing.T) {
	t.Parallel()
	bin := taikaiBinary(t)
	dir := t.TempDir()
	var flags []string
	if sandboxErr(t) != nil {
		flags = append(flags, "--sandbox=off")
	}
	s := startServer(t, bin, filepath.Join(dir, "taikai.db"), filepath.Join(dir, "data"), flags...)
	const token = "e2e-token"
	a := leagueEngine(t, s, token, "POST", "/api/engines", "lc-a", bin, "othello-random")
	b := leagueEngine(t, s, token, "POST", "/api/engines", "lc-b", bin, "othello-greedy")
	for _, id := range []int64{a, b} {
		waitCheckDone(t, s, id)
	}
	tid := s.postJSON(t, "/api/tournaments", `{"name":"open league","game":"othello","format":"league","entrants":"checked","placement_games":2,"move_time_ms":2000,"concurrency":2,"start":true}`)

	// A participant of the class, signed in with their own token.
	var inv struct {
		Participants []struct {
			Invitation struct{ Code string }
		}
	}
	s.call(t, "POST", "/api/participants", strings.NewReader("hanako\n"), "text/csv", &inv)
	var acc struct{ Token string }
	s.call(t, "POST", "/api/invitations/accept", strings.NewReader(fmt.Sprintf(`{"code":%q}`, inv.Participants[0].Invitation.Code)), "application/json", &acc)
	if acc.Token == "" {
		t.Fatal("no participant token")
	}
	c := leagueEngine(t, s, acc.Token, "POST", "/api/engines", "hanako-bot", bin, "othello-greedy")
	rows := waitLadder(t, s, tid, "the participant's engine playing", 3*time.Minute, func(rows []leagueRow) bool {
		r := rowOf(rows, c, 1)
		return r != nil && r.Games >= 2
	})
	if r := rowOf(rows, c, 1); !r.Current {
		t.Errorf("the participant's engine is not current: %+v", r)
	}
	var tj struct {
		Entrants string
		Engines  []struct {
			EngineID int64 `json:"engine_id"`
		}
	}
	s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d", tid), nil, "", &tj)
	if tj.Entrants != "checked" || len(tj.Engines) != 3 {
		t.Errorf("league entrants %+v, want checked and 3 engines", tj)
	}
	s.call(t, "POST", fmt.Sprintf("/api/tournaments/%d/cancel", tid), nil, "", nil)
	s.stop(t, syscall.SIGTERM)
}

// waitCheckDone waits for an engine's pre-flight check to pass.
func waitCheckDone(tb testing.TB, s *serverProcess, id int64) {
	tb.Helper()
	deadline := time.Now().Add(scaled(2 * time.Minute))
	for {
		var c struct {
			Status string
			Result *struct {
				OK      bool
				Message string
			}
		}
		code, body := s.do(tb, "GET", fmt.Sprintf("/api/engines/%d/check", id), "", nil)
		if code == http.StatusOK && json.Unmarshal(body, &c) == nil && c.Status == "done" {
			if c.Result == nil || !c.Result.OK {
				tb.Fatalf("engine %d's check did not pass: %s", id, body)
			}
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("engine %d's check not done: %d %s", id, code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestLeagueOnWorkers plays a league on a `taikai worker` (embedded NATS):
// the worker is SIGKILLed mid-game and started again, its game is played
// again from the start, every finished game was played by the worker, and
// the ladder counts each finished game once.
func TestLeagueOnWorkers(t *testing.T) {
	t.Parallel()
	bin := taikaiBinary(t)
	dir := t.TempDir()
	natsURL := "nats://127.0.0.1:" + strconv.Itoa(freePort(t))
	s := startServer(t, bin, filepath.Join(dir, "taikai.db"), filepath.Join(dir, "data"),
		"--nats-embedded", strings.TrimPrefix(natsURL, "nats://"), "--worker-timeout", "3s")
	var c struct{ Name, Secret string }
	s.call(t, "POST", "/api/workers/credentials", strings.NewReader(`{"name":"lw"}`), "application/json", &c)
	env := []string{"TAIKAI_WORKER_SECRET=" + c.Secret}
	w := startWorker(t, env, bin, natsURL, "lw", filepath.Join(dir, "worker"), "--concurrency", "2")
	var ids []int64
	// Engines that answer at once, under a clock a loaded machine keeps,
	// their moves played out 15 ms apart: a game lasts about a second, long
	// enough for the kill to find one mid-game. Unpaced, a game took a few
	// milliseconds and the kill missed hundreds of them (990 games, 38 s, once).
	for i, b := range []string{"othello-random", "othello-greedy", "othello-random"} {
		ids = append(ids, s.postJSON(t, "/api/engines", fmt.Sprintf(`{"name":"%s-%d","game":"othello","builtin":%q}`, b, i, b)))
	}
	tid := s.postJSON(t, "/api/tournaments", fmt.Sprintf(
		`{"name":"league on workers","game":"othello","format":"league","engines":[%d,%d,%d],"placement_games":2,"move_time_ms":5000,"pace_ms":15,"concurrency":2,"start":true}`, ids[0], ids[1], ids[2]))
	var lost int64
	for kills := 1; ; kills++ {
		lost = killMidGame(t, s, w)
		w = startWorker(t, env, bin, natsURL, "lw", filepath.Join(dir, "worker"), "--concurrency", "2")
		if interrupted(t, s, lost) {
			break
		}
		if kills == 3 {
			t.Fatalf("3 kills, none mid-game")
		}
	}
	waitLadder(t, s, tid, "12 games after the worker's restart", 3*time.Minute, func(rows []leagueRow) bool {
		var g clusterGame
		s.call(t, "GET", fmt.Sprintf("/api/games/%d", lost), nil, "", &g)
		var n int64
		for _, r := range rows {
			n += r.Games
		}
		return g.Status == "finished" && n >= 24
	})
	s.call(t, "POST", fmt.Sprintf("/api/tournaments/%d/cancel", tid), nil, "", nil)
	var g clusterGame
	s.call(t, "GET", fmt.Sprintf("/api/games/%d", lost), nil, "", &g)
	if g.Attempt < 2 || g.Worker == "" {
		t.Errorf("game %d, lost with the worker: %+v (reason %s), want finished by it at attempt 2 or more", lost, g, deref(g.Reason))
	}
	var finished int64
	for _, lg := range leagueGames(t, s, tid) {
		if lg.Status != "finished" {
			continue
		}
		finished++
		var cg clusterGame
		s.call(t, "GET", fmt.Sprintf("/api/games/%d", lg.ID), nil, "", &cg)
		if cg.Worker != "lw" {
			t.Errorf("game %d played by %q, not the worker", lg.ID, cg.Worker)
		}
	}
	var n int64
	for _, r := range ladder(t, s, tid, true) {
		n += r.Games
	}
	if n != 2*finished {
		t.Errorf("the ladder counts %d sides, %d games finished", n, finished)
	}
	s.stop(t, syscall.SIGTERM)
}
