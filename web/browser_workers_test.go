package web_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// startPacedTournament starts a tournament of greedy and random, paced at
// 50 ms a move (outside the clocks): a game lasts a few seconds, long enough
// for the pages to see it running, and the tests that wait for a game's end
// wait half as long as at 100 ms.
func startPacedTournament(t *testing.T, s *site, name string, gamesPerPair int) {
	t.Helper()
	var a, c engineAnswer
	s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "greedy", "game": "othello", "builtin": "othello-greedy"}, &a)
	s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "random", "game": "othello", "builtin": "othello-random"}, &c)
	s.mustCall(t, "POST", "/api/tournaments", map[string]any{
		"name": name, "game": "othello", "engines": []int64{a.ID, c.ID},
		"games_per_pair": gamesPerPair, "move_time_ms": 1000, "pace_ms": 50, "concurrency": 1, "start": true,
	}, &tournamentAnswer{})
}

// TestBrowserWorkers: a server whose games are played by a worker through
// NATS. The Workers page lists the worker with the game it plays; that game's
// page shows its moves arriving live, board by board as the API has them;
// once over, the page says which worker played it.
func TestBrowserWorkers(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	s := startSiteWith(t, true)
	b := startBrowser(t, s)
	startPacedTournament(t, s, "On workers", 4)

	b.open(t, "/workers")
	if !evalJS[bool](t, b, `[...document.querySelectorAll('.nav a')].some((a) => a.getAttribute('href') === '/workers')`) {
		t.Error("no Workers link in the navigation of a server with workers")
	}
	// A game the page opens may be over by then on a busy machine: then
	// the worker's next one (the tournament has 4).
	var href string
	seen := 0
	for try := 0; seen < 3; try++ {
		if try == 4 {
			t.Fatalf("4 games played on the worker were over before their pages saw 3 moves (the last: %d)", seen)
		}
		if try > 0 {
			b.open(t, "/workers")
		}
		b.waitJS(t, "the worker playing a game", fmt.Sprintf(`(() => { const a = document.querySelector('tr[data-worker="browser-w1"] a[href^="/games/"]'); return a && a.getAttribute('href') !== %q; })()`, href), 60*time.Second)
		if try == 0 {
			row := evalJS[string](t, b, `document.querySelector('tr[data-worker="browser-w1"]').textContent`)
			if !strings.Contains(row, "browser-host") || !strings.Contains(row, "1 / 1") {
				t.Errorf("worker row %q, want its host and 1 / 1 games", row)
			}
			b.screenshot(t, "workers")
		}
		href = evalJS[string](t, b, `document.querySelector('tr[data-worker="browser-w1"] a[href^="/games/"]').getAttribute('href')`)
		var id int64
		fmt.Sscanf(href, "/games/%d", &id)

		b.open(t, href)
		seen = 0
		over := false
		deadline := time.Now().Add(60 * time.Second)
		for seen < 3 && time.Now().Before(deadline) {
			v := b.view(t, 8)
			if over = v.Result != ""; over {
				t.Logf("game %d was over at ply %d of the page's", id, seen)
				break
			}
			if v.Ply > seen {
				var g gameAnswer
				s.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", id), nil, &g)
				if len(g.Moves) < v.Ply {
					t.Fatalf("the page shows ply %d, the API has %d moves", v.Ply, len(g.Moves))
				}
				if want := othelloFrames(t, g.Moves[:v.Ply])[v.Ply]; !slices.Equal(v.Rows, want) {
					t.Errorf("live board at ply %d\n%s\nwant\n%s", v.Ply, strings.Join(v.Rows, "\n"), strings.Join(want, "\n"))
				}
				seen = v.Ply
			}
			time.Sleep(20 * time.Millisecond)
		}
		if seen < 3 && !over {
			t.Fatalf("the game page saw %d live moves of a game played on the worker in 60 s", seen)
		}
	}
	b.waitJS(t, "the result", `document.querySelector('#result').textContent !== ''`, 2*time.Minute)
	b.open(t, href)
	b.waitJS(t, "who played it", `(document.querySelector('#worker')?.textContent ?? '').includes('browser-w1')`, 30*time.Second)
	b.noErrors(t, "workers", nil)

	// The engines page's Check button: the pre-flight check of an engine
	// that crashes at once, in words, with its output.
	var broken engineAnswer
	s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "broken", "game": "othello", "command": []string{"sh", "-c", "echo cannot start >&2; exit 3"}}, &broken)
	b.open(t, "/engines")
	b.run(t, "sign in", 30*time.Second,
		chromedp.Click(chromedp.CSS("#sign-in")),
		chromedp.WaitVisible(chromedp.CSS("#token-input")),
		chromedp.SendKeys(chromedp.CSS("#token-input"), browserToken),
		chromedp.Click(chromedp.CSS(`#token-form button[type=submit]`)))
	b.waitJS(t, "admin mode", `document.body.classList.contains('admin')`, 15*time.Second)
	b.waitJS(t, "the broken engine's Check button", fmt.Sprintf(`!!document.querySelector('button.check[data-id="%d"]')`, broken.ID), 30*time.Second)
	b.run(t, "check", 30*time.Second, chromedp.Click(chromedp.CSS(fmt.Sprintf(`button.check[data-id="%d"]`, broken.ID))))
	b.waitJS(t, "the check's answer", `document.querySelector('#check-result').classList.contains('failed')`, 2*time.Minute)
	msg := evalJS[string](t, b, `document.querySelector('#check-message').textContent`)
	out := evalJS[string](t, b, `document.querySelector('#check-log').textContent`)
	if !strings.Contains(msg, "exited before its first move") || !strings.Contains(out, "cannot start") {
		t.Errorf("check shows %q with output %q", msg, out)
	}
	b.screenshot(t, "engine-check")
	b.noErrors(t, "engines (check)", nil)
}
