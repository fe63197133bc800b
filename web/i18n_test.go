package web

import (
	"html/template"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/text/feature/plural"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/gomoku"
	"github.com/taikai-dev/taikai/tournament"
)

func testCatalogs(t *testing.T) map[string]*catalog {
	t.Helper()
	cats, err := loadCatalogs(catalogFiles)
	if err != nil {
		t.Fatal(err)
	}
	return cats
}

// Every message is in every language, with the same placeholders in every
// form, and none is empty.
func TestCatalogsMatch(t *testing.T) {
	langsRaw := map[string]map[string]message{}
	for _, lang := range langCodes {
		_, msgs, err := readCatalog(catalogFiles, lang)
		if err != nil {
			t.Fatal(err)
		}
		langsRaw[lang] = msgs
	}
	en := langsRaw["en"]
	if len(en) < 100 {
		t.Fatalf("the English catalog has %d messages", len(en))
	}
	holes := func(m message) ([]string, bool) {
		if m.forms == nil {
			return placeholders(m.text), m.text != ""
		}
		var first []string
		for i, f := range []plural.Form{plural.Zero, plural.One, plural.Two, plural.Few, plural.Many, plural.Other} {
			text, ok := m.forms[f]
			if !ok {
				continue
			}
			if text == "" {
				return nil, false
			}
			got := slices.Compact(placeholders(text))
			if first == nil {
				first = got
			} else if !slices.Equal(got, first) {
				t.Errorf("plural form %d has placeholders %v, another %v", i, got, first)
			}
		}
		return first, true
	}
	for _, lang := range langCodes {
		msgs := langsRaw[lang]
		for key, m := range msgs {
			if _, ok := en[key]; !ok {
				t.Errorf("%s has %q, English does not", lang, key)
			}
			got, ok := holes(m)
			if !ok {
				t.Errorf("%s %q is empty", lang, key)
			}
			want, _ := holes(en[key])
			if !slices.Equal(slices.Compact(got), slices.Compact(want)) {
				t.Errorf("%s %q has placeholders %v, English %v", lang, key, got, want)
			}
			if m.forms != nil {
				if _, ok := m.forms[plural.Other]; !ok {
					t.Errorf("%s %q has no \"other\" form", lang, key)
				}
			}
		}
		for key := range en {
			if _, ok := msgs[key]; !ok {
				t.Errorf("%s lacks %q", lang, key)
			}
		}
	}
	// English counts things: a plural message has its "one".
	for key, m := range en {
		if m.forms != nil {
			if _, ok := m.forms[plural.One]; !ok {
				t.Errorf("en %q has plural forms but no \"one\"", key)
			}
		}
	}
}

func TestCatalogText(t *testing.T) {
	cats := testCatalogs(t)
	for _, c := range []struct {
		lang, key string
		args      []any
		want      string
	}{
		{"en", "engines.count", []any{"count", 1}, "1 engine"},
		{"en", "engines.count", []any{"count", 3}, "3 engines"},
		{"en", "engines.count", []any{"count", 0}, "0 engines"},
		{"ja", "engines.count", []any{"count", 1}, "1 個のエンジン"},
		{"en", "error.no_game", []any{"id", "x"}, `There is no game "x".`},
		{"ja", "game.title", []any{"id", 3, "black", "a", "white", "b"}, "対局 3：a 対 b"},
	} {
		got, err := cats[c.lang].text(c.key, c.args...)
		if err != nil || got != c.want {
			t.Errorf("%s %s %v = %q, %v; want %q", c.lang, c.key, c.args, got, err, c.want)
		}
	}
	// A page's message escapes its text and its values, but not HTML made by code.
	got, err := cats["en"].html("layout.token_hint", "command", template.HTML("<code>x</code>"), "env", "<b>")
	if err != nil || !strings.Contains(string(got), "<code>x</code>") || !strings.Contains(string(got), "&lt;b&gt;") || !strings.Contains(string(got), "The server keeps it") {
		t.Errorf("html = %q, %v", got, err)
	}
	for _, bad := range [][]any{{"count"}, {"nocount", 1}, {1, 2}} {
		if _, err := cats["en"].text("engines.count", bad...); err == nil {
			t.Errorf("engines.count with %v: no error", bad)
		}
	}
	if _, err := cats["en"].text("no.such.key"); err == nil {
		t.Error("a missing key: no error")
	}
}

