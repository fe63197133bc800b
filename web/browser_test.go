package web_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/taikai-dev/taikai/internal/testkit"
)

// TestBrowser drives the dashboard in headless Chromium against a real server
// playing real games between built-in engines. The steps share one server and
// one browser, and run in order: later steps use the games of earlier ones.
func TestBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early (or fail on CI) without a browser
	start := time.Now()
	s := startSite(t)
	b := startBrowser(t, s)

	ids := map[string]int64{}
	for _, name := range []string{"othello-random", "othello-greedy", "othello-alphabeta", "gomoku-random", "gomoku-threat", "checkers-random", "checkers-minimax"} {
		var e engineAnswer
		s.mustCall(t, "POST", "/api/engines", map[string]any{"name": name, "game": strings.SplitN(name, "-", 2)[0], "builtin": name}, &e)
		ids[name] = e.ID
	}
	var final, rr, gomoku, draughts tournamentAnswer
	// Games of a few seconds each, paced (75 ms a move, outside the clocks)
	// so that the game page sees moves arrive while the engines use next to
	// no CPU. The live game and reconnection steps each follow a game to its
	// end: at 150 ms a move the test waited twice as long (23 s against 14 s
	// alone) for the same checks. Forty of them, more than the whole test
	// lasts even on a busy machine, so that one is always being played for
	// the overview, the reconnection and the projector steps; the test
	// cancels it at the end.
	s.mustCall(t, "POST", "/api/tournaments", map[string]any{
		"name": "Live final", "game": "othello", "engines": []int64{ids["othello-greedy"], ids["othello-random"]},
		"games_per_pair": 40, "move_time_ms": 300, "pace_ms": 75, "concurrency": 1, "start": true,
	}, &final)
	s.mustCall(t, "POST", "/api/tournaments", map[string]any{
		"name": "Class round robin", "game": "othello",
		"engines":        []int64{ids["othello-random"], ids["othello-greedy"], ids["othello-alphabeta"]},
		"games_per_pair": 2, "move_time_ms": 40, "concurrency": 2, "start": true,
	}, &rr)
	s.mustCall(t, "POST", "/api/tournaments", map[string]any{
		"name": "Gomoku cup", "game": "gomoku", "engines": []int64{ids["gomoku-threat"], ids["gomoku-random"]},
		"games_per_pair": 1, "move_time_ms": 200, "start": true,
	}, &gomoku)
	// English rules (kings), paced so that the page sees moves arrive; more
	// games than the test lasts, so that one is being played when the
	// Checkers step comes (20 were all over once, alpha-beta winning each in
	// a few seconds); cancelled at the end. Minimax to a fixed depth answers
	// at once: alpha-beta spent half of each move's 100 ms thinking, a tenth
	// of the test's CPU, for a board this test only draws.
	s.mustCall(t, "POST", "/api/tournaments", map[string]any{
		"name": "Checkers", "game": "checkers", "rule": "english", "engines": []int64{ids["checkers-minimax"], ids["checkers-random"]},
		"games_per_pair": 200, "move_time_ms": 100, "pace_ms": 100, "concurrency": 1, "start": true,
	}, &draughts)

	// A knockout of four from the built-in openings, and an SPRT match.
	var ko, sprt tournamentAnswer
	var quickAB engineAnswer
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "quick-alphabeta", "game": "othello",
		"command": []string{self, "engine", "othello-alphabeta", "--host", "{host}", "--port", "{port}", "--color", "{color}", "--name", "{name}", "--time-ms", "20"}}, &quickAB)
	koIDs := []int64{ids["othello-random"], ids["othello-greedy"]}
	for _, name := range []string{"ko-random", "ko-greedy"} {
		var e engineAnswer
		s.mustCall(t, "POST", "/api/engines", map[string]any{"name": name, "game": "othello", "builtin": "othello-" + strings.TrimPrefix(name, "ko-")}, &e)
		koIDs = append(koIDs, e.ID)
	}
	s.mustCall(t, "POST", "/api/tournaments", map[string]any{
		"name": "Knockout", "game": "othello", "engines": koIDs, "format": "knockout", "games_per_pair": 2, "max_extra": 1,
		"openings": map[string]any{"suite": "builtin"}, "move_time_ms": 40, "concurrency": 2, "start": true,
	}, &ko)
	s.mustCall(t, "POST", "/api/tournaments", map[string]any{
		// Alpha-beta told to think 20 ms a move under a 5 s clock (quickAB):
		// it decides quickly and never loses on time on a machine loaded by
		// every other test, as it did at 40 ms a move.
		"name": "SPRT", "game": "othello", "engines": []int64{quickAB.ID, ids["othello-random"]}, "games_per_pair": 200,
		"openings": map[string]any{"suite": "builtin"}, "sprt": "elo0=0 elo1=50", "move_time_ms": 5000, "concurrency": 2, "start": true,
	}, &sprt)

	// The Checkers step in a tab of its own, beside the others: it follows a
	// paced game to its end and replays it ply by ply, most of it waiting.
	beside := testkit.Concurrent(t)
	defer beside.Wait() // also when the test ends early
	checkersTab := startBrowser(t, s)
	beside.Run("Checkers", func(t *testing.T) {
		b := checkersTab
		// Live: the board as the rules replay the moves so far, men and
		// kings, and the last move's path.
		id := liveGameOf(t, s, b, draughts.ID)
		b.waitJS(t, "a few checkers moves", `+document.querySelector('#ply').textContent >= 6 || document.querySelector('#result').textContent !== ''`, 60*time.Second)
		v := b.view(t, 8)
		var g gameAnswer
		s.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", id), nil, &g)
		if g.Rule != "english" || len(g.Moves) < v.Ply {
			t.Fatalf("game %d: rule %q, %d moves, page at ply %d", id, g.Rule, len(g.Moves), v.Ply)
		}
		frames := checkersFrames(t, g.Rule, g.Moves)
		if !slices.Equal(v.Rows, frames[v.Ply]) {
			t.Errorf("live checkers board at ply %d\n%s\nwant\n%s", v.Ply, strings.Join(v.Rows, "\n"), strings.Join(frames[v.Ply], "\n"))
		}
		if n := evalJS[int](t, b, `document.querySelectorAll('#board .b-dark').length`); n != 32 {
			t.Errorf("%d dark squares drawn, want 32", n)
		}
		// The replay, once the game is over: first, then forward ply by ply,
		// every board as the rules have it, the path of every move drawn.
		waitAPI(t, "the checkers game's end", 3*time.Minute, func() bool {
			s.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", id), nil, &g)
			return g.Status == "finished"
		})
		frames = checkersFrames(t, g.Rule, g.Moves)
		kings := 0
		for _, f := range frames {
			kings += strings.Count(strings.Join(f, ""), "X") + strings.Count(strings.Join(f, ""), "O")
		}
		b.open(t, fmt.Sprintf("/games/%d", id))
		b.waitJS(t, "the checkers replay", fmt.Sprintf(`document.querySelector('#result').textContent !== '' && +document.querySelector('#ply').textContent === %d`, len(g.Moves)), 30*time.Second)
		b.run(t, "the first position", 15*time.Second, chromedp.Click(chromedp.CSS("#first")))
		for ply := 0; ply <= len(g.Moves); ply++ {
			if ply > 0 {
				b.run(t, "the next ply", 15*time.Second, chromedp.Click(chromedp.CSS("#next")))
			}
			b.waitJS(t, fmt.Sprintf("ply %d", ply), fmt.Sprintf(`+document.querySelector('#ply').textContent === %d`, ply), 15*time.Second)
			if got := b.boardRows(t, 8); !slices.Equal(got, frames[ply]) {
				t.Fatalf("replay ply %d: board\n%s\nwant\n%s", ply, strings.Join(got, "\n"), strings.Join(frames[ply], "\n"))
			}
			path := evalJS[string](t, b, `(document.querySelector('#board .move-path') || {dataset: {path: ''}}).dataset.path`)
			want := ""
			if ply > 0 {
				m := g.Moves[ply-1]
				parts := []string{fmt.Sprintf("%d,%d", *m.X, *m.Y)}
				for _, p := range m.Path {
					parts = append(parts, fmt.Sprintf("%d,%d", p[0], p[1]))
				}
				want = strings.Join(parts, " ")
				if text := evalJS[string](t, b, fmt.Sprintf(`document.querySelector('#moves [data-ply="%d"] .mv-t').textContent`, ply)); text != m.Text || !regexp.MustCompile(`^\d+([-x]\d+)+$`).MatchString(text) {
					t.Errorf("ply %d listed as %q, want %q", ply, text, m.Text)
				}
			}
			if path != want {
				t.Errorf("ply %d: path drawn %q, want %q", ply, path, want)
			}
		}
		t.Logf("checkers game %d: %d plies, %d king-positions drawn, %s by %s", id, len(g.Moves), kings, strOr(g.Result), strOr(g.Reason))
		b.screenshot(t, "game-checkers")
		b.noErrors(t, "checkers game page", nil)
	})

	var liveID int64
	t.Run("LiveGame", func(t *testing.T) {
		// The board follows the moves as they arrive: each view matches the
		// position the API's moves give at the ply shown. A game that ends
		// before the page has seen three moves (its last moves, on a busy
		// machine) gives way to the next one.
		follow := func() bool {
			seen := -1
			for range 3 {
				b.waitJS(t, fmt.Sprintf("a move after ply %d", seen), fmt.Sprintf(`+document.querySelector('#ply').textContent > %d || document.querySelector('#result').textContent !== ''`, seen), 45*time.Second)
				v := b.view(t, 8)
				if v.Result != "" {
					var g gameAnswer
					s.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", liveID), nil, &g)
					t.Logf("game %d ended at ply %d before the page saw three moves (status %s, result %v, reason %v)", liveID, g.Plies, g.Status, strOr(g.Result), strOr(g.Reason))
					return false
				}
				var g gameAnswer
				s.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", liveID), nil, &g)
				if len(g.Moves) < v.Ply {
					t.Fatalf("the page shows ply %d, the API has %d moves", v.Ply, len(g.Moves))
				}
				frames := othelloFrames(t, g.Moves[:v.Ply])
				if want := frames[v.Ply]; !slices.Equal(v.Rows, want) {
					t.Errorf("live board at ply %d\n%s\nwant\n%s", v.Ply, strings.Join(v.Rows, "\n"), strings.Join(want, "\n"))
				}
				seen = v.Ply
			}
			return true
		}
		for try := 0; ; try++ {
			liveID = liveGameOf(t, s, b, final.ID)
			if follow() {
				break
			}
			if try == 4 {
				t.Fatal("five games in a row ended before their page saw three moves")
			}
		}
		if got := evalJS[int](t, b, `document.querySelectorAll('#board .last-move').length`); got != 1 && got != 0 {
			t.Errorf("%d last-move markers, want at most 1", got)
		}
		if !evalJS[bool](t, b, `!!document.querySelector('#result') && document.querySelector('#result').textContent === '' || document.querySelector('#live-badge').hidden`) {
			t.Errorf("a result is shown while the game is live")
		}
		if evalJS[string](t, b, `document.querySelector('.player.to-move .clock')?.textContent ?? ''`) == "" && evalJS[bool](t, b, `!document.querySelector('#live-badge').hidden`) {
			t.Errorf("no running clock for the side to move while live")
		}
		b.screenshot(t, "game-live")
		b.waitJS(t, "the result", `document.querySelector('#result').textContent.trim() !== ''`, 45*time.Second)

		var g gameAnswer
		s.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", liveID), nil, &g)
		if g.Status != "finished" || g.Result == nil {
			t.Fatalf("the game ended in the page but the API says status %q result %v", g.Status, g.Result)
		}
		want := map[string]string{"black": "Black wins", "white": "White wins", "draw": "Draw"}[*g.Result]
		if got := evalJS[string](t, b, `document.querySelector('#result .result-main').textContent`); got != want {
			t.Errorf("result %q, want %q (API result %q)", got, want, *g.Result)
		}
		if got := evalJS[int](t, b, `+document.querySelector('#ply').textContent`); got != len(g.Moves) {
			t.Errorf("ply %d at the end, want %d", got, len(g.Moves))
		}
		frames := othelloFrames(t, g.Moves)
		if got, want := b.boardRows(t, 8), frames[len(frames)-1]; !slices.Equal(got, want) {
			t.Errorf("final board\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if !evalJS[bool](t, b, `document.querySelector('#live-badge').hidden`) {
			t.Errorf("still marked live after the end")
		}
		b.noErrors(t, "live game page", nil)
	})

	t.Run("Overview", func(t *testing.T) {
		b.open(t, "/")
		b.waitJS(t, "six tournaments", `document.querySelectorAll('#tournaments tbody tr').length === 6`, 30*time.Second)
		b.waitJS(t, "a live board", `[...document.querySelectorAll('#live-games .game-card')].some((c) => c.querySelector('.stone'))`, 60*time.Second)
		hrefs := evalJS[[]string](t, b, `[...document.querySelectorAll('#live-games .game-card')].map((a) => a.getAttribute('href'))`)
		for _, h := range hrefs {
			if !strings.HasPrefix(h, "/games/") {
				t.Errorf("a live card links to %q, want /games/{id}", h)
			}
		}
		if got := evalJS[int](t, b, `document.querySelectorAll('#tournaments .progress').length`); got != 6 {
			t.Errorf("%d progress bars, want 6", got)
		}
		b.screenshot(t, "overview")
		b.noErrors(t, "overview", nil)

		b.run(t, "big screen", 30*time.Second, chromedp.EmulateViewport(1920, 1080))
		b.open(t, "/?tv=1")
		b.waitJS(t, "tournaments in tv mode", `document.querySelectorAll('#tournaments tbody tr').length === 6`, 30*time.Second)
		b.waitJS(t, "tv mode", `document.body.classList.contains('tv')`, 15*time.Second)
		if got := evalJS[string](t, b, `document.querySelector('#tournaments tbody a').getAttribute('href')`); !strings.Contains(got, "tv=1") {
			t.Errorf("tv mode link %q does not keep tv=1", got)
		}
		b.screenshot(t, "overview-tv")
		b.noErrors(t, "overview ?tv=1", nil)
		b.run(t, "desktop", 30*time.Second, chromedp.EmulateViewport(1280, 900))
	})

	t.Run("Reconnect", func(t *testing.T) {
		// The overview reconnects by itself when its socket is cut.
		b.open(t, "/")
		b.waitJS(t, "the live socket", `document.querySelector('#live-status').dataset.state === 'open'`, 30*time.Second)
		opened := s.wsOpened("/ws/live")
		if s.dropSockets() == 0 {
			t.Fatal("no websocket to cut")
		}
		b.waitJS(t, "the overview to reconnect", `document.querySelector('#live-status').dataset.state === 'open'`, 30*time.Second)
		waitAPI(t, "a new /ws/live connection", 30*time.Second, func() bool { return s.wsOpened("/ws/live") > opened })

		// A game page reconnects, resyncs from the new snapshot and follows on.
		// A game whose end reached the page before its socket was cut (the
		// page then rightly stays closed) gives way to the next one.
		var id int64
		var path string
		for try := 0; ; try++ {
			id = liveGameOf(t, s, b, final.ID)
			path = fmt.Sprintf("/ws/games/%d", id)
			opened = s.wsOpened(path)
			s.dropSockets()
			ended := false
			waitAPI(t, "the game page to reconnect", 30*time.Second, func() bool {
				if s.wsOpened(path) > opened {
					return true
				}
				// Read after the count: a page that reconnected has been
				// counted before it can show anything the new socket said.
				ended = evalJS[bool](t, b, `document.querySelector('#result').textContent !== ''`) && s.wsOpened(path) == opened
				return ended
			})
			if !ended {
				break
			}
			t.Logf("game %d ended before its page's socket was cut", id)
			if try == 4 {
				t.Fatal("five games in a row ended before their page's socket was cut")
			}
		}
		b.waitJS(t, "the result after reconnecting", `document.querySelector('#result').textContent !== ''`, 45*time.Second)
		var g gameAnswer
		s.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", id), nil, &g)
		frames := othelloFrames(t, g.Moves)
		if v := b.view(t, 8); v.Ply != len(g.Moves) || !slices.Equal(v.Rows, frames[len(g.Moves)]) {
			t.Errorf("after reconnecting: ply %d board\n%s\nwant ply %d\n%s", v.Ply, strings.Join(v.Rows, "\n"), len(g.Moves), strings.Join(frames[len(g.Moves)], "\n"))
		}
		if got := evalJS[int](t, b, `document.querySelectorAll('#moves li').length`); got != len(g.Moves) {
			t.Errorf("%d moves listed after reconnecting, want %d", got, len(g.Moves))
		}
		// After the end, the page stays closed: no new connection comes within
		// a few backoff periods.
		opened = s.wsOpened(path)
		s.dropSockets()
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			if s.wsOpened(path) > opened {
				t.Fatal("the game page reconnected after the end")
			}
			time.Sleep(100 * time.Millisecond)
		}
		b.noErrors(t, "reconnections", nil)
	})

	t.Run("TournamentLive", func(t *testing.T) {
		b.open(t, fmt.Sprintf("/tournaments/%d", final.ID))
		b.waitJS(t, "standings", `document.querySelectorAll('#standings tbody tr').length === 2`, 30*time.Second)
		b.screenshot(t, "tournament-live")
		b.noErrors(t, "tournament page (live)", nil)

		// The projector view (issue 16, item 15): linked from the page; on a
		// 1920x1080 screen the live boards are large and the standings are
		// in sight without scrolling.
		if href := evalJS[string](t, b, `document.querySelector('.tv-link').getAttribute('href')`); !strings.HasSuffix(href, "?tv=1") {
			t.Errorf("projector link %q", href)
		}
		b.run(t, "big screen", 30*time.Second, chromedp.EmulateViewport(1920, 1080))
		b.open(t, fmt.Sprintf("/tournaments/%d?tv=1", final.ID))
		b.waitJS(t, "standings and a live board", `document.querySelectorAll('#standings tbody tr').length === 2 && document.querySelectorAll('#running .game-card svg').length > 0`, 30*time.Second)
		box := evalJS[map[string]float64](t, b, `(() => { const s = document.querySelector('#standings').getBoundingClientRect(); const g = document.querySelector('#running .game-card svg').getBoundingClientRect(); return {standingsBottom: s.bottom, board: g.width}; })()`)
		if box["standingsBottom"] > 1080 || box["board"] < 400 {
			t.Errorf("projector view at 1920x1080: standings end at %.0f px, a board is %.0f px wide; want the standings in sight and boards of 400 px or more", box["standingsBottom"], box["board"])
		}
		b.screenshot(t, "tournament-tv")
		b.run(t, "desktop", 30*time.Second, chromedp.EmulateViewport(1280, 900))
	})

	t.Run("Standings", func(t *testing.T) {
		waitAPI(t, "the round robin to finish", 60*time.Second, func() bool {
			var tj tournamentAnswer
			s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d", rr.ID), nil, &tj)
			return tj.Status == "finished"
		})
		var st struct{ Standings []standingAnswer }
		s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d/standings", rr.ID), nil, &st)
		b.open(t, fmt.Sprintf("/tournaments/%d", rr.ID))
		b.waitJS(t, "standings and chart", `document.querySelectorAll('#standings tbody tr').length === 3 && document.querySelectorAll('#chart polyline').length === 3 && document.querySelectorAll('#games tbody tr').length === 6`, 30*time.Second)
		rows := evalJS[[][]string](t, b, `[...document.querySelectorAll('#standings tbody tr')].map((tr) => [tr.dataset.engineId, ...[...tr.cells].map((td) => td.textContent.trim())])`)
		if len(rows) != len(st.Standings) {
			t.Fatalf("%d standings rows, API has %d", len(rows), len(st.Standings))
		}
		for i, w := range st.Standings {
			// Points, score and Elo first, then games, wins, draws, losses.
			want := []string{strconv.FormatInt(w.EngineID, 10), w.Name, pointsText(w.Points), fmt.Sprintf("%.1f%%", w.ScorePct),
				strconv.FormatInt(w.Games, 10), strconv.FormatInt(w.Wins, 10), strconv.FormatInt(w.Draws, 10), strconv.FormatInt(w.Losses, 10)}
			got := append([]string{rows[i][0]}, append(rows[i][2:5], rows[i][6:10]...)...)
			if !slices.Equal(got, want) {
				t.Errorf("standings row %d = %q, want %q (API %+v)", i, got, want, w)
			}
		}
		if got := evalJS[int](t, b, `document.querySelectorAll('#crosstable tbody td.cell').length`); got != 6 {
			t.Errorf("%d crosstable cells with games, want 6", got)
		}
		if got := evalJS[string](t, b, `document.querySelector('#progress-text').textContent`); got != "6 / 6 games" {
			t.Errorf("progress %q, want 6 / 6 games", got)
		}
		links := evalJS[[]string](t, b, `[...document.querySelectorAll('#downloads a')].map((a) => a.getAttribute('href'))`)
		wantLinks := []string{fmt.Sprintf("/api/tournaments/%d/standings.csv", rr.ID), fmt.Sprintf("/api/tournaments/%d/games.csv", rr.ID), fmt.Sprintf("/api/tournaments/%d/games.ggf", rr.ID)}
		if !slices.Equal(links, wantLinks) {
			t.Errorf("download links %v, want %v", links, wantLinks)
		}
		b.screenshot(t, "tournament")

		// Filters ask the games API; the table shows what it answers.
		for _, f := range []struct{ sel, value, query string }{
			{"#filter-engine", strconv.FormatInt(ids["othello-random"], 10), "engine=" + strconv.FormatInt(ids["othello-random"], 10)},
			{"#filter-result", "black", "result=black"},
			{"#filter-reason", "normal", "reason=normal"},
		} {
			var gl struct{ Games []gameAnswer }
			s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d/games?%s", rr.ID, f.query), nil, &gl)
			setSelect(t, b, f.sel, f.value)
			ids := make([]string, len(gl.Games))
			for i, g := range gl.Games {
				ids[i] = strconv.FormatInt(g.ID, 10)
			}
			want, _ := json.Marshal(ids) // [] when no game matches
			b.waitJS(t, "games filtered by "+f.query, fmt.Sprintf(`JSON.stringify([...document.querySelectorAll('#games tbody tr')].map((tr) => tr.dataset.gameId)) === %q`, want), 15*time.Second)
			if len(ids) == 0 {
				b.waitJS(t, "the empty note", `!document.querySelector('#games-empty').hidden`, 15*time.Second)
			}
			setSelect(t, b, f.sel, "")
		}
		b.noErrors(t, "tournament page", nil)
	})

	t.Run("KnockoutAndSPRT", func(t *testing.T) {
		for _, id := range []int64{ko.ID, sprt.ID} {
			waitAPI(t, "the knockout and the SPRT match to finish", 120*time.Second, func() bool {
				var tj tournamentAnswer
				s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d", id), nil, &tj)
				return tj.Status == "finished"
			})
		}
		b.open(t, fmt.Sprintf("/tournaments/%d", ko.ID))
		b.waitJS(t, "the bracket", `document.querySelectorAll('#bracket .bracket-round').length === 2 && document.querySelectorAll('#bracket .bracket-match').length === 3`, 30*time.Second)
		if got := evalJS[int](t, b, `document.querySelectorAll('#bracket .bracket-side.winner').length`); got != 3 {
			t.Errorf("%d winners drawn in the bracket, want 3 (every match decided)", got)
		}
		final := evalJS[string](t, b, `document.querySelector('#bracket .bracket-round:last-child .winner .name').textContent`)
		var names []string
		for _, id := range koIDs {
			var e engineAnswer
			s.mustCall(t, "GET", fmt.Sprintf("/api/engines/%d", id), nil, &e)
			names = append(names, e.Name)
		}
		if !slices.Contains(names, final) {
			t.Errorf("the final's winner reads %q, not an entrant", final)
		}
		b.screenshot(t, "bracket")
		b.noErrors(t, "knockout page", nil)

		b.open(t, fmt.Sprintf("/tournaments/%d", sprt.ID))
		b.waitJS(t, "the SPRT chart", `!document.querySelector('#sprt').hidden && document.querySelectorAll('#sprt-chart polyline').length === 1 && document.querySelectorAll('#sprt-chart .c-mark').length === 2`, 30*time.Second)
		if txt := evalJS[string](t, b, `document.querySelector('#sprt-text').textContent`); !strings.Contains(txt, "H1 accepted") {
			t.Errorf("SPRT reads %q, want H1 accepted", txt)
		}
		if txt := evalJS[string](t, b, `document.querySelector('#pairs tbody tr .penta').textContent`); len(strings.Fields(txt)) != 5 {
			t.Errorf("pentanomial cell %q", txt)
		}
		b.screenshot(t, "sprt")
		b.noErrors(t, "SPRT page", nil)

		// A game from an opening marks the opening's plies in its move list.
		var gl struct{ Games []gameAnswer }
		s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d/games?status=finished&limit=1", sprt.ID), nil, &gl)
		var g struct {
			Opening struct{ Plies int }
		}
		s.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", gl.Games[0].ID), nil, &g)
		b.open(t, fmt.Sprintf("/games/%d", gl.Games[0].ID))
		b.waitJS(t, "the opening's plies marked", fmt.Sprintf(`document.querySelectorAll('#moves li.opening').length === %d && %d > 0`, g.Opening.Plies, g.Opening.Plies), 30*time.Second)
		b.noErrors(t, "game page", nil)
	})

	t.Run("Replay", func(t *testing.T) {
		if liveID == 0 {
			t.Skip("no game from LiveGame")
		}
		var g gameAnswer
		s.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", liveID), nil, &g)
		frames := othelloFrames(t, g.Moves)
		n := len(g.Moves)
		b.open(t, fmt.Sprintf("/games/%d", liveID))
		b.waitJS(t, "the replay at its end", fmt.Sprintf(`document.querySelector('#result').textContent !== '' && +document.querySelector('#ply').textContent === %d`, n), 30*time.Second)
		// The result in the game's words (issue 16, item 18): "33–31 discs",
		// not "game over"; a highlighted black disc in the move list stays
		// black.
		if g.Reason != nil && *g.Reason == "normal" {
			sub := evalJS[string](t, b, `document.querySelector('#result .result-sub').textContent`)
			if !regexp.MustCompile(`\d+–\d+ discs`).MatchString(sub) || strings.Contains(sub, "game over") {
				t.Errorf("othello result %q, want the disc count and no 'game over'", sub)
			}
		}
		b.run(t, "a black move", 15*time.Second, chromedp.Click(chromedp.CSS(`#moves button[data-ply="1"]`)))
		if got := evalJS[string](t, b, `getComputedStyle(document.querySelector('#moves [aria-current] .disc-icon.black')).backgroundColor + ' ' + getComputedStyle(document.querySelector('#moves [aria-current] .disc-icon.black')).borderTopColor`); got != "rgb(17, 17, 17) rgb(17, 17, 17)" {
			t.Errorf("a highlighted black disc is drawn %s, want black", got)
		}
		b.run(t, "the last move", 15*time.Second, chromedp.Click(chromedp.CSS("#last")))
		check := func(how string, want int) {
			t.Helper()
			b.waitJS(t, fmt.Sprintf("ply %d after %s", want, how), fmt.Sprintf(`+document.querySelector('#ply').textContent === %d`, want), 15*time.Second)
			if got := b.boardRows(t, 8); !slices.Equal(got, frames[want]) {
				t.Errorf("after %s, ply %d: board\n%s\nwant\n%s", how, want, strings.Join(got, "\n"), strings.Join(frames[want], "\n"))
			}
			last := evalJS[[]int](t, b, `[...document.querySelectorAll('#board .last-move')].map((m) => [+m.dataset.x, +m.dataset.y]).flat()`)
			switch m := (moveAnswer{}); {
			case want == 0:
				if len(last) != 0 {
					t.Errorf("after %s: a last-move mark at the start", how)
				}
			default:
				m = g.Moves[want-1]
				if m.X == nil {
					if len(last) != 0 {
						t.Errorf("after %s: a last-move mark on a pass", how)
					}
				} else if !slices.Equal(last, []int{*m.X, *m.Y}) {
					t.Errorf("after %s: last-move mark at %v, want %d,%d", how, last, *m.X, *m.Y)
				}
				// The discs the move turned over are highlighted.
				flips := 0
				for y := range 8 {
					for x := range 8 {
						if frames[want-1][y][x] != '.' && frames[want-1][y][x] != frames[want][y][x] {
							flips++
						}
					}
				}
				if got := evalJS[int](t, b, `document.querySelectorAll('#board .flipped').length`); got != flips {
					t.Errorf("after %s: %d flipped marks, want %d", how, got, flips)
				}
			}
		}
		check("loading", n)
		b.run(t, "first", 15*time.Second, chromedp.Click(chromedp.CSS("#first")))
		check("first", 0)
		for i := 1; i <= 3; i++ {
			b.run(t, "next", 15*time.Second, chromedp.Click(chromedp.CSS("#next")))
			check("next", i)
		}
		b.run(t, "prev", 15*time.Second, chromedp.Click(chromedp.CSS("#prev")))
		check("prev", 2)
		b.run(t, "→ →", 15*time.Second, chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight))
		check("→ →", 4)
		b.run(t, "←", 15*time.Second, chromedp.KeyEvent(kb.ArrowLeft))
		check("←", 3)
		b.run(t, "End", 15*time.Second, chromedp.KeyEvent(kb.End))
		check("End", n)
		b.run(t, "Home", 15*time.Second, chromedp.KeyEvent(kb.Home))
		check("Home", 0)
		b.run(t, "last", 15*time.Second, chromedp.Click(chromedp.CSS("#last")))
		check("last", n)
		evalJS[chromedp.Void](t, b, fmt.Sprintf(`(() => { const r = document.querySelector('#seek'); r.value = %d; r.dispatchEvent(new Event('input', {bubbles: true})); })()`, n/2))
		check("the slider", n/2)
		b.run(t, "a move in the list", 15*time.Second, chromedp.Click(chromedp.CSS(`#moves button[data-ply="7"]`)))
		check("a move in the list", 7)
		if got := evalJS[int](t, b, `document.querySelectorAll('#moves li').length`); got != n {
			t.Errorf("%d moves listed, want %d", got, n)
		}
		b.run(t, "a move in the list", 15*time.Second, chromedp.Click(chromedp.CSS(fmt.Sprintf(`#moves button[data-ply="%d"]`, n-8))))
		check("a move in the list", n-8)
		// The record: a link to the game's GGF, which downloads the game.
		href := evalJS[string](t, b, `(document.querySelector('#downloads a.record-link') || {}).getAttribute ? document.querySelector('#downloads a.record-link').getAttribute('href') : ''`)
		if want := fmt.Sprintf("/api/games/%d.ggf", liveID); href != want {
			t.Errorf("record link %q, want %q", href, want)
		} else {
			b.waitJS(t, "the GGF download", `(async () => { const r = await fetch('`+href+`'); window.__ggf = r.ok ? await r.text() : 'HTTP ' + r.status; })() && true`, 5*time.Second)
			b.waitJS(t, "the GGF text", `typeof window.__ggf === 'string'`, 15*time.Second)
			if got := evalJS[string](t, b, `window.__ggf`); !strings.HasPrefix(got, "(;GM[Othello]") || strings.Count(got, "//") != n {
				t.Errorf("GGF from the page: %q", got)
			}
		}
		b.screenshot(t, "game-replay")
		b.noErrors(t, "replay", nil)

		b.run(t, "big screen", 30*time.Second, chromedp.EmulateViewport(1920, 1080))
		b.open(t, fmt.Sprintf("/games/%d?tv=1", liveID))
		b.waitJS(t, "the replay in tv mode", `document.querySelector('#result').textContent !== ''`, 30*time.Second)
		b.screenshot(t, "game-tv")

		b.run(t, "phone", 30*time.Second, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
		b.open(t, fmt.Sprintf("/games/%d", liveID))
		b.waitJS(t, "the replay on a phone", `document.querySelector('#result').textContent !== ''`, 30*time.Second)
		if w := evalJS[int](t, b, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("the game page is %d px wide on a 390 px phone", w)
		}
		b.screenshot(t, "game-phone")
		b.open(t, fmt.Sprintf("/tournaments/%d", rr.ID))
		b.waitJS(t, "standings on a phone", `document.querySelectorAll('#standings tbody tr').length === 3`, 30*time.Second)
		if w := evalJS[int](t, b, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("the tournament page is %d px wide on a 390 px phone", w)
		}
		// Points, score and Elo are in sight without scrolling (issue 16,
		// item 17: they were behind an unhinted sideways scroll).
		if right := evalJS[float64](t, b, `Math.max(...[...document.querySelectorAll('#standings tbody tr:first-child td')].slice(0, 5).map((td) => td.getBoundingClientRect().right))`); right > 390 {
			t.Errorf("the standings' points, score and Elo end at %.0f px on a 390 px phone", right)
		}
		b.screenshot(t, "tournament-phone")
		b.noErrors(t, "phone pages", nil)
		b.run(t, "desktop", 30*time.Second, chromedp.EmulateViewport(1280, 900))
	})

	t.Run("Gomoku", func(t *testing.T) {
		var gl struct{ Games []gameAnswer }
		waitAPI(t, "a finished gomoku game", 60*time.Second, func() bool {
			s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d/games?status=finished", gomoku.ID), nil, &gl)
			return len(gl.Games) > 0
		})
		var g gameAnswer
		s.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", gl.Games[0].ID), nil, &g)
		b.open(t, fmt.Sprintf("/games/%d", g.ID))
		b.waitJS(t, "the gomoku result", `document.querySelector('#result').textContent !== ''`, 30*time.Second)
		// Gomoku never removes a stone: every move is on the board in its colour.
		want := make([]string, g.Size)
		for y := range want {
			want[y] = strings.Repeat(".", g.Size)
		}
		for _, m := range g.Moves {
			if m.X == nil {
				continue
			}
			c := byte('x')
			if m.Color == "white" {
				c = 'o'
			}
			row := []byte(want[*m.Y])
			row[*m.X] = c
			want[*m.Y] = string(row)
		}
		if got := b.boardRows(t, g.Size); !slices.Equal(got, want) {
			t.Errorf("gomoku board\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if g.Reason != nil && *g.Reason == "normal" && *g.Result != "draw" {
			if got := evalJS[int](t, b, `document.querySelectorAll('#board .five').length`); got < 5 {
				t.Errorf("%d stones marked as the winning five", got)
			}
		}
		// In the game's words and coordinates (issue 16, item 18).
		if g.Reason != nil && *g.Reason == "normal" {
			words := "five in a row"
			if *g.Result == "draw" {
				words = "board full"
			}
			if sub := evalJS[string](t, b, `document.querySelector('#result .result-sub').textContent`); !strings.Contains(sub, words) || strings.Contains(sub, "game over") {
				t.Errorf("gomoku result %q, want %q", sub, words)
			}
		}
		if got := evalJS[string](t, b, `document.querySelector('#count-black').textContent`); !strings.HasSuffix(got, " stones") {
			t.Errorf("black's count %q, want it labelled stones", got)
		}
		if m := g.Moves[0]; m.X != nil {
			want := fmt.Sprintf("%c%d · %d,%d", 'a'+*m.X, g.Size-*m.Y, *m.X, *m.Y)
			if got := evalJS[string](t, b, `document.querySelector('#moves [data-ply="1"] .mv-t').textContent`); got != want {
				t.Errorf("first move shown as %q, want %q", got, want)
			}
		}
		b.screenshot(t, "game-gomoku")
		b.noErrors(t, "gomoku game page", nil)
	})

	t.Run("EngineNotes", func(t *testing.T) {
		// An NBoard engine's evaluations show beside its moves.
		python := testkit.Python(t) // skipped without it, except under CI=true; not a shim
		script, _ := filepath.Abs("../engines/testdata/clients/nboard_engine.py")
		var e, r engineAnswer
		s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "nboard-engine", "game": "othello", "protocol": "nboard", "command": []string{python, script}}, &e)
		s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "nb-random", "game": "othello", "builtin": "othello-random"}, &r)
		var tr tournamentAnswer
		s.mustCall(t, "POST", "/api/tournaments", map[string]any{"name": "NBoard notes", "game": "othello", "engines": []int64{e.ID, r.ID},
			"games_per_pair": 1, "move_time_ms": 5000, "start": true}, &tr)
		var gl struct{ Games []gameAnswer }
		waitAPI(t, "the NBoard game", 60*time.Second, func() bool {
			s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d/games?status=finished", tr.ID), nil, &gl)
			return len(gl.Games) == 1
		})
		if g := gl.Games[0]; g.Plies <= 50 {
			t.Fatalf("the NBoard game ended after %d plies by %s (%s), want a whole game", g.Plies, strOr(g.Reason), strOr(g.Result))
		}
		b.open(t, fmt.Sprintf("/games/%d", gl.Games[0].ID))
		b.waitJS(t, "the moves", `document.querySelectorAll('#moves li').length > 50`, 30*time.Second)
		notes := evalJS[[]string](t, b, `[...document.querySelectorAll('#moves .mv-note')].map((n) => n.textContent)`)
		if len(notes) < 20 || notes[0] != "eval 0.00" {
			t.Errorf("notes beside the moves %v, want the engine's evaluation on each of its moves", notes)
		}
		// The name the engine gave itself (set myname) beside its registered name.
		b.waitJS(t, "the engine's own name", `document.querySelector('#nick-black').textContent + document.querySelector('#nick-white').textContent === 'py-nboard'`, 15*time.Second)
		b.noErrors(t, "game page with notes", nil)
	})

	t.Run("Engines", func(t *testing.T) {
		b.open(t, "/engines")
		b.waitJS(t, "the engine list", `document.querySelectorAll('#engines tbody tr').length === 12`, 30*time.Second)
		if evalJS[bool](t, b, `document.body.classList.contains('admin') || document.querySelector('#engine-form').offsetParent !== null`) {
			t.Fatal("the form shows before signing in")
		}
		// Sign in: a wrong token first.
		b.run(t, "sign in", 30*time.Second,
			chromedp.Click(chromedp.CSS("#sign-in")),
			chromedp.WaitVisible(chromedp.CSS("#token-input")),
			chromedp.SendKeys(chromedp.CSS("#token-input"), "not-the-token"),
			chromedp.Click(chromedp.CSS(`#token-form button[type=submit]`)))
		b.waitJS(t, "the wrong-token message", `document.querySelector('.field-error[data-field=token]').textContent !== ''`, 15*time.Second)
		evalJS[chromedp.Void](t, b, `document.querySelector('#token-input').value = ''`)
		b.run(t, "sign in", 30*time.Second,
			chromedp.SendKeys(chromedp.CSS("#token-input"), browserToken),
			chromedp.Click(chromedp.CSS(`#token-form button[type=submit]`)))
		b.waitJS(t, "admin mode", `document.body.classList.contains('admin') && !document.querySelector('#token-dialog').open && document.querySelector('#engine-form').offsetParent !== null`, 15*time.Second)
		if strings.Contains(evalJS[string](t, b, `location.href`), browserToken) {
			t.Error("the token is in the URL")
		}
		// The server keeps the token in an HTTP-only cookie: no script reads it.
		if strings.Contains(evalJS[string](t, b, `document.cookie`), browserToken) {
			t.Error("the token is in a cookie scripts can read")
		}
		// The wrong token was answered 403, which the browser logs.
		b.noErrors(t, "engines page (sign in)", func(e string) bool { return strings.Contains(e, "/api/session") && strings.Contains(e, "403") })

		cmd := "python3 client.py {host} {port}"
		submitError := func(name, command, field string, files ...string) {
			t.Helper()
			var ae errorAnswer
			meta := map[string]any{"name": name, "game": "othello", "protocol": "othello-board", "command": command}
			var code int
			if len(files) > 0 {
				contents := map[string]string{}
				for _, f := range files {
					body, _ := os.ReadFile(f)
					contents[filepath.Base(f)] = string(body)
				}
				code = s.upload(t, meta, contents, &ae)
			} else {
				code = s.call(t, "POST", "/api/engines", meta, &ae)
			}
			if code != 400 || ae.Error.Field != field {
				t.Fatalf("the API answered %d %+v, want a 400 naming %s", code, ae.Error, field)
			}
			fillEngineForm(t, b, name, command, files)
			b.waitJS(t, "the error next to "+field, fmt.Sprintf(`document.querySelector('#engine-form .field-error[data-field=%q]').textContent === %q`, field, ae.Error.Message), 30*time.Second)
			others := evalJS[int](t, b, fmt.Sprintf(`[...document.querySelectorAll('#engine-form .field-error')].filter((e) => e.dataset.field !== %q && e.textContent !== '').length`, field))
			if others != 0 {
				t.Errorf("%d other fields show errors", others)
			}
			if !evalJS[bool](t, b, fmt.Sprintf(`document.querySelector('#engine-form .field-error[data-field=%q]').closest('.field').querySelector('[aria-invalid=true]') !== null`, field)) {
				t.Errorf("the %s input is not marked invalid", field)
			}
		}
		submitError("", cmd, "name")
		submitError("student-a", "python3 client.py {nope}", "command")
		broken := filepath.Join(t.TempDir(), "broken.zip")
		if err := os.WriteFile(broken, []byte("this is not a zip archive"), 0o644); err != nil {
			t.Fatal(err)
		}
		submitError("student-z", cmd, "file", broken)
		b.screenshot(t, "engines-error")
		// The API's 400s are logged by the browser as failed loads.
		allow400 := func(e string) bool { return strings.Contains(e, "/api/engines") && strings.Contains(e, "400") }
		b.noErrors(t, "engines page (errors)", allow400)

		// JSON, with a time to connect of its own (issue 16, item 5).
		b.setValue(t, "#e-connect", "45")
		fillEngineForm(t, b, "student-a", cmd, nil)
		b.waitJS(t, "the confirmation", `document.querySelector('#engine-ok').textContent.includes('student-a')`, 30*time.Second)
		var registered struct {
			Engines []struct {
				Name      string
				ConnectMS int64 `json:"connect_timeout_ms"`
			}
		}
		s.mustCall(t, "GET", "/api/engines", nil, &registered)
		found := false
		for _, e := range registered.Engines {
			if e.Name == "student-a" {
				found = true
				if e.ConnectMS != 45000 {
					t.Errorf("student-a's time to connect %d ms, want the form's 45 s", e.ConnectMS)
				}
			}
		}
		if !found {
			t.Errorf("student-a is not among the engines: %+v", registered.Engines)
		}
		// Upload.
		src := filepath.Join(t.TempDir(), "client.py")
		if err := os.WriteFile(src, []byte("print('hello')\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		fillEngineForm(t, b, "student-b", cmd, []string{src})
		b.waitJS(t, "the upload confirmation", `document.querySelector('#engine-ok').textContent.includes('student-b')`, 30*time.Second)
		// A built-in.
		b.setValue(t, "#e-name", "")
		b.run(t, "built-in", 30*time.Second,
			chromedp.SendKeys(chromedp.CSS("#e-name"), "my-greedy"),
			chromedp.Click(chromedp.CSS("#e-source-builtin")))
		setSelect(t, b, "#e-builtin", "othello-greedy")
		b.run(t, "submit", 30*time.Second, chromedp.Click(chromedp.CSS("#e-submit")))
		b.waitJS(t, "the built-in confirmation", `document.querySelector('#engine-ok').textContent.includes('my-greedy')`, 30*time.Second)
		b.waitJS(t, "fifteen engines listed", `document.querySelectorAll('#engines tbody tr').length === 15`, 30*time.Second)

		var list struct{ Engines []engineAnswer }
		s.mustCall(t, "GET", "/api/engines", nil, &list)
		byName := map[string]engineAnswer{}
		for _, e := range list.Engines {
			byName[e.Name] = e
		}
		if e, ok := byName["student-a"]; !ok || e.Uploaded || e.Protocol != "othello-board" {
			t.Errorf("student-a = %+v, want a JSON-registered othello-board engine", e)
		}
		var up engineAnswer
		s.mustCall(t, "GET", fmt.Sprintf("/api/engines/%d", byName["student-b"].ID), nil, &up)
		if !up.Uploaded || !slices.Contains(up.Files, "client.py") {
			t.Errorf("student-b = %+v, want an upload with client.py", up)
		}
		if _, ok := byName["student-z"]; ok {
			t.Error("the refused upload was registered")
		}
		if e, ok := byName["my-greedy"]; !ok || e.Game != "othello" {
			t.Errorf("my-greedy = %+v", e)
		}
		b.screenshot(t, "engines")

		// Delete takes two clicks, the list drawn anew between them (as it is
		// every second while a check runs).
		del := fmt.Sprintf(`#engines button.delete[data-id="%d"]`, byName["student-a"].ID)
		b.click(t, "delete", del)
		b.waitJS(t, "the delete button armed", fmt.Sprintf(`document.querySelector(%q).dataset.armed === '1'`, del), 15*time.Second)
		evalJS[chromedp.Void](t, b, fmt.Sprintf(`document.querySelector(%q).dataset.before = '1'; document.dispatchEvent(new Event('taikai:admin'))`, del))
		b.waitJS(t, "the list drawn anew, the button still armed", fmt.Sprintf(`(() => { const d = document.querySelector(%q); return d && !d.dataset.before && d.dataset.armed === '1'; })()`, del), 15*time.Second)
		b.click(t, "delete again", del)
		b.waitJS(t, "the row to go", fmt.Sprintf(`!document.querySelector('#engines tr[data-engine-id="%d"]')`, byName["student-a"].ID), 30*time.Second)
		s.mustCall(t, "GET", "/api/engines", nil, &list)
		for _, e := range list.Engines {
			if e.Name == "student-a" {
				t.Errorf("the deleted engine is still listed: %+v", e)
			}
		}
		b.noErrors(t, "engines page", nil)
	})

	t.Run("AdminTournament", func(t *testing.T) {
		// Signed in by Engines: create a tournament with the overview's form.
		b.open(t, "/")
		b.waitJS(t, "admin mode", `document.body.classList.contains('admin')`, 15*time.Second)
		// The keyboard, not the mouse, in this form: the live boards above
		// it come and go (see press).
		b.press(t, "open the form", "#new-tournament summary", kb.Enter)
		b.waitJS(t, "the engine choice", `document.querySelectorAll('#t-engines input').length >= 3`, 30*time.Second)
		// No name, no engines, -1 games a pair and an hour's pace: every
		// field's error at once (issue 16, item 16).
		b.setValue(t, "#t-games", "-1")
		b.setValue(t, "#t-pace", "3600")
		b.press(t, "submit it empty", `#tournament-form button[type=submit]`, kb.Enter)
		b.waitJS(t, "every field's error", `['name', 'engines', 'games_per_pair', 'pace_ms'].every((f) => document.querySelector('#tournament-form .field-error[data-field=' + f + ']').textContent !== '')`, 30*time.Second)
		b.setValue(t, "#t-pace", "0.2")
		// No engines chosen: the API's error goes next to the engines.
		b.setValue(t, "#t-move-time", "0.05")
		b.setValue(t, "#t-games", "50")
		b.run(t, "fill", 30*time.Second,
			// The form sits in a <details> just opened: type only once it shows.
			chromedp.WaitVisible(chromedp.CSS("#t-name")),
			chromedp.SendKeys(chromedp.CSS("#t-name"), "Form cup"))
		b.press(t, "start off: create it pending", "#t-start", " ")
		b.press(t, "submit without engines", `#tournament-form button[type=submit]`, kb.Enter)
		b.waitJS(t, "the engines error", `document.querySelector('#tournament-form .field-error[data-field=engines]').textContent !== ''`, 30*time.Second)
		b.screenshot(t, "overview-admin")
		b.press(t, "choose othello-random", fmt.Sprintf(`#t-engines input[value="%d"]`, ids["othello-random"]), " ")
		b.press(t, "choose othello-greedy", fmt.Sprintf(`#t-engines input[value="%d"]`, ids["othello-greedy"]), " ")
		b.press(t, "submit", `#tournament-form button[type=submit]`, kb.Enter)
		b.waitJS(t, "the new tournament's page", `location.pathname.startsWith('/tournaments/') && document.querySelector('#status')?.textContent === 'pending'`, 30*time.Second)
		tid := evalJS[int64](t, b, `+location.pathname.split('/').pop()`)
		var tj tournamentAnswer
		s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d", tid), nil, &tj)
		if tj.Name != "Form cup" || tj.Status != "pending" || tj.TotalGames != 50 {
			t.Errorf("created %+v, want Form cup, pending, 50 games", tj)
		}
		var settings struct {
			Settings struct {
				PaceMS int64 `json:"pace_ms"`
			}
		}
		s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d", tid), nil, &settings)
		if settings.Settings.PaceMS != 200 {
			t.Errorf("pace_ms %d, want the form's 0.2 s", settings.Settings.PaceMS)
		}
		b.run(t, "start", 30*time.Second, chromedp.Click(chromedp.CSS("#start")))
		b.waitJS(t, "running", `document.querySelector('#status').textContent === 'running' && document.querySelector('#start').hidden`, 30*time.Second)
		b.run(t, "cancel", 30*time.Second, chromedp.Click(chromedp.CSS("#cancel")), chromedp.Click(chromedp.CSS("#cancel")))
		b.waitJS(t, "cancelled", `document.querySelector('#status').textContent === 'cancelled' && document.querySelector('#cancel').hidden`, 45*time.Second)
		s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d", tid), nil, &tj)
		if tj.Status != "cancelled" {
			t.Errorf("status %q after cancel, want cancelled", tj.Status)
		}
		b.noErrors(t, "admin tournament", func(e string) bool { return strings.Contains(e, "/api/tournaments") && strings.Contains(e, "400") })
	})

	t.Run("NotFound", func(t *testing.T) {
		for _, path := range []string{"/games/999999", "/tournaments/999999", "/no/such/page"} {
			b.open(t, path)
			if got := evalJS[string](t, b, `document.title`); got != "Not found · taikai" {
				t.Errorf("%s: title %q", path, got)
			}
			if path == "/games/999999" {
				b.screenshot(t, "notfound")
			}
			// The page itself is a 404, which the browser logs.
			b.noErrors(t, path, func(e string) bool { return strings.Contains(e, "404") && strings.Contains(e, path) })
		}
	})

	t.Run("BrainNotes", func(t *testing.T) {
		// A brain's long MESSAGEs (Rapfi's "Speed | Depth | Eval | Time"
		// and "Bestline" lines): the last shows beside the move, all of
		// them in its title, and both columns of the move list stay whole.
		python := testkit.Python(t) // skipped without it, except under CI=true; not a shim
		script, _ := filepath.Abs("../engines/testdata/clients/pbrain_brain.py")
		pad := " | Speed 1234567 | Depth 17-23 | Eval 125 | Time 4321ms | Bestline h8 i9 j10 k11 g7 f6 e5"
		var e, r engineAnswer
		s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "py-brain", "game": "gomoku", "protocol": "pbrain",
			"command": []string{"env", "MESSAGES=2", "MESSAGE_PAD=" + pad, python, script}}, &e)
		s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "gm-random", "game": "gomoku", "builtin": "gomoku-random"}, &r)
		var tr tournamentAnswer
		s.mustCall(t, "POST", "/api/tournaments", map[string]any{"name": "Brain notes", "game": "gomoku", "rule": "freestyle", "engines": []int64{e.ID, r.ID},
			"games_per_pair": 1, "move_time_ms": 5000, "start": true}, &tr)
		var gl struct{ Games []gameAnswer }
		waitAPI(t, "the brain's game", 60*time.Second, func() bool {
			s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d/games?status=finished", tr.ID), nil, &gl)
			return len(gl.Games) == 1
		})
		b.open(t, fmt.Sprintf("/games/%d", gl.Games[0].ID))
		b.waitJS(t, "the moves", `document.querySelectorAll('#moves li').length > 6`, 30*time.Second)
		notes := evalJS[[]string](t, b, `[...document.querySelectorAll('#moves .mv-note')].map((n) => n.textContent + ' / ' + n.title)`)
		if len(notes) < 3 || !strings.HasPrefix(notes[0], "move 1 line 2 |") || !strings.Contains(notes[0], "move 1 line 1 |") {
			t.Errorf("notes beside the moves %q, want the last MESSAGE shown and both in the title", notes)
		}
		// Every move's button lies within the list, white's column too.
		cut := evalJS[[]string](t, b, `(() => { const l = document.querySelector('#moves').getBoundingClientRect();
			return [...document.querySelectorAll('#moves li')].filter((li) => { const r = li.getBoundingClientRect(); return r.right > l.right + 1 || r.width < 20; })
				.map((li) => li.textContent.slice(0, 30)); })()`)
		if len(cut) > 0 {
			b.screenshot(t, "brain-notes")
			t.Errorf("%d moves reach past the list's edge (white's column cut off): %q", len(cut), cut)
		}
		var g struct {
			Moves []struct {
				Note  string   `json:"note"`
				Notes []string `json:"notes"`
			} `json:"moves"`
		}
		s.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", gl.Games[0].ID), nil, &g)
		noted := 0
		for _, m := range g.Moves {
			if m.Note == "" {
				continue
			}
			if noted++; len(m.Notes) != 2 || m.Note != m.Notes[1] || !strings.HasPrefix(m.Notes[0], fmt.Sprintf("move %d line 1", noted)) {
				t.Fatalf("the API's move with notes %d: %+v, want note the last of its two notes", noted, m)
			}
		}
		if noted < 3 {
			t.Errorf("the API gives %d moves with notes, want every move of the brain's", noted)
		}
		b.noErrors(t, "game page with a brain's notes", nil)
	})

	beside.Wait()
	// Stop the final and the checkers (they may still have games to play) and check that nothing
	// is left playing; the cleanup then stops the server and reaps every engine.
	for _, tid := range []int64{final.ID, draughts.ID} {
		if code := s.call(t, "POST", fmt.Sprintf("/api/tournaments/%d/cancel", tid), nil, nil); code != 200 && code != 409 {
			t.Errorf("cancel tournament %d: status %d", tid, code) // 409: it is over already
		}
	}
	waitAPI(t, "no game left running", 60*time.Second, func() bool {
		var r struct{ Games []gameAnswer }
		s.mustCall(t, "GET", "/api/games", nil, &r)
		return len(r.Games) == 0
	})
	t.Logf("browser test took %v", time.Since(start).Round(time.Millisecond))
}

