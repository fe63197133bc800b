package web_test

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// ladderAnswer is a league's GET .../standings row.
type ladderAnswer struct {
	EngineID  int64    `json:"engine_id"`
	Name      string   `json:"name"`
	Version   int      `json:"version"`
	Elo       float64  `json:"elo"`
	EloError  float64  `json:"elo_error"`
	Games     int64    `json:"games"`
	Wins      int64    `json:"wins"`
	Draws     int64    `json:"draws"`
	Losses    int64    `json:"losses"`
	Current   bool     `json:"current"`
	Placement bool     `json:"placement"`
	EloChange *float64 `json:"elo_change"`
}

// TestBrowserLeague (issue 40): a league of a student's engine and two
// built-ins, in which the student uploads a second version. Its ladder page
// updates over the websocket when a game ends (a row's games change, the
// page not reloaded); it shows what the API's ladder says, row for row; it
// fits a phone and has a projector view. The engine's page draws a point per
// version in its chart, lists each version's check and its league games
// with the versions that played. The Japanese ladder and engine pages have
// no English left.
func TestBrowserLeague(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	s := startSite(t)
	b := startBrowser(t, s)

	_, token := newMember(t, s, "山田")
	yamada := member{s: s, token: token}
	var bot engineAnswer
	if code := yamada.upload(t, "POST", "/api/engines", map[string]any{"name": "yamada-bot", "game": "othello", "protocol": "othello-move", "command": studentCommand}, studentEngine(t, "othello-random"), &bot); code != 201 {
		t.Fatalf("山田's engine: status %d", code)
	}
	if c := waitCheck(t, yamada, bot.ID, 1); c.Result == nil || !c.Result.OK {
		t.Fatalf("version 1's check: %+v", c)
	}
	var greedy, random engineAnswer
	s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "greedy", "game": "othello", "builtin": "othello-greedy"}, &greedy)
	s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "random", "game": "othello", "builtin": "othello-random"}, &random)
	var lg tournamentAnswer
	s.mustCall(t, "POST", "/api/tournaments", map[string]any{
		"name": "学内リーグ", "game": "othello", "format": "league", "engines": []int64{bot.ID, greedy.ID, random.ID},
		"placement_games": 2, "move_time_ms": 1000, "concurrency": 2, "start": true,
	}, &lg)
	ladderPath := fmt.Sprintf("/tournaments/%d", lg.ID)
	ladder := func() []ladderAnswer {
		t.Helper()
		var st struct{ Standings []ladderAnswer }
		s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d/standings", lg.ID), nil, &st)
		return st.Standings
	}
	row := func(rows []ladderAnswer, id int64) ladderAnswer {
		for _, r := range rows {
			if r.EngineID == id {
				return r
			}
		}
		return ladderAnswer{}
	}
	waitAPI(t, "version 1 to play 3 games", 3*time.Minute, func() bool { return row(ladder(), bot.ID).Games >= 3 })
	// Version 2 joins the league in the engine's next game.
	if code := yamada.upload(t, "PUT", fmt.Sprintf("/api/engines/%d", bot.ID), map[string]any{"protocol": "othello-move", "command": studentCommand}, studentEngine(t, "othello-greedy"), nil); code != 200 {
		t.Fatalf("version 2: status %d", code)
	}
	if c := waitCheck(t, yamada, bot.ID, 2); c.Result == nil || !c.Result.OK {
		t.Fatalf("version 2's check: %+v", c)
	}
	waitAPI(t, "version 2 to play 3 games", 3*time.Minute, func() bool {
		r := row(ladder(), bot.ID)
		return r.Version == 2 && r.Games >= 3
	})

	pause := func() {
		t.Helper()
		s.mustCall(t, "POST", fmt.Sprintf("/api/tournaments/%d/pause", lg.ID), nil, nil)
		waitAPI(t, "the league's running games to end", 2*time.Minute, func() bool {
			var got struct {
				Status  string `json:"status"`
				Running int    `json:"running_games"`
			}
			s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d", lg.ID), nil, &got)
			return got.Status == "paused" && got.Running == 0
		})
	}
	// pageRows reads the ladder as the page shows it.
	pageRows := func() [][]string {
		t.Helper()
		return evalJS[[][]string](t, b, `[...document.querySelectorAll('#standings tbody tr')].map((tr) => [tr.dataset.engineId, ...[...tr.cells].map((td) => td.textContent.trim()), tr.querySelector('.badge.placement') ? 'placement' : ''])`)
	}
	// apiRows is the API's ladder as the page should show it (English).
	apiRows := func(rows []ladderAnswer) [][]string {
		var out [][]string
		for i, r := range rows {
			elo := "–"
			if r.Games > 0 {
				elo = signedRating(r.Elo)
				if r.EloError > 0 {
					elo += fmt.Sprintf(" ±\u00a0%.0f", math.Floor(r.EloError+0.5))
				}
			}
			change := "–"
			if r.EloChange != nil {
				change = signedRating(*r.EloChange)
			}
			name, badge := fmt.Sprintf("%s v%d", r.Name, r.Version), ""
			if r.Placement {
				name, badge = name+"placement", "placement"
			}
			out = append(out, []string{fmt.Sprint(r.EngineID), fmt.Sprint(i + 1), name, elo, change,
				fmt.Sprint(r.Games), fmt.Sprint(r.Wins), fmt.Sprint(r.Draws), fmt.Sprint(r.Losses), badge})
		}
		return out
	}

	// The games newest first (?order=newest), as the league's page lists them.
	var newest struct {
		Games []struct {
			Index int `json:"index"`
		}
	}
	s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d/games?status=finished&order=newest", lg.ID), nil, &newest)
	for i, g := range newest.Games {
		if len(newest.Games) < 6 || i > 0 && g.Index >= newest.Games[i-1].Index {
			t.Fatalf("games with order=newest: %+v, want 6 or more, each older than the one before", newest.Games)
		}
	}
	var bad errorAnswer
	if code := s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d/games?order=oldest", lg.ID), nil, &bad); code != 400 || bad.Error.Field != "order" {
		t.Errorf("order=oldest: %d %+v, want a 400 naming order", code, bad)
	}

	t.Run("LiveLadder", func(t *testing.T) {
		// Paused, no game running: the ladder stands still while the page loads.
		pause()
		b.open(t, ladderPath)
		b.waitJS(t, "the ladder", `document.querySelectorAll('#standings tbody tr').length === 3 && document.querySelector('#live-status').dataset.state === 'open'`, 30*time.Second)
		if got, want := pageRows(), apiRows(ladder()); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("the ladder page\n%q\nthe API's ladder\n%q", got, want)
		}
		if got := evalJS[string](t, b, `document.querySelector('#status').textContent`); got != "paused" {
			t.Errorf("status %q, want paused", got)
		}
		before := evalJS[string](t, b, `[...document.querySelectorAll('#standings tbody tr')].map((tr) => tr.dataset.engineId + ':' + tr.dataset.games).join(' ')`)
		evalJS[chromedp.Void](t, b, `window.__notReloaded = true`)
		// Resumed, a game ends: its players' rows change in place.
		s.mustCall(t, "POST", fmt.Sprintf("/api/tournaments/%d/start", lg.ID), nil, nil)
		b.waitJS(t, "a row's games to change without reload", fmt.Sprintf(`window.__notReloaded && [...document.querySelectorAll('#standings tbody tr')].map((tr) => tr.dataset.engineId + ':' + tr.dataset.games).join(' ') !== %q`, before), 2*time.Minute)
		after := evalJS[string](t, b, `[...document.querySelectorAll('#standings tbody tr')].map((tr) => tr.dataset.engineId + ':' + tr.dataset.games).join(' ')`)
		t.Logf("the ladder's games by engine went from %q to %q without a reload", before, after)
		if !evalJS[bool](t, b, `window.__notReloaded === true`) {
			t.Fatal("the page was reloaded")
		}
		b.screenshot(t, "league-ladder")
		// Paused again, the page ends with the API's ladder (its last game's
		// table comes over the socket too).
		pause()
		want := apiRows(ladder())
		deadline := time.Now().Add(30 * time.Second)
		for got := pageRows(); !slices.EqualFunc(got, want, slices.Equal); got = pageRows() {
			if time.Now().After(deadline) {
				t.Fatalf("after the league paused, the page\n%q\nthe API\n%q", got, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
		b.noErrors(t, "ladder page", nil)
	})

	t.Run("PhoneAndProjector", func(t *testing.T) {
		b.run(t, "phone", 30*time.Second, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
		b.open(t, ladderPath)
		b.waitJS(t, "the ladder on a phone", `document.querySelectorAll('#standings tbody tr').length === 3`, 30*time.Second)
		if w := evalJS[int](t, b, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("the ladder page is %d px wide on a 390 px phone", w)
		}
		// Rank, engine and its version, Elo, change and games in sight
		// without scrolling.
		if right := evalJS[float64](t, b, `Math.max(...[...document.querySelectorAll('#standings tbody tr td')].filter((td) => td.cellIndex < 5).map((td) => td.getBoundingClientRect().right))`); right > 390 {
			t.Errorf("the ladder's rank, engine, Elo, change and games end at %.0f px on a 390 px phone", right)
		}
		b.screenshot(t, "league-ladder-phone")
		// The projector view while the league plays: its live boards beside
		// the ladder.
		s.mustCall(t, "POST", fmt.Sprintf("/api/tournaments/%d/start", lg.ID), nil, nil)
		b.run(t, "big screen", 30*time.Second, chromedp.EmulateViewport(1920, 1080))
		b.open(t, ladderPath+"?tv=1")
		b.waitJS(t, "the ladder and a live board on a projector", `document.body.classList.contains('tv') && document.querySelectorAll('#standings tbody tr').length === 3 && document.querySelector('#running .game-card svg')`, 60*time.Second)
		if bottom := evalJS[float64](t, b, `document.querySelector('#standings').getBoundingClientRect().bottom`); bottom > 1080 {
			t.Errorf("the projector view at 1920x1080: the ladder ends at %.0f px, want it in sight", bottom)
		}
		b.screenshot(t, "league-ladder-tv")
		pause()
		b.run(t, "desktop", 30*time.Second, chromedp.EmulateViewport(1280, 900))
		b.noErrors(t, "ladder on a phone and a projector", nil)
	})

	var versions struct {
		Versions []struct {
			Version int `json:"version"`
			Ratings []struct {
				TournamentID int64 `json:"tournament_id"`
				Games        int64 `json:"games"`
			} `json:"ratings"`
		} `json:"versions"`
	}
	s.mustCall(t, "GET", fmt.Sprintf("/api/engines/%d/versions", bot.ID), nil, &versions)
	var rated []string
	for _, v := range versions.Versions {
		for _, r := range v.Ratings {
			if r.TournamentID == lg.ID && r.Games > 0 {
				rated = append(rated, fmt.Sprint(v.Version))
			}
		}
	}
	sort.Strings(rated)
	if !slices.Equal(rated, []string{"1", "2"}) {
		t.Fatalf("versions rated in the league: %v, want 1 and 2 (%+v)", rated, versions)
	}
	enginePath := fmt.Sprintf("/engines/%d", bot.ID)

	t.Run("EnginePage", func(t *testing.T) {
		b.open(t, enginePath)
		signInAs(t, b, token)
		b.open(t, enginePath)
		b.waitJS(t, "the engine page", `document.body.dataset.loaded === 'true' && document.querySelectorAll('#version-chart .v-point').length > 0`, 30*time.Second)
		points := evalJS[[]string](t, b, `[...document.querySelectorAll('#version-chart .v-point')].map((g) => g.dataset.version).sort()`)
		if !slices.Equal(points, rated) {
			t.Errorf("the chart's points are of versions %q, want one per version rated: %q", points, rated)
		}
		// Each point sits at its version's time: version 2's right of 1's.
		xs := evalJS[[]float64](t, b, `[1, 2].map((v) => +document.querySelector('#version-chart .v-point[data-version="' + v + '"] circle').getAttribute('cx'))`)
		if len(xs) != 2 || !(xs[1] > xs[0]) {
			t.Errorf("the points' x %v: version 2 should be right of version 1", xs)
		}
		// Drawn at the size it is shown (its text as large as the page's).
		if scale := evalJS[float64](t, b, `document.querySelector('#version-chart svg').getBoundingClientRect().width / document.querySelector('#version-chart svg').viewBox.baseVal.width`); scale < 0.9 || scale > 1.1 {
			t.Errorf("the chart is drawn %.2f times its size", scale)
		}
		// The versions were submitted seconds apart, so a label can lie on
		// the other point: every label is drawn on top, over a halo of the
		// chart's background (the contrast checks read the halo).
		covered := evalJS[[]string](t, b, `[...document.querySelectorAll('#version-chart text.c-halo')].filter((el) => {
  el.scrollIntoView({block: 'nearest'});
  const r = el.getBoundingClientRect();
  return document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) !== el || getComputedStyle(el).paintOrder.split(' ')[0] !== 'stroke';
}).map((el) => el.textContent)`)
		if n := evalJS[int](t, b, `document.querySelectorAll('#version-chart text.c-halo').length`); n != len(rated) || len(covered) != 0 {
			t.Errorf("%d point labels (want %d); covered or without a halo: %q", n, len(rated), covered)
		}
		checks := evalJS[[]string](t, b, `[...document.querySelectorAll('#engine-versions tbody tr')].map((tr) => tr.dataset.version + ' ' + tr.querySelector('td.version-check').dataset.check)`)
		if !slices.Equal(checks, []string{"2 passed", "1 passed"}) {
			t.Errorf("the versions' checks %q, want both passed", checks)
		}
		// Its league games, with the version of the engine that played each:
		// all of them, page after page (on a busy machine version 2 can
		// play 50 games, a page, before the page is opened).
		for i := 0; evalJS[bool](t, b, `!document.querySelector('#games-more').hidden`); i++ {
			if i == 20 {
				t.Fatal("the engine's games did not end in 20 pages")
			}
			rows := evalJS[int](t, b, `document.querySelectorAll('#engine-games tbody tr').length`)
			evalJS[chromedp.Void](t, b, `document.querySelector('#games-more').click()`)
			b.waitJS(t, "the next page of the engine's games", fmt.Sprintf(`document.querySelectorAll('#engine-games tbody tr').length > %d`, rows), 30*time.Second)
		}
		played := evalJS[[]string](t, b, `[...new Set([...document.querySelectorAll('#engine-games tbody tr td.version')].map((td) => td.textContent))].sort()`)
		if !slices.Equal(played, []string{"1", "2"}) {
			t.Errorf("the versions in the engine's games: %q, want 1 and 2", played)
		}
		b.screenshot(t, "league-engine")
		signOut(t, b)
		// A guest sees the chart but not the checks.
		b.open(t, enginePath)
		b.waitJS(t, "the engine page for a guest", `document.body.dataset.loaded === 'true' && document.querySelectorAll('#version-chart .v-point').length === 2`, 30*time.Second)
		if n := evalJS[int](t, b, `document.querySelectorAll('#engine-versions td.version-check').length`); n != 0 {
			t.Errorf("a guest sees %d check cells of a participant's engine", n)
		}
		b.noErrors(t, "engine page", nil)
	})

	t.Run("Japanese", func(t *testing.T) {
		if _, err := chromedp.Call(b.ctx, network.Enable, network.EnableParams{}); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Call(b.ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": "ja"}}); err != nil {
			t.Fatal(err)
		}
		// Names: the engines, the protocol, the check's opponent.
		names := []string{"othello-random", "othello-move", "yamada-bot", "greedy", "random"}
		b.open(t, ladderPath)
		b.waitJS(t, "the Japanese ladder", `document.documentElement.lang === 'ja' && document.querySelectorAll('#standings tbody tr').length === 3 && document.querySelectorAll('#games tbody tr').length > 0`, 30*time.Second)
		if got := evalJS[string](t, b, `document.querySelector('#standings-title').textContent`); got != "ラダー" {
			t.Errorf("the ladder's heading %q", got)
		}
		checkPage(t, b, "ja ladder", names, true)
		b.screenshot(t, "league-ladder-ja")
		b.open(t, ladderPath+"?tv=1")
		b.waitJS(t, "the Japanese projector view", `document.querySelectorAll('#standings tbody tr').length === 3`, 30*time.Second)
		checkPage(t, b, "ja ladder ?tv=1", names, true)
		// The overview lists the league with its games played.
		b.open(t, "/")
		b.waitJS(t, "the Japanese overview", fmt.Sprintf(`document.querySelector('#tournaments tr[data-id="%d"]')?.textContent.includes('局を対局済み')`, lg.ID), 30*time.Second)
		checkPage(t, b, "ja overview", names, true)
		b.open(t, enginePath)
		signInAs(t, b, token)
		b.open(t, enginePath)
		b.waitJS(t, "the Japanese engine page", `document.body.dataset.loaded === 'true' && document.querySelectorAll('#version-chart .v-point').length === 2 && document.querySelectorAll('#engine-versions td.version-check').length === 2`, 30*time.Second)
		checkPage(t, b, "ja engine page", names, true)
		if scale := evalJS[float64](t, b, `document.querySelector('#version-chart svg').getBoundingClientRect().width / document.querySelector('#version-chart svg').viewBox.baseVal.width`); scale < 0.9 || scale > 1.1 {
			t.Errorf("the Japanese page's chart is drawn %.2f times its size", scale)
		}
		if got := evalJS[string](t, b, `document.querySelector('#engine-versions td.version-check').textContent`); !strings.HasPrefix(got, "合格") {
			t.Errorf("the version's check says %q, want a pass in Japanese", got)
		}
		b.screenshot(t, "league-engine-ja")
		signOut(t, b)
		b.noErrors(t, "Japanese league pages", nil)
		if _, err := chromedp.Call(b.ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{}}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("AdminForms", func(t *testing.T) {
		// The admin resumes and pauses the league from its page.
		b.open(t, ladderPath)
		signInAs(t, b, s.token)
		b.waitJS(t, "the paused league's resume button", `document.querySelector('#status').textContent === 'paused' && !document.querySelector('#start').hidden && document.querySelector('#start').textContent === 'Resume' && document.querySelector('#pause').hidden`, 30*time.Second)
		b.run(t, "resume", 30*time.Second, chromedp.Click(chromedp.CSS("#start")))
		b.waitJS(t, "running", `document.querySelector('#status').textContent === 'running' && document.querySelector('#start').hidden && !document.querySelector('#pause').hidden`, 30*time.Second)
		b.run(t, "pause", 30*time.Second, chromedp.Click(chromedp.CSS("#pause")))
		b.waitJS(t, "paused", `document.querySelector('#status').textContent === 'paused' && document.querySelector('#pause').hidden`, 30*time.Second)
		var got struct {
			Status         string `json:"status"`
			Format         string `json:"format"`
			PlacementGames int    `json:"placement_games"`
			Entrants       string `json:"entrants"`
			Name           string `json:"name"`
		}
		s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d", lg.ID), nil, &got)
		if got.Status != "paused" {
			t.Errorf("the league after pause on its page: %q", got.Status)
		}
		// A league of every engine whose check passed, from the overview's form.
		b.open(t, "/")
		b.run(t, "open the form", 30*time.Second, chromedp.Click(chromedp.CSS("#new-tournament summary")))
		b.waitJS(t, "the engine choice", `document.querySelectorAll('#t-engines input').length >= 3`, 30*time.Second)
		b.setValue(t, "#t-format", "league")
		b.waitJS(t, "the league's fields", `!document.querySelector('#t-placement').closest('.field').hidden && document.querySelector('#t-games').closest('.field').hidden`, 15*time.Second)
		b.setValue(t, "#t-placement", "4")
		b.run(t, "fill", 30*time.Second,
			chromedp.SendKeys(chromedp.CSS("#t-name"), "Checked league"),
			chromedp.Click(chromedp.CSS("#t-entrants-checked")),
			chromedp.Click(chromedp.CSS("#t-start")), // off: create it pending
			chromedp.Click(chromedp.CSS(`#tournament-form button[type=submit]`)))
		b.waitJS(t, "the new league's page", `location.pathname.startsWith('/tournaments/') && document.querySelector('#status')?.textContent === 'pending' && document.querySelector('#standings.ladder')`, 30*time.Second)
		tid := evalJS[int64](t, b, `+location.pathname.split('/').pop()`)
		s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d", tid), nil, &got)
		if got.Name != "Checked league" || got.Format != "league" || got.PlacementGames != 4 || got.Entrants != "checked" || got.Status != "pending" {
			t.Errorf("the form made %+v, want a pending league of the checked engines, 4 placement games", got)
		}
		b.run(t, "cancel", 30*time.Second, chromedp.Click(chromedp.CSS("#cancel")), chromedp.Click(chromedp.CSS("#cancel")))
		b.waitJS(t, "cancelled", `document.querySelector('#status').textContent === 'cancelled' && document.querySelector('#cancel').hidden`, 45*time.Second)
		signOut(t, b)
		b.noErrors(t, "admin forms", nil)
	})
}