var (
	templateKey = regexp.MustCompile(`[{(]t "([^"]+)"`)
	goKey       = regexp.MustCompile(`\.tr(?:HTML)?\(r, "([^"]+)"`)
	jsKey       = regexp.MustCompile(`\b(?:t|tNodes)\('([^']+)'`)
)

// Every key the templates, the Go code and the scripts name is in the
// catalog, and so is every value of the enumerations they name by prefix.
func TestCatalogKeysUsed(t *testing.T) {
	en := testCatalogs(t)["en"]
	used := map[string]string{} // key -> file
	scan := func(glob string, re *regexp.Regexp) {
		files, err := filepath.Glob(glob)
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v files, %v", glob, len(files), err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				used[m[1]] = f
			}
		}
	}
	scan("templates/*.html", templateKey)
	scan("*.go", goKey)
	scan("static/*.js", jsKey)
	if len(used) < 100 {
		t.Fatalf("found only %d keys in use: the patterns are wrong", len(used))
	}
	for key, file := range used {
		if !en.has(key) {
			t.Errorf("%s uses %q, which no catalog has", file, key)
		}
	}

	enums := map[string][]string{
		"status":        {tournament.StatusPending, tournament.StatusRunning, tournament.StatusPaused, tournament.StatusFinished, tournament.StatusCancelled, tournament.GameScheduled, tournament.GameRunning, tournament.GameFinished, tournament.GameAborted},
		"reason":        reasons,
		"result":        {"black", "white", "draw"},
		"color":         {"black", "white"},
		"conn":          {"connecting", "open", "reconnecting"},
		"gamename":      games.Names(),
		"builtin":       engines.BuiltinNames(),
		"cause":         {games.CauseInvalidMove, games.CauseInvalidCommand, games.CauseMaxErrors, games.CauseFlood},
		"sandbox.state": {"on", "off", "unavailable", ""},
		"form.format":   {tournament.KindRoundRobin, tournament.KindGauntlet, "swiss", "knockout", tournament.KindLeague},
		"format":        {tournament.KindRoundRobin, tournament.KindGauntlet, tournament.KindSwiss, tournament.KindKnockout, tournament.KindMatch, tournament.KindLeague},
		// participantJSON.Status
		"participants.status": {"invited", "active", "expired"},
	}
	for code := range statusOf {
		enums["apierror"] = append(enums["apierror"], code)
	}
	for r := games.Refusal(1); r.String() != "refused"; r++ {
		enums["violation"] = append(enums["violation"], r.String())
	}
	enums["violation"] = append(enums["violation"], "refused")
	for f := gomoku.DoubleThree; f.String() != ""; f++ {
		enums["foul"] = append(enums["foul"], strings.ReplaceAll(f.String(), " ", "_"))
	}
	if len(games.Names()) < 3 {
		t.Fatalf("games registered: %v", games.Names())
	}
	for _, name := range games.Names() {
		g, _ := games.Lookup(name)
		enums["rule"] = append(enums["rule"], g.Rules...)
		v := g.View(g.Size)
		enums["pieces"] = append(enums["pieces"], v.Pieces)
		if v.Score {
			enums["score"] = append(enums["score"], v.Pieces)
		}
		if v.Win != "" {
			enums["gameend."+name] = append(enums["gameend."+name], "win")
		}
		if v.Draw != "" {
			enums["gameend."+name] = append(enums["gameend."+name], "draw")
		}
	}
	for prefix, values := range enums {
		for _, v := range values {
			if key := prefix + "." + v; !en.has(key) {
				t.Errorf("no message %q for the %s %q", key, prefix, v)
			}
		}
	}
}

