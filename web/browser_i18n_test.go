package web_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// pageText is what a page shows a reader: each visible text with where it
// is, and each text whose contrast against its background is under WCAG AA.
type pageText struct {
	Texts []struct {
		Text  string `json:"text"`
		Where string `json:"where"`
	} `json:"texts"`
	Low []struct {
		Text  string  `json:"text"`
		Where string  `json:"where"`
		Ratio float64 `json:"ratio"`
		Need  float64 `json:"need"`
		FG    string  `json:"fg"`
		BG    string  `json:"bg"`
	} `json:"low"`
	Checked int `json:"checked"`
}

// readPageJS collects the page's visible text (text nodes of rendered
// elements, the <title>, and the title, aria-label, placeholder and alt
// attributes), leaving out what is not in the page's language by its own
// markup: code (<code>, <pre>, <kbd>), translate="no", and elements whose
// lang differs from the page's (the switch to English). It also measures the
// contrast of every rendered text against the colour behind it: for HTML the
// backgrounds of the element and its ancestors composited, for SVG text the
// shape painted under it (a board's square) or its halo (a chart's labels).
const readPageJS = `(() => {
  const pageLang = document.documentElement.lang;
  const foreign = (el) => el.closest('code, pre, kbd, [translate=no]') || el.closest('[lang]')?.lang !== pageLang;
  const shown = (el) => el.checkVisibility({visibilityProperty: true, opacityProperty: false});
  const where = (el) => {
    const parts = [];
    for (let e = el; e && e !== document.body && parts.length < 4; e = e.parentElement) {
      parts.unshift(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.classList.length ? '.' + [...e.classList].join('.') : ''));
    }
    return parts.join(' > ');
  };
  const texts = [{text: document.title, where: 'title'}];
  const low = [];
  let checked = 0;

  const parse = (c) => {
    const m = c.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number);
    return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1};
  };
  const over = (top, under) => ({
    r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a),
    b: top.b * top.a + under.b * (1 - top.a), a: 1,
  });
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  };
  const hex = (c) => '#' + [c.r, c.g, c.b].map((v) => Math.round(v).toString(16).padStart(2, '0')).join('');
  // The page's canvas: the root's background, or the browser's default.
  const canvas = () => {
    for (const el of [document.body, document.documentElement]) {
      const c = parse(getComputedStyle(el).backgroundColor);
      if (c && c.a > 0) return c;
    }
    return matchMedia('(prefers-color-scheme: dark)').matches ? {r: 18, g: 18, b: 18, a: 1} : {r: 255, g: 255, b: 255, a: 1};
  };
  const htmlBackground = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) {
        layers.push(c);
        if (c.a >= 1) break;
      }
    }
    let bg = layers.length && layers[layers.length - 1].a >= 1 ? layers.pop() : canvas();
    while (layers.length) bg = over(layers.pop(), bg);
    return bg;
  };
  const svgBackground = (el) => {
    // A halo (the text's stroke painted first, at least 3px wide: 1.5px
    // around each glyph) is what the text is read against.
    const own = getComputedStyle(el);
    const halo = parse(own.stroke);
    if (halo && own.stroke !== 'none' && own.paintOrder.startsWith('stroke') && parseFloat(own.strokeWidth) >= 3) {
      halo.a *= Number(own.strokeOpacity);
      return halo.a >= 1 ? halo : over(halo, htmlBackground(el.ownerSVGElement));
    }
    el.scrollIntoView({block: 'nearest', inline: 'nearest'}); // elementsFromPoint sees the viewport only
    const box = el.getBoundingClientRect();
    const x = box.left + box.width / 2;
    const y = box.top + box.height / 2;
    for (const e of document.elementsFromPoint(x, y)) {
      if (e === el || e.contains(el)) continue;
      if (!(e instanceof SVGGeometryElement) || e.tagName === 'line' || e.tagName === 'polyline') continue;
      const st = getComputedStyle(e);
      const c = parse(st.fill);
      if (!c || st.fill === 'none') continue;
      c.a *= Number(st.opacity) * Number(st.fillOpacity);
      return c.a >= 1 ? c : over(c, htmlBackground(el.ownerSVGElement));
    }
    return htmlBackground(el.ownerSVGElement || el);
  };
  const contrast = (el, text) => {
    if (el.closest(':disabled, [aria-disabled=true]') || el.closest('option, select, title')) return; // inactive controls are exempt (WCAG 1.4.3); options are drawn by the browser
    const st = getComputedStyle(el);
    const svg = el instanceof SVGElement;
    const fg = parse(svg ? st.fill : st.color);
    if (!fg) return;
    let opacity = 1;
    for (let e = el; e; e = e.parentElement) opacity *= Number(getComputedStyle(e).opacity);
    if (svg) opacity *= Number(st.fillOpacity);
    fg.a *= opacity;
    const bg = svg ? svgBackground(el) : htmlBackground(el);
    const seen = over(fg, bg);
    const [a, b] = [lum(seen), lum(bg)].sort((p, q) => q - p);
    const ratio = (a + 0.05) / (b + 0.05);
    let px = parseFloat(st.fontSize);
    if (svg && el.ownerSVGElement) px *= el.ownerSVGElement.getScreenCTM().a;
    const bold = Number(st.fontWeight) >= 700;
    const need = px >= 24 || (bold && px >= 18.66) ? 3 : 4.5;
    checked++;
    if (ratio < need - 0.005) low.push({text, where: where(el), ratio: Math.round(ratio * 100) / 100, need, fg: hex(seen), bg: hex(bg)});
  };

  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.data.trim();
    const el = n.parentElement;
    if (!text || !el || el.closest('script, style, template')) continue;
    const sel = el.closest('select');
    if (!(sel ? shown(sel) : shown(el))) continue;
    if (!foreign(el)) texts.push({text, where: where(el)});
    if (!el.closest('title')) contrast(el, text);
  }
  for (const el of document.querySelectorAll('[title], [aria-label], [placeholder], [alt]')) {
    if (!shown(el) || foreign(el)) continue;
    for (const a of ['title', 'aria-label', 'placeholder', 'alt']) {
      const v = el.getAttribute(a);
      if (v && v.trim()) texts.push({text: v.trim(), where: where(el) + ' @' + a});
    }
  }
  // Form fields: the text typed or the placeholder, against the field.
  for (const el of document.querySelectorAll('input:not([type=checkbox]):not([type=radio]):not([type=range]):not([type=file]), select')) {
    if (!shown(el) || el.disabled) continue;
    const st = getComputedStyle(el, el.value ? null : '::placeholder');
    const fg = parse(st.color);
    if (!fg) continue;
    const bg = htmlBackground(el);
    const seen = over(fg, bg);
    const [a, b] = [lum(seen), lum(bg)].sort((p, q) => q - p);
    const ratio = (a + 0.05) / (b + 0.05);
    checked++;
    if (ratio < 4.495) low.push({text: el.value || el.placeholder || '(field)', where: where(el), ratio: Math.round(ratio * 100) / 100, need: 4.5, fg: hex(seen), bg: hex(bg)});
  }
  return {texts, low, checked};
})()`