// pointsText is how the dashboard shows points: 3.5 as 3½.
func pointsText(p float64) string {
	whole := int(p + 1e-9)
	half := p-float64(whole) > 0.25
	switch {
	case whole == 0 && half:
		return "½"
	case half:
		return strconv.Itoa(whole) + "½"
	}
	return strconv.Itoa(whole)
}

// setSelect chooses a value in a select and tells the page.
func setSelect(tb testing.TB, b *browser, sel, value string) {
	tb.Helper()
	evalJS[chromedp.Void](tb, b, fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.value = %q; s.dispatchEvent(new Event('change', {bubbles: true})); })()`, sel, value))
}

// fillEngineForm fills the engine form for a command engine and submits it.
func fillEngineForm(tb testing.TB, b *browser, name, command string, files []string) {
	tb.Helper()
	b.setValue(tb, "#e-name", "")
	b.setValue(tb, "#e-command", "")
	// The command field shows once its source is chosen: type only then.
	// Clicked with b.click, which sees that the click landed: the list
	// above the form is drawn anew every second while a check runs, and a
	// check's result can make a row taller between finding the button and
	// pressing the mouse (the submit missed once, and the upload's
	// confirmation never came).
	b.click(tb, "the command source", "#e-source-command")
	steps := []chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.CSS("#e-command"))}
	if name != "" {
		steps = append(steps, chromedp.SendKeys(chromedp.CSS("#e-name"), name))
	}
	steps = append(steps, chromedp.SendKeys(chromedp.CSS("#e-command"), command))
	if files != nil {
		steps = append(steps, chromedp.SetUploadFiles(chromedp.CSS("#e-file"), files))
	} else {
		steps = append(steps, chromedp.Evaluate[chromedp.Void](`document.querySelector('#e-file').value = ''`))
	}
	b.run(tb, "fill the engine form", 45*time.Second, steps...)
	b.click(tb, "submit the engine form", "#e-submit")
}

// strOr shows an optional string of the API.
func strOr(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// liveGameOf opens the page of a game of tournament tid while it is played and
// returns its id; should a game end before its page is up, it takes the next.
func liveGameOf(tb testing.TB, s *site, b *browser, tid int64) int64 {
	tb.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		var id int64
		waitAPI(tb, "a running game", time.Until(deadline), func() bool {
			var r struct{ Games []gameAnswer }
			s.mustCall(tb, "GET", "/api/games", nil, &r)
			for _, g := range r.Games {
				if g.TournamentID == tid {
					id = g.ID
					return true
				}
			}
			return false
		})
		b.open(tb, fmt.Sprintf("/games/%d", id))
		b.waitJS(tb, "the live badge or the result", `!document.querySelector('#live-badge').hidden || document.querySelector('#result').textContent !== ''`, 30*time.Second)
		if evalJS[bool](tb, b, `!document.querySelector('#live-badge').hidden`) {
			return id
		}
		if time.Now().After(deadline) {
			tb.Fatal("every game was over before its page was up")
		}
	}
}
