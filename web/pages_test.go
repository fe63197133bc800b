package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
)

const pagesToken = "page-test-token"

// pageSite is a server on a fresh database with two engines, a tournament
// (not started) and one stored game.
type pageSite struct {
	srv      *httptest.Server
	tid      int64
	gameID   int64
	engineID int64
}

func newPageSite(t *testing.T) *pageSite {
	t.Helper()
	ctx := context.Background()
	db, err := storage.Open(ctx, t.TempDir()+"/taikai.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var ids []int64
	for _, name := range []string{"othello-random", "othello-greedy"} {
		e := engines.Engine{Name: name, Game: "othello", Protocol: "othello-board", Builtin: name}
		if err := db.CreateEngine(ctx, &e); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	tr := &tournament.Tournament{Name: "Spring <Cup> & Co", Engines: ids, Settings: tournament.Settings{Game: "othello", MoveTimeMS: 500}}
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateTournament(ctx, tr); err != nil {
		t.Fatal(err)
	}
	gid, err := db.StartGame(ctx, tr, tournament.Pairing{Index: 0, Black: 0, White: 1}, ids[0], ids[1], 1)
	if err != nil {
		t.Fatal(err)
	}
	hub := NewLive(db, nil)
	t.Cleanup(hub.Close)
	s := &Server{DB: db, Live: hub, Token: pagesToken, DataDir: t.TempDir(), Service: &tournament.Service{Store: db, Sink: hub}}
	h, err := s.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &pageSite{srv: srv, tid: tr.ID, gameID: gid, engineID: ids[0]}
}

// signIn signs in with token and returns the session cookie's value.
func (ps *pageSite) signIn(t *testing.T, token string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, ps.srv.URL+"/api/session", strings.NewReader(`{"token":"`+token+`"}`))
	req.Header.Set(csrfHeader, csrfValue)
	res, err := ps.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for _, c := range res.Cookies() {
		if c.Name == SessionCookie && c.Value != "" {
			return c.Value
		}
	}
	t.Fatalf("sign-in: %d, no session cookie", res.StatusCode)
	return ""
}

func (ps *pageSite) get(t *testing.T, path string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ps.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := ps.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(body)
}

var titleRE = regexp.MustCompile(`<title>([^<]*)</title>`)

func title(body string) string {
	m := titleRE.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}

func TestPagesTitles(t *testing.T) {
	ps := newPageSite(t)
	tid, gid := strconv.FormatInt(ps.tid, 10), strconv.FormatInt(ps.gameID, 10)
	for _, c := range []struct {
		path   string
		status int
		title  string
	}{
		{"/", 200, "Overview · taikai"},
		{"/?tv=1", 200, "Overview · taikai"},
		{"/engines", 200, "Engines · taikai"},
		{"/tournaments/" + tid, 200, "Spring &lt;Cup&gt; &amp; Co · taikai"},
		{"/games/" + gid, 200, "Game " + gid + ": othello-random vs othello-greedy · taikai"},
		{"/tournaments/9999", 404, "Not found · taikai"},
		{"/tournaments/abc", 404, "Not found · taikai"},
		{"/tournaments/-1", 404, "Not found · taikai"},
		{"/games/9999", 404, "Not found · taikai"},
		{"/games/0", 404, "Not found · taikai"},
		{"/no/such/page", 404, "Not found · taikai"},
	} {
		res, body := ps.get(t, c.path)
		if res.StatusCode != c.status {
			t.Errorf("GET %s: status %d, want %d", c.path, res.StatusCode, c.status)
		}
		if got := title(body); got != c.title {
			t.Errorf("GET %s: title %q, want %q", c.path, got, c.title)
		}
		if ct := res.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("GET %s: Content-Type %q", c.path, ct)
		}
		host := strings.TrimPrefix(ps.srv.URL, "http://")
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "connect-src 'self' ws://"+host+" wss://"+host+";") {
			t.Errorf("GET %s: Content-Security-Policy %q", c.path, csp)
		}
		if !strings.Contains(body, `<meta name="viewport"`) {
			t.Errorf("GET %s: no viewport meta", c.path)
		}
	}
	// The API keeps its JSON errors.
	res, body := ps.get(t, "/api/nope")
	if res.StatusCode != 404 || !strings.Contains(body, `"error"`) {
		t.Errorf("GET /api/nope: %d %s, want a JSON 404", res.StatusCode, body)
	}
}

