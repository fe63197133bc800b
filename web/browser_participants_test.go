package web_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// signInAs signs the browser in with a token through the sign-in dialog.
func signInAs(tb testing.TB, b *browser, token string) {
	tb.Helper()
	b.run(tb, "sign in", 30*time.Second,
		chromedp.Click(chromedp.CSS("#sign-in")),
		chromedp.WaitVisible(chromedp.CSS("#token-input")),
		chromedp.SendKeys(chromedp.CSS("#token-input"), token),
		chromedp.Click(chromedp.CSS(`#token-form button[type=submit]`)))
	b.waitJS(tb, "signed in", `(document.body.classList.contains('admin') || document.body.classList.contains('participant')) && !document.querySelector('#token-dialog').open`, 15*time.Second)
}

// signOut signs the browser out and waits until the server cleared the
// cookie (a navigation before would cancel the request).
func signOut(tb testing.TB, b *browser) {
	tb.Helper()
	b.run(tb, "sign out", 15*time.Second, chromedp.Click(chromedp.CSS("#sign-out")))
	b.waitJS(tb, "signed out", `!document.body.classList.contains('participant') && !document.body.classList.contains('admin')`, 15*time.Second)
}

// fetchStatus is the HTTP status of a GET the page makes (with its cookie).
func fetchStatus(tb testing.TB, b *browser, path string) int {
	tb.Helper()
	evalJS[chromedp.Void](tb, b, fmt.Sprintf(`(() => { window.__status = 0; fetch(%q, {credentials: 'same-origin'}).then((r) => { window.__status = r.status; }); })()`, path))
	b.waitJS(tb, "the answer to "+path, `window.__status > 0`, 15*time.Second)
	return evalJS[int](tb, b, `window.__status`)
}

