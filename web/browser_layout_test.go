package web_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserClassroomLayout (issue 37, item 14): the projector's home view
// shows six live boards whole at 1920x1080; a game's board fits a 1080p
// screen without scrolling, on the page and in the projector view; a
// checkers board's square numbers are drawn over its pieces, not under.
func TestBrowserClassroomLayout(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	s := startSite(t)
	b := startBrowser(t, s)
	var a, c, ca, cb engineAnswer
	s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "greedy", "game": "othello", "builtin": "othello-greedy"}, &a)
	s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "random", "game": "othello", "builtin": "othello-random"}, &c)
	s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "ck-a", "game": "checkers", "builtin": "checkers-random"}, &ca)
	s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "ck-b", "game": "checkers", "builtin": "checkers-random"}, &cb)
	// Six games at once, 300 ms a move (outside the clocks): each lasts
	// about 20 s, long enough to be seen together.
	var live tournamentAnswer
	s.mustCall(t, "POST", "/api/tournaments", map[string]any{
		"name": "six", "game": "othello", "engines": []int64{a.ID, c.ID},
		"games_per_pair": 6, "move_time_ms": 1000, "pace_ms": 300, "concurrency": 6, "start": true,
	}, &live)

	b.run(t, "1920x1080", 30*time.Second, chromedp.EmulateViewport(1920, 1080))
	b.open(t, "/?tv=1")
	b.waitJS(t, "six live boards", `document.querySelectorAll('#live-games .game-card svg').length === 6`, 90*time.Second)
	whole := evalJS[int](t, b, `[...document.querySelectorAll('#live-games .game-card')].filter((c) => { const r = c.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; }).length`)
	b.screenshot(t, "layout-tv-home")
	if whole < 6 {
		t.Errorf("the projector's home view at 1920x1080 shows %d of 6 live boards whole, want all 6", whole)
	}

	// A game's page at 1080p, then in the projector view: the board whole
	// in the window, without scrolling.
	var list struct{ Games []gameAnswer }
	s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d/games", live.ID), nil, &list)
	if len(list.Games) == 0 {
		t.Fatal("no game listed")
	}
	id := list.Games[0].ID
	for _, path := range []string{fmt.Sprintf("/games/%d", id), fmt.Sprintf("/games/%d?tv=1", id)} {
		b.open(t, path)
		b.waitJS(t, "the board", `document.querySelectorAll('#board .stone').length >= 4`, 30*time.Second)
		box := evalJS[map[string]float64](t, b, `(() => { const r = document.querySelector('#board').getBoundingClientRect(); return {top: r.top, bottom: Math.max(r.bottom, document.querySelector('#first').getBoundingClientRect().bottom), width: r.width}; })()`)
		b.screenshot(t, fmt.Sprintf("layout-game-%s", map[bool]string{true: "tv", false: "page"}[len(path) > 12 && path[len(path)-4:] == "tv=1"]))
		if box["bottom"] > 1080 || box["top"] < 0 || box["width"] < 400 {
			t.Errorf("%s at 1920x1080: the board and its step buttons span %.0f-%.0f px (the board %.0f px wide), want them whole in 1080 px and the board at least 400 px wide", path, box["top"], box["bottom"], box["width"])
		}
	}

	// Checkers: the square numbers are painted after the pieces (over them).
	var ck tournamentAnswer
	s.mustCall(t, "POST", "/api/tournaments", map[string]any{"name": "ck", "game": "checkers", "engines": []int64{ca.ID, cb.ID}, "games_per_pair": 1, "move_time_ms": 1000, "start": true}, &ck)
	waitAPI(t, "the checkers game", 2*time.Minute, func() bool {
		s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d", ck.ID), nil, &ck)
		return ck.Status == "finished"
	})
	var games struct{ Games []gameAnswer }
	s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d/games", ck.ID), nil, &games)
	if len(games.Games) == 0 {
		t.Fatal("no checkers game listed")
	}
	b.run(t, "1366x768", 30*time.Second, chromedp.EmulateViewport(1366, 768))
	b.open(t, fmt.Sprintf("/games/%d", games.Games[0].ID))
	b.waitJS(t, "the checkers board", `document.querySelectorAll('#board .b-sq').length === 32 && document.querySelectorAll('#board .stone').length > 0`, 30*time.Second)
	b.run(t, "the first position", 15*time.Second, chromedp.Click(chromedp.CSS("#first")))
	b.waitJS(t, "the first position", `+document.querySelector('#ply').textContent === 0`, 15*time.Second)
	b.screenshot(t, "layout-checkers")
	// Each number on a piece: the piece is drawn first, the number over it.
	under := evalJS[int](t, b, `(() => { const sq = document.querySelector('#board .b-sq'); const st = document.querySelector('#board .stone'); return [...document.querySelectorAll('#board .b-sq')].filter((n) => n.compareDocumentPosition(st) & Node.DOCUMENT_POSITION_FOLLOWING).length; })()`)
	if under > 0 {
		t.Errorf("%d of 32 checkers square numbers are drawn before the pieces, so a piece hides them", under)
	}
	b.noErrors(t, "layout pages", nil)
}
