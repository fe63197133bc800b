package web_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserEnginePage opens an engine's page from its name in the
// standings of a real tournament, checks its sections against the API and
// follows a game link; then replays that game with the keyboard alone,
// checking the board's text alternative against the API's moves at each ply.
func TestBrowserEnginePage(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skip early (or fail on CI) without a browser
	rs := playRecordTournaments(t)
	b := startBrowser(t, rs.site)
	id := rs.ids["greedy"]
	var rec engineRecordAnswer
	rs.mustCall(t, "GET", fmt.Sprintf("/api/engines/%d/record", id), nil, &rec)
	var gameID int64

	t.Run("FromStandings", func(t *testing.T) {
		b.open(t, fmt.Sprintf("/tournaments/%d", rs.tournaments[0]))
		link := fmt.Sprintf(`#standings tr[data-engine-id="%d"] a.engine-link`, id)
		b.waitJS(t, "the standings' links", fmt.Sprintf(`document.querySelectorAll('#standings tbody tr').length === 3 && document.querySelector(%q)`, link), 30*time.Second)
		if got := evalJS[string](t, b, fmt.Sprintf(`document.querySelector(%q).textContent`, link)); got != "greedy" {
			t.Errorf("the standings link %q, want greedy", got)
		}
		b.run(t, "follow the engine's link", 30*time.Second, chromedp.Click(chromedp.CSS(link)))
		b.waitJS(t, "the engine page", fmt.Sprintf(`location.pathname === '/engines/%d' && document.body.dataset.loaded === 'true'`, id), 30*time.Second)

		if got := evalJS[string](t, b, `document.querySelector('h1').textContent`); got != "greedy" {
			t.Errorf("heading %q, want greedy", got)
		}
		headings := evalJS[[]string](t, b, `[...document.querySelectorAll('main h2')].map((h) => h.textContent)`)
		for _, want := range []string{"Rating", "Versions", "Tournaments", "Against each opponent", "Violations", "Time use", "Games"} {
			if !slices.Contains(headings, want) {
				t.Errorf("no section %q in %q", want, headings)
			}
		}
		r := rec.Rating
		if got, want := evalJS[string](t, b, `document.querySelector('#rating-elo').textContent`), fmt.Sprintf("%s ± %.0f", signedRating(r.Elo), math.Round(r.EloError)); got != want {
			t.Errorf("rating %q, want %q", got, want)
		}
		// Ratings round half away from zero, as the API and this test do:
		// Math.round alone showed −58.5 as −58 (a flaky failure here).
		evalJS[bool](t, b, `(import('taikai/app.js').then((m) => { window.signedSeen = [-58.5, 58.5, -0.4, 0, 12.49, -2.5].map(m.signedInt); }, (err) => { window.signedSeen = [String(err)]; }), true)`)
		b.waitJS(t, "signedInt", `Array.isArray(window.signedSeen)`, 15*time.Second)
		if got, want := evalJS[[]string](t, b, `window.signedSeen`), []string{signedRating(-58.5), signedRating(58.5), signedRating(-0.4), signedRating(0), signedRating(12.49), signedRating(-2.5)}; !slices.Equal(got, want) || want[0] != "−59" {
			t.Errorf("signedInt of -58.5, 58.5, -0.4, 0, 12.49, -2.5: %q, want %q", got, want)
		}
		if got, want := evalJS[string](t, b, `document.querySelector('#rating-note').textContent`), fmt.Sprintf("rank %d of %d engines, over %d finished games", r.Rank, r.Engines, r.Games); got != want {
			t.Errorf("rating note %q, want %q", got, want)
		}
		// A built-in registered once: version 1, current, no files.
		if got := evalJS[[]string](t, b, `[...document.querySelectorAll('#engine-versions tbody tr')].map((tr) => tr.cells[0].textContent + ' ' + tr.cells[4].textContent)`); !slices.Equal(got, []string{"1 (current) no files"}) {
			t.Errorf("versions %q, want one, current, without files", got)
		}
		tours := evalJS[[]string](t, b, `[...document.querySelectorAll('#engine-tournaments tbody a')].map((a) => a.getAttribute('href'))`)
		if len(tours) != len(rec.Tournaments) {
			t.Errorf("tournament links %v, want %d", tours, len(rec.Tournaments))
		}
		rows := evalJS[[][]string](t, b, `[...document.querySelectorAll('#engine-opponents tbody tr')].map((tr) => [tr.querySelector('a').getAttribute('href'), ...[...tr.cells].map((td) => td.textContent)])`)
		if len(rows) != len(rec.Opponents) {
			t.Fatalf("%d opponent rows, want %d", len(rows), len(rec.Opponents))
		}
		for i, o := range rec.Opponents {
			want := []string{fmt.Sprintf("/engines/%d", o.EngineID), o.Name, fmt.Sprint(o.Games), fmt.Sprint(o.Wins), fmt.Sprint(o.Draws), fmt.Sprint(o.Losses)}
			if !slices.Equal(rows[i][:6], want) {
				t.Errorf("opponent row %d %q, want %q", i, rows[i][:6], want)
			}
		}
		if got, want := evalJS[string](t, b, `document.querySelector('#time-moves').textContent`), fmt.Sprintf("%d moves in %d games", rec.Time.Moves, rec.Games["finished"]); got != want {
			t.Errorf("time use %q, want %q", got, want)
		}
		n := evalJS[int](t, b, `document.querySelectorAll('#engine-games tbody tr').length`)
		if int64(n) != rec.Games["finished"] {
			t.Errorf("%d game rows, want %d", n, rec.Games["finished"])
		}
		logs := evalJS[int](t, b, `document.querySelectorAll('#engine-games a.log-link').length`)
		if logs != n {
			t.Errorf("%d log links for %d games", logs, n)
		}
		b.screenshot(t, "engine")
		// A game long enough to step through (not one lost at once by the
		// engine that moves off the board).
		gameID = int64(evalJS[int](t, b, `+([...document.querySelectorAll('#engine-games tbody tr')].find((tr) => +tr.querySelector('td.plies').textContent >= 20) || {dataset: {gameId: 0}}).dataset.gameId`))
		if gameID == 0 {
			t.Fatal("no game of 20 plies or more in the engine's games")
		}
		b.run(t, "follow a game link", 30*time.Second, chromedp.Click(chromedp.CSS(fmt.Sprintf(`#engine-games tr[data-game-id="%d"] a.game-link`, gameID))))
		b.waitJS(t, "the game page", fmt.Sprintf(`location.pathname === '/games/%d' && document.querySelector('#result').textContent !== ''`, gameID), 30*time.Second)
		// The game page names the engine with a link back.
		if !evalJS[bool](t, b, fmt.Sprintf(`[...document.querySelectorAll('.player-name')].some((a) => a.getAttribute('href') === '/engines/%d' && a.textContent === 'greedy')`, id)) {
			t.Errorf("the game page does not link greedy to /engines/%d", id)
		}
		b.noErrors(t, "engine page", nil)
	})

	t.Run("KeyboardReplay", func(t *testing.T) {
		if gameID == 0 {
			t.Skip("no game from the engine page")
		}
		var g gameAnswer
		rs.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", gameID), nil, &g)
		frames := othelloFrames(t, g.Moves)
		n := len(g.Moves)
		if n < 12 {
			t.Fatalf("game %d has %d plies, too few to step through", gameID, n)
		}
		b.open(t, fmt.Sprintf("/games/%d", gameID))
		b.waitJS(t, "the replay", fmt.Sprintf(`document.querySelector('#result').textContent !== '' && +document.querySelector('#ply').textContent === %d`, n), 30*time.Second)
		press := func(what string, keys ...string) {
			t.Helper()
			var steps []chromedp.Action[chromedp.Void]
			for _, k := range keys {
				steps = append(steps, chromedp.KeyEvent(k))
			}
			b.run(t, what, 15*time.Second, steps...)
		}
		focused := func() string {
			return evalJS[string](t, b, `(() => { const a = document.activeElement; return a ? (a.id || (a.dataset.ply ? 'ply-' + a.dataset.ply : a.tagName)) : ''; })()`)
		}
		// tabTo presses Tab until the element named gets focus.
		tabTo := func(name string) {
			t.Helper()
			for range 60 {
				if focused() == name {
					return
				}
				press("Tab", kb.Tab)
			}
			t.Fatalf("Tab never reached %s (at %s)", name, focused())
		}
		// check compares the ply, the text alternative's table and its
		// sentence with the position the API's moves give.
		words := map[string]byte{"black": 'x', "white": 'o', "black king": 'X', "white king": 'O', "empty": '.'}
		check := func(how string, ply int) {
			t.Helper()
			b.waitJS(t, fmt.Sprintf("ply %d after %s", ply, how), fmt.Sprintf(`+document.querySelector('#ply').textContent === %d`, ply), 15*time.Second)
			cells := evalJS[[][]string](t, b, `[...document.querySelectorAll('#board-text tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))`)
			var got []string
			for _, row := range cells {
				var sb strings.Builder
				for _, c := range row {
					w, ok := words[c]
					if !ok {
						t.Fatalf("after %s: a square reads %q", how, c)
					}
					sb.WriteByte(w)
				}
				got = append(got, sb.String())
			}
			if !slices.Equal(got, frames[ply]) {
				t.Errorf("after %s, ply %d: the text alternative\n%s\nwant\n%s", how, ply, strings.Join(got, "\n"), strings.Join(frames[ply], "\n"))
			}
			status := evalJS[string](t, b, `document.querySelector('#board-status').textContent`)
			want := fmt.Sprintf("Start position, ply 0 of %d.", n)
			if ply > 0 {
				m := g.Moves[ply-1]
				want = fmt.Sprintf("Ply %d of %d: %s played %s.", ply, n, strings.ToUpper(m.Color[:1])+m.Color[1:], m.Text)
			}
			if !strings.HasPrefix(status, want) {
				t.Errorf("after %s: the board's sentence %q, want it to start %q", how, status, want)
			}
			if caption := evalJS[string](t, b, `document.querySelector('#board-text caption').textContent`); caption != fmt.Sprintf("Position after ply %d of %d", ply, n) {
				t.Errorf("after %s: caption %q", how, caption)
			}
		}
		if got := evalJS[string](t, b, `document.querySelector('#board-status').getAttribute('aria-live')`); got != "polite" {
			t.Errorf("the board's sentence is aria-live %q, want polite", got)
		}

		tabTo("board-focus")
		if style := evalJS[string](t, b, `getComputedStyle(document.activeElement).outlineStyle`); style == "none" {
			t.Errorf("the focused board shows no outline")
		}
		press("Home", kb.Home)
		check("Home", 0)
		press("→ → →", kb.ArrowRight, kb.ArrowRight, kb.ArrowRight)
		check("→ → →", 3)
		press("←", kb.ArrowLeft)
		check("←", 2)
		press("Page Down", kb.PageDown)
		check("Page Down", 12)
		press("Page Up", kb.PageUp)
		check("Page Up", 2)
		press("End", kb.End)
		check("End", n)
		if got := focused(); got != "board-focus" {
			t.Errorf("focus moved to %s while stepping on the board", got)
		}

		// The buttons: reached with Tab, pressed with Enter; at the start
		// they keep the focus (aria-disabled, not disabled).
		tabTo("prev")
		press("Enter on previous", kb.Enter)
		check("Enter on previous", n-1)
		press("Home", kb.Home)
		check("Home on a button", 0)
		if got := focused(); got != "prev" {
			t.Errorf("after Home on the previous button focus is on %s, want it kept", got)
		}
		if got := evalJS[string](t, b, `document.querySelector('#prev').getAttribute('aria-disabled')`); got != "true" {
			t.Errorf("previous at ply 0: aria-disabled %q", got)
		}

		// The move list is one tab stop; the arrows move in it and focus
		// follows the current move.
		tabTo("ply-1")
		press("↓ ↓", kb.ArrowDown, kb.ArrowDown)
		check("↓ ↓ in the move list", 2)
		if got := focused(); got != "ply-2" {
			t.Errorf("after ↓ ↓ in the move list focus is on %s, want ply-2", got)
		}
		if stops := evalJS[int](t, b, `document.querySelectorAll('#moves button[tabindex="0"]').length`); stops != 1 {
			t.Errorf("%d tab stops in the move list, want 1", stops)
		}
		b.noErrors(t, "keyboard replay", nil)
	})
}