// allowedWords are the Latin words a Japanese page may show besides engine
// names, protocol names and the product name, each a name or a symbol that
// Japanese text uses as it is:
//   - Elo, nElo, LOS, SPRT, LLR, H (H0, H1): the statistics' names, as
//     Japanese engine-testing pages write them;
//   - CPU, MiB: units; HTTP: a status code's protocol; API, as Japanese
//     writes it;
//   - CSV, ggf, psq, pdn, zip, tar, gz: file formats and extensions;
//   - Home, End, Page Up, Page Down, Tab: the key caps.
var allowedWords = map[string]bool{
	"Elo": true, "nElo": true, "LOS": true, "SPRT": true, "LLR": true, "H": true,
	"CPU": true, "MiB": true, "HTTP": true, "API": true,
	"CSV": true, "ggf": true, "psq": true, "pdn": true, "zip": true, "tar": true, "gz": true,
	"Home": true, "End": true, "Page": true, "Up": true, "Down": true, "Tab": true,
	"taikai": true,
}

// coordinate is a board square or point as the boards and move lists name
// them ("f5", "h8"), or a checkers move in PDN ("9-14", "13x22": x a capture).
var (
	coordinate = regexp.MustCompile(`\b[a-z]\d{1,2}\b|\b\d+(?:[-x]\d+)+\b`)
	latinWord  = regexp.MustCompile(`[A-Za-z]+`)
)

// checkPage reads the open page and fails the test on English left in it
// (any Latin word that is not a name or allowed) and, if contrast, on text
// under WCAG AA.
func checkPage(t *testing.T, b *browser, page string, names []string, contrast bool) {
	t.Helper()
	got := evalJS[pageText](t, b, readPageJS)
	if len(got.Texts) < 5 {
		t.Errorf("%s: only %d texts read", page, len(got.Texts))
	}
	var english []string
	for _, x := range got.Texts {
		text := x.Text
		for _, n := range names {
			text = strings.ReplaceAll(text, n, " ")
		}
		if strings.Contains(x.Where, "b-coord") {
			continue // a board's coordinates
		}
		text = coordinate.ReplaceAllString(text, " ")
		for _, w := range latinWord.FindAllString(text, -1) {
			if !allowedWords[w] {
				english = append(english, fmt.Sprintf("%q in %q (%s)", w, x.Text, x.Where))
			}
		}
	}
	sort.Strings(english)
	english = compactStrings(english)
	for i, e := range english {
		if i == 30 {
			t.Errorf("%s: and %d more", page, len(english)-i)
			break
		}
		t.Errorf("%s: English left: %s", page, e)
	}
	if !contrast {
		return
	}
	if got.Checked < 5 {
		t.Errorf("%s: the contrast of only %d texts was measured", page, got.Checked)
	}
	for i, l := range got.Low {
		if i == 30 {
			t.Errorf("%s: and %d more", page, len(got.Low)-i)
			break
		}
		t.Errorf("%s: contrast %.2f (needs %.1f) for %q: %s on %s (%s)", page, l.Ratio, l.Need, l.Text, l.FG, l.BG, l.Where)
	}
}