// Every page renders in every language: a template naming a missing key or
// placeholder fails here.
func TestPagesInEveryLanguage(t *testing.T) {
	ps := newPageSite(t)
	tid, gid, eid := strconv.FormatInt(ps.tid, 10), strconv.FormatInt(ps.gameID, 10), strconv.FormatInt(ps.engineID, 10)
	for _, lang := range langCodes {
		for _, path := range []string{"/", "/?tv=1", "/engines", "/engines/" + eid, "/engines/9999", "/participants", "/invite/some-code", "/workers", "/tournaments/" + tid, "/games/" + gid, "/games/9999", "/no/such/page"} {
			res, body := ps.get(t, path, "Cookie", LangCookie+"="+lang)
			if res.StatusCode != 200 && res.StatusCode != 404 {
				t.Errorf("%s %s: status %d", lang, path, res.StatusCode)
			}
			if !strings.Contains(body, `<html lang="`+lang+`">`) {
				t.Errorf("%s %s: no <html lang=%q>", lang, path, lang)
			}
			if got := res.Header.Get("Content-Language"); got != lang {
				t.Errorf("%s %s: Content-Language %q", lang, path, got)
			}
			if !strings.Contains(res.Header.Get("Vary"), "Accept-Language") {
				t.Errorf("%s %s: Vary %q", lang, path, res.Header.Get("Vary"))
			}
		}
	}
	_, body := ps.get(t, "/tournaments/"+tid, "Accept-Language", "ja")
	for _, want := range []string{"<title>Spring &lt;Cup&gt; &amp; Co · taikai</title>", "順位表", "対戦表", ">開始前<"} {
		if !strings.Contains(body, want) {
			t.Errorf("Japanese tournament page lacks %q", want)
		}
	}
	_, body = ps.get(t, "/games/"+gid, "Accept-Language", "ja")
	if want := "<title>対局 " + gid + "：othello-random 対 othello-greedy · taikai</title>"; !strings.Contains(body, want) {
		t.Errorf("Japanese game page: title %q, want %q", title(body), want)
	}
	if !strings.Contains(body, `<strong id="ply">0</strong> / <span id="ply-total">0</span> 手`) {
		t.Error("Japanese game page: the ply counter's elements are not in its sentence")
	}
	_, body = ps.get(t, "/engines/"+eid, "Accept-Language", "ja")
	for _, want := range []string{"<title>エンジン othello-random · taikai</title>", "レーティング", `コマンド：<code translate="no">taikai engine othello-random</code>`, `<span translate="no">BayesElo</span>`} {
		if !strings.Contains(body, want) {
			t.Errorf("Japanese engine page lacks %q", want)
		}
	}
	_, body = ps.get(t, "/tournaments/abc", "Accept-Language", "ja")
	if !strings.Contains(body, `大会「<code translate="no">abc</code>」はありません。`) {
		t.Errorf("Japanese not-found page: %q", body)
	}
}

// The language comes from the switch's cookie, else from Accept-Language.
func TestLangOf(t *testing.T) {
	for _, c := range []struct {
		accept, cookie, want string
	}{
		{"", "", "en"},
		{"ja", "", "ja"},
		{"ja-JP,ja;q=0.9,en-US;q=0.8,en;q=0.7", "", "ja"},
		{"en-US,en;q=0.9,ja;q=0.8", "", "en"},
		{"en;q=0.5, ja", "", "ja"},
		{"fr-FR, de", "", "en"},
		{"zh-CN, ja;q=0.5", "", "ja"},
		{"not a header;;", "", "en"},
		{"ja", "en", "en"},
		{"en", "ja", "ja"},
		{"ja", "fr", "ja"},
		{"", "<script>", "en"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if c.accept != "" {
			r.Header.Set("Accept-Language", c.accept)
		}
		if c.cookie != "" {
			r.AddCookie(&http.Cookie{Name: LangCookie, Value: c.cookie})
		}
		if got := langOf(r); got != c.want {
			t.Errorf("Accept-Language %q, cookie %q: %s, want %s", c.accept, c.cookie, got, c.want)
		}
	}
}