// The browser test of issue 21's acceptance: the admin adds two participants
// on the participants page (one by name, one from a CSV); each accepts the
// invitation page, submits an engine on the engines page and sees its check,
// and sees no controls on the other's engine; the admin locks submissions
// and a late upload shows the deadline; a tournament of both engines runs,
// and each participant reads only their own engine's logs.
func TestBrowserParticipants(t *testing.T) {
	t.Parallel()
	s := startSite(t)
	b := startBrowser(t, s)
	dir := t.TempDir()
	script := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(script, []byte(studentEngine(t, "othello-random")["run.sh"]), 0o755); err != nil {
		t.Fatal(err)
	}
	csvFile := filepath.Join(dir, "class.csv")
	if err := os.WriteFile(csvFile, []byte("name\nBob\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The admin adds Alice by name and Bob from a CSV.
	b.open(t, "/participants")
	signInAs(t, b, browserToken)
	b.run(t, "add Alice", 30*time.Second,
		chromedp.WaitVisible(chromedp.CSS("#p-name")),
		chromedp.SendKeys(chromedp.CSS("#p-name"), "Alice"),
		chromedp.Click(chromedp.CSS("#p-add")))
	b.waitJS(t, "Alice's link", `document.querySelector('#links-table tr[data-name="Alice"] a.invite-link')`, 15*time.Second)
	b.run(t, "add Bob from a CSV", 30*time.Second,
		chromedp.SetUploadFiles(chromedp.CSS("#p-csv"), []string{csvFile}),
		chromedp.Click(chromedp.CSS("#p-csv-add")))
	b.waitJS(t, "Bob's link", `document.querySelector('#links-table tr[data-name="Bob"] a.invite-link')`, 15*time.Second)
	b.waitJS(t, "two participants listed", `document.querySelectorAll('#participants tbody tr').length === 2`, 15*time.Second)
	links := map[string]string{}
	for _, name := range []string{"Alice", "Bob"} {
		links[name] = evalJS[string](t, b, fmt.Sprintf(`document.querySelector('#links-table tr[data-name=%q] a.invite-link').getAttribute('href')`, name))
	}
	b.noErrors(t, "participants page", nil)

	// Each accepts their invitation and submits an engine.
	tokens := map[string]string{}
	ids := map[string]int64{}
	for _, name := range []string{"Alice", "Bob"} {
		b.run(t, "open "+name+"'s invitation", 45*time.Second, chromedp.Navigate(links[name]))
		b.run(t, "accept", 30*time.Second, chromedp.WaitVisible(chromedp.CSS("#invite-accept")), chromedp.Click(chromedp.CSS("#invite-accept")))
		b.waitJS(t, name+"'s token", `document.querySelector('#invite-token').textContent.startsWith('tkp_')`, 15*time.Second)
		tokens[name] = evalJS[string](t, b, `document.querySelector('#invite-token').textContent`)
		if got := evalJS[string](t, b, `document.querySelector('#participant-badge').textContent`); got != name {
			t.Errorf("the badge says %q, want %q", got, name)
		}
		if strings.Contains(evalJS[string](t, b, `document.cookie`), tokens[name]) {
			t.Error("the participant's token is in a cookie scripts can read")
		}
		b.open(t, "/engines")
		b.waitJS(t, "the form", `document.querySelector('#engine-form').offsetParent !== null && document.querySelector('#e-protocol').options.length > 0`, 15*time.Second)
		setSelect(t, b, "#e-game", "othello")
		setSelect(t, b, "#e-protocol", "othello-move")
		engine := strings.ToLower(name) + "-bot"
		fillEngineForm(t, b, engine, "./run.sh {host} {port}", []string{script})
		b.waitJS(t, engine+" listed", fmt.Sprintf(`[...document.querySelectorAll('#engines tbody tr')].some((tr) => tr.querySelector('.name .strong').textContent === %q)`, engine), 30*time.Second)
		row := fmt.Sprintf(`[...document.querySelectorAll('#engines tbody tr')].find((tr) => tr.querySelector('.name .strong').textContent === %q)`, engine)
		ids[name] = int64(evalJS[float64](t, b, row+`.dataset.engineId * 1`))
		// The check ran by itself and shows when done, without a reload.
		b.waitJS(t, engine+"'s check", row+`.querySelector('.check-cell').dataset.status === 'done'`, 120*time.Second)
		if ok := evalJS[string](t, b, row+`.querySelector('.check-cell').dataset.ok`); ok != "true" {
			t.Errorf("%s's check: %s", engine, evalJS[string](t, b, row+`.querySelector('.check-cell').textContent`))
		}
		if got := evalJS[string](t, b, row+`.querySelector('.owner').textContent`); got != name {
			t.Errorf("%s's owner shows %q, want %q", engine, got, name)
		}
		b.noErrors(t, name+"'s engines page", nil)
	}
	// Bob (signed in last) has controls on his engine only.
	rowOf := func(id int64) string {
		return fmt.Sprintf(`document.querySelector('#engines tr[data-engine-id="%d"]')`, id)
	}
	if evalJS[bool](t, b, rowOf(ids["Alice"])+`.querySelector('button') !== null`) || !evalJS[bool](t, b, rowOf(ids["Bob"])+`.querySelector('button.delete') !== null`) {
		t.Error("Bob sees controls on Alice's engine, or none on his own")
	}
	if code := (member{s: s, token: tokens["Bob"]}).call(t, "DELETE", fmt.Sprintf("/api/engines/%d", ids["Alice"]), nil, nil); code != 403 {
		t.Errorf("Bob withdrawing Alice's engine: %d, want 403", code)
	}

	// The admin locks submissions on the participants page.
	signOut(t, b)
	b.open(t, "/participants")
	signInAs(t, b, browserToken)
	b.run(t, "lock", 15*time.Second, chromedp.WaitVisible(chromedp.CSS("#lock-now")), chromedp.Click(chromedp.CSS("#lock-now")))
	b.waitJS(t, "submissions closed", `document.body.dataset.submissions === 'closed' && document.querySelector('#lock-state').textContent.startsWith('Submissions closed at')`, 15*time.Second)
	// The list shows who submitted what and when.
	if got := evalJS[string](t, b, `document.querySelector('#participants tbody tr .engines').textContent`); !strings.Contains(got, "alice-bot (version 1)") {
		t.Errorf("Alice's engines show %q", got)
	}

	// Bob's late upload is refused with the deadline.
	signOut(t, b)
	b.open(t, "/engines")
	signInAs(t, b, tokens["Bob"])
	b.waitJS(t, "the form", `document.querySelector('#engine-form').offsetParent !== null && document.querySelector('#e-protocol').options.length > 0`, 15*time.Second)
	setSelect(t, b, "#e-game", "othello")
	setSelect(t, b, "#e-protocol", "othello-move")
	fillEngineForm(t, b, "bob-late", "./run.sh {host} {port}", []string{script})
	b.waitJS(t, "the deadline message", `document.querySelector('#engine-form .field-error[data-field=""]').textContent.startsWith('Submissions closed at')`, 15*time.Second)
	b.noErrors(t, "late upload", func(e string) bool { return strings.Contains(e, "409") })

	// A tournament of both engines runs; Bob reads his engine's logs only.
	gl := classGames(t, s, ids["Alice"], ids["Bob"])
	g := gl.Games[0]
	bobColor, aliceColor := "black", "white"
	if g.White.EngineID == ids["Bob"] {
		bobColor, aliceColor = "white", "black"
	}
	if code := fetchStatus(t, b, fmt.Sprintf("/api/games/%d/log/%s", g.ID, bobColor)); code != 200 {
		t.Errorf("Bob reading his engine's log: %d, want 200", code)
	}
	if code := fetchStatus(t, b, fmt.Sprintf("/api/games/%d/log/%s", g.ID, aliceColor)); code != 403 {
		t.Errorf("Bob reading Alice's engine's log: %d, want 403", code)
	}
	b.noErrors(t, "logs", func(e string) bool { return strings.Contains(e, "403") })
	b.screenshot(t, "participants-engines")
}