func compactStrings(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// TestBrowserJapanese plays small real tournaments, then reads every page of
// the dashboard in Japanese (Accept-Language: ja), as a guest and as the
// admin, in the light and the dark theme: no English may be left but names,
// and every text passes WCAG AA contrast.
func TestBrowserJapanese(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	s := startSite(t)
	b := startBrowser(t, s)

	ids := map[string]int64{}
	var names []string
	for _, name := range []string{"othello-random", "othello-greedy", "othello-alphabeta", "gomoku-random", "gomoku-threat", "checkers-random", "checkers-minimax"} {
		var e engineAnswer
		s.mustCall(t, "POST", "/api/engines", map[string]any{"name": name, "game": strings.SplitN(name, "-", 2)[0], "builtin": name}, &e)
		ids[name] = e.ID
		names = append(names, name)
	}
	// Names of protocols, as the engines page and the forms show them.
	var cat struct {
		Protocols map[string][]string `json:"protocols"`
	}
	s.mustCall(t, "GET", "/api/builtins", nil, &cat)
	for _, ps := range cat.Protocols {
		names = append(names, ps...)
	}
	// Longest first, so that a name is not cut by a shorter one inside it.
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })

	var rr, gomoku, draughts, live tournamentAnswer
	// Alpha-beta thinks half its move's time: 40 ms a move (as in
	// TestBrowser's round robin), not 200, for pages that only show the games
	// (at 200 ms its 120 moves were half of the test's CPU).
	s.mustCall(t, "POST", "/api/tournaments", map[string]any{
		"name": "学内リーグ", "game": "othello", "engines": []int64{ids["othello-random"], ids["othello-greedy"], ids["othello-alphabeta"]},
		"games_per_pair": 2, "move_time_ms": 40, "concurrency": 2, "start": true,
	}, &rr)
	s.mustCall(t, "POST", "/api/tournaments", map[string]any{
		"name": "五目並べ杯", "game": "gomoku", "engines": []int64{ids["gomoku-threat"], ids["gomoku-random"]},
		"games_per_pair": 1, "move_time_ms": 2000, "start": true,
	}, &gomoku)
	s.mustCall(t, "POST", "/api/tournaments", map[string]any{
		// Minimax to a fixed depth answers at once: wide clocks cost no time,
		// and no game is lost on time on a busy machine.
		"name": "チェッカー戦", "game": "checkers", "engines": []int64{ids["checkers-minimax"], ids["checkers-random"]},
		"games_per_pair": 1, "move_time_ms": 2000, "start": true,
	}, &draughts)
	// Paced, with more games than the test lasts: one is always being played
	// for the live boards; the site's cleanup cancels it.
	s.mustCall(t, "POST", "/api/tournaments", map[string]any{
		"name": "中継", "game": "othello", "engines": []int64{ids["othello-greedy"], ids["othello-random"]},
		"games_per_pair": 40, "move_time_ms": 300, "pace_ms": 150, "concurrency": 1, "start": true,
	}, &live)
	for _, tr := range []tournamentAnswer{rr, gomoku, draughts} {
		waitAPI(t, "tournament "+tr.Name+" to finish", 4*time.Minute, func() bool {
			var got tournamentAnswer
			s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d", tr.ID), nil, &got)
			return got.Status == "finished"
		})
	}
	// The longest finished game of a tournament (a game lost on time early
	// shows little).
	firstGame := func(tid int64) int64 {
		var r struct{ Games []gameAnswer }
		s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d/games?status=finished", tid), nil, &r)
		if len(r.Games) == 0 {
			t.Fatalf("tournament %d has no finished game", tid)
		}
		best := r.Games[0]
		for _, g := range r.Games {
			if g.Plies > best.Plies {
				best = g
			}
		}
		if best.Plies < 4 {
			t.Fatalf("tournament %d: the longest game has %d plies", tid, best.Plies)
		}
		return best.ID
	}
	othelloGame, gomokuGame, checkersGame := firstGame(rr.ID), firstGame(gomoku.ID), firstGame(draughts.ID)

	// Participants: 山田 accepted his invitation and submitted an engine
	// (two versions, each checked) that played a tournament; 佐藤 and 鈴木
	// have invitations they have not used yet (one for each theme).
	invite := func(name string) (int64, string, string) {
		var r invitedAnswer
		s.mustCall(t, "POST", "/api/participants", map[string]string{"name": name}, &r)
		p := r.Participants[0]
		return p.ID, p.Invitation.Code, p.Invitation.Path
	}
	_, yamadaCode, _ := invite("山田")
	_, _, satoPath := invite("佐藤")
	_, _, suzukiPath := invite("鈴木")
	yamada := member{s: s, token: accept(t, s, yamadaCode)}
	var bot engineAnswer
	if code := yamada.upload(t, "POST", "/api/engines", map[string]any{"name": "yamada-bot", "game": "othello", "protocol": "othello-move", "command": studentCommand}, studentEngine(t, "othello-random"), &bot); code != 201 {
		t.Fatalf("山田's engine: status %d", code)
	}
	waitCheck(t, yamada, bot.ID, 1)
	if code := yamada.upload(t, "PUT", fmt.Sprintf("/api/engines/%d", bot.ID), map[string]any{"protocol": "othello-move", "command": studentCommand}, studentEngine(t, "othello-greedy"), nil); code != 200 {
		t.Fatalf("山田's new version: status %d", code)
	}
	if c := waitCheck(t, yamada, bot.ID, 2); c.Result == nil || !c.Result.OK {
		t.Fatalf("山田's engine's check: %+v", c)
	}
	names = append(names, "yamada-bot")
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	var class tournamentAnswer
	s.mustCall(t, "POST", "/api/tournaments", map[string]any{
		"name": "授業の大会", "game": "othello", "engines": []int64{bot.ID, ids["othello-random"]},
		"games_per_pair": 2, "move_time_ms": 2000, "start": true,
	}, &class)
	waitAPI(t, "tournament "+class.Name+" to finish", 4*time.Minute, func() bool {
		var got tournamentAnswer
		s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d", class.ID), nil, &got)
		return got.Status == "finished"
	})
	// A deadline ahead: the engines page says until when submissions are open.
	s.mustCall(t, "PUT", "/api/submissions", map[string]any{"close_at": time.Now().Add(48 * time.Hour).Format(time.RFC3339)}, nil)

	if _, err := chromedp.Call(b.ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(b.ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": "ja"}}); err != nil {
		t.Fatal(err)
	}
	theme := func(dark bool) {
		v := "light"
		if dark {
			v = "dark"
		}
		if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}}); err != nil {
			t.Fatal(err)
		}
	}
	// A 400 or 403 answer the page asked for (an empty form, a wrong token)
	// is logged by the browser; it is not a fault of the page.
	expected := func(e string) bool {
		return strings.Contains(e, "status of 400") || strings.Contains(e, "status of 403") || strings.Contains(e, "status of 404") || strings.Contains(e, "status of 409")
	}

	type visit struct {
		path, ready string
	}
	pages := []visit{
		{"/", `document.querySelectorAll('#tournaments tbody tr').length >= 4 && document.querySelector('#live-games .game-card .b-surface') && document.querySelector('#live-status').dataset.state === 'open'`},
		{fmt.Sprintf("/tournaments/%d", rr.ID), `document.querySelectorAll('#standings tbody tr').length === 3 && document.querySelectorAll('#games tbody tr').length === 6 && document.querySelector('#chart .c-line') && !document.querySelector('#pairs-section').hidden && document.querySelectorAll('#crosstable tbody tr').length === 3`},
		{fmt.Sprintf("/tournaments/%d", live.ID), `document.querySelectorAll('#standings tbody tr').length === 2 && document.querySelector('#running .game-card .b-surface')`},
		{fmt.Sprintf("/games/%d", othelloGame), `document.querySelector('#result .result-sub').textContent !== '' && document.querySelectorAll('#moves li').length >= 4 && document.querySelector('#logs').textContent !== '–'`},
		{fmt.Sprintf("/games/%d", gomokuGame), `document.querySelector('#result .result-sub').textContent !== '' && document.querySelectorAll('#moves li').length >= 4`},
		{fmt.Sprintf("/games/%d", checkersGame), `document.querySelector('#result .result-sub').textContent !== '' && document.querySelector('#board .b-sq')`},
		{"/engines", `document.querySelectorAll('#engines tbody tr').length === 8 && document.querySelector('#engine-count').textContent !== '' && document.querySelector('#submissions-state').textContent !== ''`},
		// An engine page: a participant's engine with two versions and its
		// games; a built-in's with several tournaments and opponents.
		{fmt.Sprintf("/engines/%d", bot.ID), `document.body.dataset.loaded === 'true' && document.querySelectorAll('#engine-versions tbody tr').length === 2 && document.querySelectorAll('#engine-games tbody tr').length === 2`},
		{fmt.Sprintf("/engines/%d", ids["othello-greedy"]), `document.body.dataset.loaded === 'true' && document.querySelectorAll('#engine-tournaments tbody tr').length === 2 && document.querySelectorAll('#engine-opponents tbody tr').length === 2`},
		// The participants page: its table for the admin, a hint for a guest.
		{"/participants", `document.body.classList.contains('admin') ? document.querySelectorAll('#participants tbody tr').length >= 3 && document.querySelector('#lock-state').textContent !== '' : !!document.querySelector('.guest-only')`},
		{"/workers", `document.querySelector('#workers-title')`},
		{"/no/such/page", `document.querySelector('#error-message')`},
		{"/tournaments/abc", `document.querySelector('#error-message')`},
		{"/games/999999", `document.querySelector('#error-message')`},
		{"/engines/999999", `document.querySelector('#error-message')`},
	}
	readAll := func(t *testing.T, mode string, contrast bool) {
		for i, p := range pages {
			b.open(t, p.path)
			if lang := evalJS[string](t, b, `document.documentElement.lang`); lang != "ja" {
				t.Fatalf("%s: <html lang=%q>, want ja (Accept-Language: ja)", p.path, lang)
			}
			b.waitJS(t, p.path+" filled", p.ready, 90*time.Second)
			if strings.HasPrefix(p.path, "/games/") && !strings.Contains(p.path, "999999") {
				// Mid-game too: the move shown, a move highlighted in the list.
				// Clicked once the game's facts, above the list, are in: a
				// click while they arrive can land beside the move (seen in
				// CI under load).
				b.waitJS(t, p.path+" facts", `document.body.dataset.loaded === 'true'`, 30*time.Second)
				b.run(t, "a move", 15*time.Second, chromedp.Click(chromedp.CSS(`#moves button[data-ply="3"]`)))
				b.waitJS(t, "ply 3", `document.querySelector('#current-move').textContent !== '' && +document.querySelector('#ply').textContent === 3`, 15*time.Second)
			}
			checkPage(t, b, mode+" "+p.path, names, contrast)
			b.noErrors(t, mode+" "+p.path, expected)
			if i < 6 && (mode == "admin dark" || mode == "guest light") {
				b.screenshot(t, fmt.Sprintf("ja-%s-%d", strings.ReplaceAll(mode, " ", "-"), i))
			}
		}
		// A game being played: clocks, the live badge.
		liveGameOf(t, s, b, live.ID)
		checkPage(t, b, mode+" live game", names, contrast)
		b.noErrors(t, mode+" live game", expected)
	}

	t.Run("Guest", func(t *testing.T) {
		theme(false)
		readAll(t, "guest light", true)
		// The sign-in dialog and its error.
		b.open(t, "/engines")
		b.run(t, "sign in", 30*time.Second, chromedp.Click(chromedp.CSS("#sign-in")), chromedp.WaitVisible(chromedp.CSS("#token-input")),
			chromedp.Click(chromedp.CSS(`#token-form button[type=submit]`)))
		b.waitJS(t, "the empty-token message", `document.querySelector('.field-error[data-field=token]').textContent !== ''`, 15*time.Second)
		if got := evalJS[string](t, b, `document.querySelector('.field-error[data-field=token]').textContent`); got != "トークンを入力してください。" {
			t.Errorf("empty token: %q", got)
		}
		checkPage(t, b, "sign-in dialog", names, true)
		b.run(t, "a wrong token", 30*time.Second, chromedp.SendKeys(chromedp.CSS("#token-input"), "not-the-token"),
			chromedp.Click(chromedp.CSS(`#token-form button[type=submit]`)))
		b.waitJS(t, "the wrong-token message", `document.querySelector('.field-error[data-field=token]').textContent === 'このトークンは、有効な参加者のトークン（tkp_ で始まるもの）でも管理者のトークンでもありません。'`, 15*time.Second)
		evalJS[chromedp.Void](t, b, `document.querySelector('#token-input').value = ''`)
		b.run(t, "sign in", 30*time.Second, chromedp.SendKeys(chromedp.CSS("#token-input"), browserToken),
			chromedp.Click(chromedp.CSS(`#token-form button[type=submit]`)))
		b.waitJS(t, "admin mode", `document.body.classList.contains('admin') && !document.querySelector('#token-dialog').open`, 15*time.Second)
		b.noErrors(t, "sign in", expected)
	})

	adminPages := func(t *testing.T, mode string) {
		readAll(t, mode, true)
		// The new-tournament form, sent empty: every field's error, in Japanese.
		b.open(t, "/")
		evalJS[chromedp.Void](t, b, `document.querySelector('#new-tournament').open = true`)
		b.waitJS(t, "the engine choice", `document.querySelectorAll('#t-engines input').length === 4`, 30*time.Second)
		b.run(t, "send the empty form", 15*time.Second, chromedp.Click(chromedp.CSS(`#tournament-form button[type=submit]`)))
		b.waitJS(t, "the form's errors", `document.querySelector('#tournament-form .field-error[data-field=name]').textContent !== ''`, 30*time.Second)
		// The code's message, and beside it the server's own sentence marked
		// as English, with its facts (issue 37).
		if got := evalJS[string](t, b, `document.querySelector('#tournament-form .field-error[data-field=name]').textContent`); !strings.HasPrefix(got, "この値は使えません。") {
			t.Errorf("the name's error: %q, want the message for the code invalid first", got)
		}
		if got := evalJS[string](t, b, `document.querySelector('#tournament-form .field-error[data-field=name] q[lang=en]')?.textContent || ''`); !strings.Contains(got, "name: ") {
			t.Errorf("the name's error: the server's sentence beside it is %q", got)
		}
		checkPage(t, b, mode+" new tournament form", names, true)
		// Engines: the form sent empty, and a check of an engine.
		b.open(t, "/engines")
		b.waitJS(t, "the engines", `document.querySelectorAll('#engines tbody tr').length === 8 && document.querySelector('#e-protocol option')`, 30*time.Second)
		b.run(t, "send the empty engine form", 15*time.Second, chromedp.Click(chromedp.CSS(`#e-submit`)))
		b.waitJS(t, "the engine form's errors", `[...document.querySelectorAll('#engine-form .field-error')].some((e) => e.textContent !== '')`, 30*time.Second)
		b.run(t, "check an engine", 15*time.Second, chromedp.Click(chromedp.CSS(fmt.Sprintf(`tr[data-engine-id="%d"] button.check`, ids["othello-greedy"]))))
		b.waitJS(t, "the check's answer", `document.querySelector('#check-result.ok, #check-result.failed') && document.querySelector('#check-message').textContent !== ''`, 90*time.Second)
		checkPage(t, b, mode+" engine form and check", names, true)
		b.run(t, "built-in", 15*time.Second, chromedp.Click(chromedp.CSS("#e-source-builtin")))
		b.waitJS(t, "the built-in's description", `document.querySelector('#e-builtin-about').textContent !== ''`, 15*time.Second)
		checkPage(t, b, mode+" built-in engine form", names, true)
		// Participants: one added with the form shows its invitation link;
		// the deadline form sent empty says what it needs.
		b.open(t, "/participants")
		b.waitJS(t, "the participants", `document.querySelectorAll('#participants tbody tr').length >= 3`, 30*time.Second)
		newName := map[string]string{"admin light": "田中", "admin dark": "高橋"}[mode]
		b.run(t, "add a participant", 15*time.Second, chromedp.SendKeys(chromedp.CSS("#p-name"), newName), chromedp.Click(chromedp.CSS("#p-add")))
		b.waitJS(t, "the invitation link", fmt.Sprintf(`!!document.querySelector('#links-table tr[data-name=%q] a.invite-link')`, newName), 15*time.Second)
		b.run(t, "send the empty deadline", 15*time.Second, chromedp.Click(chromedp.CSS("#lock-set")))
		if got := evalJS[string](t, b, `document.querySelector('#lock-form .field-error[data-field=close_at]').textContent`); got != "日時を選んでください。" {
			t.Errorf("the empty deadline's error: %q", got)
		}
		// A CSV with a name twice: the error names its line, in Japanese.
		badCSV := filepath.Join(t.TempDir(), "class.csv")
		if err := os.WriteFile(badCSV, []byte("佐藤\n鈴木\n佐藤\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		b.run(t, "add a CSV with a name twice", 30*time.Second,
			chromedp.SetUploadFiles(chromedp.CSS("#p-csv"), []string{badCSV}), chromedp.Click(chromedp.CSS("#p-csv-add")))
		b.waitJS(t, "the CSV's error", `document.querySelector('.field-error[data-field=csv]').textContent !== ''`, 30*time.Second)
		if got := evalJS[string](t, b, `document.querySelector('.field-error[data-field=csv]').textContent`); !strings.HasPrefix(got, "3 行目: この CSV は使えません。") {
			t.Errorf("the CSV's error: %q, want it on line 3", got)
		}
		checkPage(t, b, mode+" participants with a new link", names, true)
		b.noErrors(t, mode+" forms", expected)
	}
	t.Run("AdminLight", func(t *testing.T) {
		theme(false)
		adminPages(t, "admin light")
	})
	t.Run("AdminDark", func(t *testing.T) {
		theme(true)
		if !evalJS[bool](t, b, `matchMedia('(prefers-color-scheme: dark)').matches`) {
			t.Fatal("dark mode is not emulated")
		}
		adminPages(t, "admin dark")
		b.open(t, "/")
		if bg := evalJS[string](t, b, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(15, 17, 21)" {
			t.Errorf("dark page background %s, want the dark theme's", bg)
		}
	})
	t.Run("GuestDark", func(t *testing.T) {
		theme(true)
		b.open(t, "/")
		signOut(t, b)
		readAll(t, "guest dark", true)
	})

	// A participant: the invitation page before and after accepting it, and
	// the engines page signed in with their own engine and its check.
	participant := func(t *testing.T, mode, invitePath, welcome string) {
		b.open(t, invitePath)
		b.waitJS(t, "the invitation", `document.documentElement.lang === 'ja' && !!document.querySelector('#invite-accept')`, 30*time.Second)
		checkPage(t, b, mode+" invitation", names, true)
		b.run(t, "accept", 30*time.Second, chromedp.Click(chromedp.CSS("#invite-accept")))
		b.waitJS(t, "the token", `document.querySelector('#invite-token').textContent.startsWith('tkp_')`, 30*time.Second)
		if got := evalJS[string](t, b, `document.querySelector('#invite-welcome').textContent`); got != welcome {
			t.Errorf("%s: welcome %q, want %q", mode, got, welcome)
		}
		checkPage(t, b, mode+" invitation accepted", names, true)
		b.noErrors(t, mode+" invitation", expected)
		// 山田 signs in with his token and reads the engines page.
		signOut(t, b)
		b.open(t, "/engines")
		signInAs(t, b, yamada.token)
		row := fmt.Sprintf(`document.querySelector('#engines tr[data-engine-id="%d"]')`, bot.ID)
		b.waitJS(t, "his engine's check", `document.querySelectorAll('#engines tbody tr').length === 8 && `+row+`?.querySelector('.check-cell').dataset.status === 'done' && document.querySelector('#submissions-state').textContent !== ''`, 30*time.Second)
		if got := evalJS[string](t, b, row+`.querySelector('.check-cell').textContent`); !strings.HasPrefix(got, "合格：") {
			t.Errorf("%s: the check cell says %q, want a pass in Japanese", mode, got)
		}
		if got := evalJS[string](t, b, row+`.querySelector('.owner').textContent`); got != "山田" {
			t.Errorf("%s: the owner cell says %q", mode, got)
		}
		// A new version: the form says which engine it replaces.
		b.run(t, "new version", 15*time.Second, chromedp.Click(chromedp.CSS(fmt.Sprintf(`tr[data-engine-id="%d"] button.replace`, bot.ID))))
		b.waitJS(t, "the replace note", `!document.querySelector('#replace-note').hidden`, 15*time.Second)
		checkPage(t, b, mode+" participant engines page", names, true)
		b.noErrors(t, mode+" participant engines page", expected)
		signOut(t, b)
	}
	t.Run("ParticipantLight", func(t *testing.T) {
		theme(false)
		// An invitation code that is not valid, in Japanese.
		b.open(t, "/invite/not-a-code")
		b.run(t, "accept a bad code", 30*time.Second, chromedp.Click(chromedp.CSS("#invite-accept")))
		b.waitJS(t, "the error", `document.querySelector('#invite-error').textContent !== ''`, 15*time.Second)
		if got := evalJS[string](t, b, `document.querySelector('#invite-error').textContent`); !strings.HasPrefix(got, "この招待コードは無効です") {
			t.Errorf("a bad invitation code: %q", got)
		}
		checkPage(t, b, "light bad invitation", names, true)
		participant(t, "participant light", satoPath, "ようこそ、佐藤 さん。ログインしました。")
	})
	t.Run("ParticipantDark", func(t *testing.T) {
		theme(true)
		participant(t, "participant dark", suzukiPath, "ようこそ、鈴木 さん。ログインしました。")
		// After the deadline: the engines page says so, and a withdrawal is
		// refused with the deadline's message in Japanese.
		s.mustCall(t, "PUT", "/api/submissions", map[string]any{"locked": true}, nil)
		b.open(t, "/engines")
		signInAs(t, b, yamada.token)
		del := fmt.Sprintf(`tr[data-engine-id="%d"] button.delete`, bot.ID)
		b.waitJS(t, "the closed submissions", `document.querySelector('#submissions-state').textContent.startsWith('提出は') && !!document.querySelector(`+fmt.Sprintf("%q", del)+`)`, 30*time.Second)
		b.run(t, "withdraw", 15*time.Second, chromedp.Click(chromedp.CSS(del)), chromedp.Click(chromedp.CSS(del)))
		b.waitJS(t, "the refusal", `document.querySelector('#engines-error').textContent !== ''`, 15*time.Second)
		if got := evalJS[string](t, b, `document.querySelector('#engines-error').textContent`); !strings.HasPrefix(got, "提出は締め切られました") {
			t.Errorf("a withdrawal after the deadline: %q", got)
		}
		checkPage(t, b, "participant dark after the deadline", names, true)
		b.noErrors(t, "participant dark after the deadline", expected)
		signOut(t, b)
		s.mustCall(t, "PUT", "/api/submissions", map[string]any{"locked": false}, nil)
	})
	theme(false)
}