func TestCSPHost(t *testing.T) {
	p, err := loadPages()
	if err != nil {
		t.Fatal(err)
	}
	for host, ok := range map[string]bool{"taikai.example:8080": true, "[::1]:8080": true, "a b": false, "x;script-src *": false, "": false} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Host = host
		if got := strings.Contains(p.csp(r), "ws://"); got != ok {
			t.Errorf("Host %q: websocket source in the policy = %v, want %v: %s", host, got, ok, p.csp(r))
		}
	}
}

func TestPagesData(t *testing.T) {
	ps := newPageSite(t)
	_, body := ps.get(t, "/tournaments/"+strconv.FormatInt(ps.tid, 10))
	for _, want := range []string{`id="standings"`, `id="crosstable"`, `id="chart"`, `id="games"`, `id="filter-engine"`, `id="page-data"`} {
		if !strings.Contains(body, want) {
			t.Errorf("tournament page lacks %s", want)
		}
	}
	// The tournament's JSON in the page is JSON and escapes what could end the script.
	m := regexp.MustCompile(`(?s)<script type="application/json" id="page-data">(.*?)</script>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no page data")
	}
	var tj struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(m[1]), &tj); err != nil {
		t.Fatalf("page data %q: %v", m[1], err)
	}
	if tj.ID != ps.tid || tj.Name != "Spring <Cup> & Co" {
		t.Errorf("page data = %+v", tj)
	}
	if strings.Contains(m[1], "<Cup>") {
		t.Errorf("page data has a raw <: %s", m[1])
	}
	_, body = ps.get(t, "/games/"+strconv.FormatInt(ps.gameID, 10))
	for _, want := range []string{`id="board"`, `id="ply"`, `id="result"`, `id="moves"`, `id="seek"`, `id="first"`, `id="last"`} {
		if !strings.Contains(body, want) {
			t.Errorf("game page lacks %s", want)
		}
	}
}

func TestPagesAdminClass(t *testing.T) {
	ps := newPageSite(t)
	bodyClass := regexp.MustCompile(`<body class="([^"]*)"`)
	_, body := ps.get(t, "/engines")
	if c := bodyClass.FindStringSubmatch(body)[1]; strings.Contains(c, "admin") {
		t.Errorf("without a token: body class %q", c)
	}
	_, body = ps.get(t, "/engines", "Cookie", SessionCookie+"=wrong")
	if c := bodyClass.FindStringSubmatch(body)[1]; strings.Contains(c, "admin") {
		t.Errorf("with a wrong token: body class %q", c)
	}
	_, body = ps.get(t, "/engines", "Cookie", SessionCookie+"="+pagesToken)
	if c := bodyClass.FindStringSubmatch(body)[1]; strings.Contains(c, "admin") {
		t.Errorf("with the token itself as the cookie: body class %q", c)
	}
	_, body = ps.get(t, "/engines", "Cookie", SessionCookie+"="+ps.signIn(t, pagesToken))
	if c := bodyClass.FindStringSubmatch(body)[1]; !strings.Contains(c, "admin") {
		t.Errorf("with the token: body class %q", c)
	}
	_, body = ps.get(t, "/?tv=1")
	if c := bodyClass.FindStringSubmatch(body)[1]; !strings.Contains(c, "tv") {
		t.Errorf("?tv=1: body class %q", c)
	}
}

var staticRE = regexp.MustCompile(`/static/([0-9a-f]+)/([a-z0-9.-]+)`)