// TestBrowserLanguageSwitch: Accept-Language picks the language; the switch
// in the header changes it, and the choice is kept in a cookie that wins
// over Accept-Language on the next pages.
func TestBrowserLanguageSwitch(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	s := startSite(t)
	b := startBrowser(t, s)
	langOf := func() string { return evalJS[string](t, b, `document.documentElement.lang`) }

	if _, err := chromedp.Call(b.ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	setAccept := func(v string) {
		if _, err := chromedp.Call(b.ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": v}}); err != nil {
			t.Fatal(err)
		}
	}
	setAccept("en-US,en;q=0.9")
	b.open(t, "/engines")
	if got := langOf(); got != "en" {
		t.Fatalf("Accept-Language en: lang %q", got)
	}
	if got := evalJS[string](t, b, `document.querySelector('#engines-title').textContent`); got != "Engines" {
		t.Errorf("English heading %q", got)
	}
	setAccept("ja,en;q=0.5")
	b.open(t, "/engines")
	if got := langOf(); got != "ja" {
		t.Fatalf("Accept-Language ja: lang %q", got)
	}
	if got := evalJS[string](t, b, `document.querySelector('#engines-title').textContent`); got != "エンジン" {
		t.Errorf("Japanese heading %q", got)
	}
	b.waitJS(t, "the engine count", `document.querySelector('#engine-count').textContent === '0 個のエンジン'`, 30*time.Second)

	// The switch: to English, though the browser asks for Japanese.
	b.run(t, "switch to English", 15*time.Second, chromedp.Click(chromedp.CSS("#lang-switch")))
	b.waitJS(t, "the English page", `document.documentElement.lang === 'en' && document.querySelector('#engines-title')?.textContent === 'Engines'`, 30*time.Second)
	if c := evalJS[string](t, b, `document.cookie`); !strings.Contains(c, "taikai_lang=en") {
		t.Errorf("cookies %q: no taikai_lang=en", c)
	}
	b.open(t, "/")
	if got := langOf(); got != "en" {
		t.Errorf("the next page after switching to English: lang %q", got)
	}
	b.waitJS(t, "the English script texts", `document.querySelector('#live-status').textContent === 'live'`, 30*time.Second)
	// And back to Japanese.
	b.run(t, "switch to Japanese", 15*time.Second, chromedp.Click(chromedp.CSS("#lang-switch")))
	b.waitJS(t, "the Japanese page", `document.documentElement.lang === 'ja' && document.querySelector('#live-status').textContent === '中継中'`, 30*time.Second)
	setAccept("en")
	b.open(t, "/workers")
	if got := langOf(); got != "ja" {
		t.Errorf("the cookie says ja, Accept-Language en: lang %q", got)
	}
	b.noErrors(t, "language switch", nil)
}

// TestBrowserJapaneseWorkers reads the workers page of a server whose games
// a worker plays, in Japanese, in both themes, while the worker plays.
func TestBrowserJapaneseWorkers(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	s := startSiteWith(t, true)
	b := startBrowser(t, s)
	startPacedTournament(t, s, "ワーカー戦", 4)
	if _, err := chromedp.Call(b.ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(b.ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": "ja"}}); err != nil {
		t.Fatal(err)
	}
	names := []string{"browser-host", "browser-w1", "othello-board", "greedy", "random"}
	for _, dark := range []bool{false, true} {
		v, mode := "light", "light"
		if dark {
			v, mode = "dark", "dark"
		}
		if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}}); err != nil {
			t.Fatal(err)
		}
		b.open(t, "/workers")
		b.waitJS(t, "the worker playing a game", `!!document.querySelector('tr[data-worker="browser-w1"] a[href^="/games/"]')`, 2*time.Minute)
		// The table as the script redraws it, with the time in Japanese.
		b.waitJS(t, "a refresh", `document.querySelector('#queue').textContent.includes('待ち')`, 15*time.Second)
		checkPage(t, b, mode+" /workers", names, true)
		href := evalJS[string](t, b, `document.querySelector('tr[data-worker="browser-w1"] a[href^="/games/"]').getAttribute('href')`)
		b.open(t, href)
		b.waitJS(t, "the result", `document.querySelector('#result').textContent !== ''`, 2*time.Minute)
		b.open(t, href)
		b.waitJS(t, "who played it", `(document.querySelector('#worker')?.textContent ?? '').includes('ワーカー browser-w1')`, 30*time.Second)
		checkPage(t, b, mode+" game played on a worker", names, true)
		b.noErrors(t, mode+" workers", nil)
	}
}