func TestStaticChecksummed(t *testing.T) {
	ps := newPageSite(t)
	_, body := ps.get(t, "/")
	found := map[string]bool{}
	for _, m := range staticRE.FindAllStringSubmatch(body, -1) {
		url, hash, name := m[0], m[1], m[2]
		if found[name] {
			continue
		}
		found[name] = true
		res, content := ps.get(t, url)
		if res.StatusCode != 200 {
			t.Errorf("GET %s: %d", url, res.StatusCode)
			continue
		}
		sum := sha256.Sum256([]byte(content))
		if !strings.HasPrefix(hex.EncodeToString(sum[:]), hash) {
			t.Errorf("GET %s: the URL's checksum is not the content's", url)
		}
		if cc := res.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("GET %s: Cache-Control %q", url, cc)
		}
		wantType := map[string]string{".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml"}[name[strings.LastIndexByte(name, '.'):]]
		if ct := res.Header.Get("Content-Type"); wantType == "" || !strings.HasPrefix(ct, wantType) {
			t.Errorf("GET %s: Content-Type %q", url, ct)
		}
		if res, _ := ps.get(t, url, "If-None-Match", `"`+hash+`"`); res.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s If-None-Match: %d, want 304", url, res.StatusCode)
		}
		// Another checksum is another file: not found rather than stale content.
		if res, _ := ps.get(t, "/static/0000000000000000/"+name); res.StatusCode != 404 {
			t.Errorf("GET %s with a wrong checksum: %d, want 404", name, res.StatusCode)
		}
	}
	// The page links the stylesheet, and the import map names every module.
	for _, name := range []string{"app.css", "app.js", "board.js", "overview.js", "livegrid.js", "favicon.svg"} {
		if !found[name] {
			t.Errorf("the overview does not reference %s under a checksummed URL", name)
		}
	}
	if strings.Contains(body, "http://") || strings.Contains(body, "https://") {
		t.Errorf("the page loads something from another host")
	}
}

// siteFS is a minimal template set that parses.
func siteFS() fstest.MapFS {
	fsys := fstest.MapFS{
		"templates/layout.html": {Data: []byte(`{{define "layout"}}<title>{{template "title" .}}</title>{{template "content" .}}{{end}}`)},
		"static/app.css":        {Data: []byte(`body{}`)},
	}
	for _, name := range pageNames {
		fsys["templates/"+name+".html"] = &fstest.MapFile{Data: []byte(`{{define "title"}}t{{end}}{{define "content"}}c{{end}}`)}
	}
	return fsys
}

func TestParsePagesFailsOnBrokenTemplate(t *testing.T) {
	if _, err := parsePages(siteFS()); err != nil {
		t.Fatalf("a good template set: %v", err)
	}
	for name, change := range map[string]func(fstest.MapFS){
		"unclosed action": func(f fstest.MapFS) {
			f["templates/game.html"].Data = []byte(`{{define "title"}}t{{end}}{{define "content"}}{{if .Game}}c{{end}}`)
		},
		"unknown function": func(f fstest.MapFS) {
			f["templates/engines.html"].Data = []byte(`{{define "title"}}t{{end}}{{define "content"}}{{nosuchfunc .}}{{end}}`)
		},
		"broken layout": func(f fstest.MapFS) {
			f["templates/layout.html"].Data = []byte(`{{define "layout"}}{{template "title" .}`)
		},
		"page without content": func(f fstest.MapFS) {
			f["templates/index.html"].Data = []byte(`{{define "title"}}t{{end}}`)
		},
		"missing page":       func(f fstest.MapFS) { delete(f, "templates/tournament.html") },
		"nested static file": func(f fstest.MapFS) { f["static/img/logo.svg"] = &fstest.MapFile{Data: []byte("<svg/>")} },
	} {
		fsys := siteFS()
		change(fsys)
		if _, err := parsePages(fsys); err == nil {
			t.Errorf("%s: parsePages succeeded, want an error", name)
		}
	}
}

// The embedded set is what loadPages parses, and it parses.
func TestLoadPagesEmbedded(t *testing.T) {
	p, err := loadPages()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range pageNames {
		if p.views[name] == nil {
			t.Errorf("no view %q", name)
		}
	}
	entries, err := fs.ReadDir(assets, "static")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.static) != len(entries) {
		t.Errorf("%d static files, %d embedded", len(p.static), len(entries))
	}
}
