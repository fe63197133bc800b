package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament"
)

// assets are the dashboard's templates and static files, built into the binary.
//
//go:embed templates/*.html static
var assets embed.FS

// pageNames are the templates under templates/ that are whole pages; each is
// parsed together with layout.html and must define "title" and "content".
var pageNames = []string{"index", "tournament", "game", "engines", "workers", "error", "engine", "participants", "invite", "play"}

// pages are the dashboard's server-rendered pages and the static files they use.
type pages struct {
	views      map[string]*template.Template // English, by page name
	langViews  map[string]map[string]*template.Template
	catalogs   map[string]*catalog
	static     map[string]*asset // by file name
	scriptHash string            // CSP source of the inline import map
}

// asset is a static file served under a URL that changes with its content, so
// browsers may keep it for a year.
type asset struct {
	name  string
	hash  string // hex sha256 prefix
	body  []byte
	ctype string
}

func (a *asset) url() string { return "/static/" + a.hash + "/" + a.name }

// loadPages parses every template at start: a broken one fails the start.
func loadPages() (*pages, error) { return parsePages(assets) }

// parsePages reads templates/ and static/ from fsys.
func parsePages(fsys fs.FS) (*pages, error) {
	p := &pages{views: map[string]*template.Template{}, static: map[string]*asset{}}
	err := fs.WalkDir(fsys, "static", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		rel := strings.TrimPrefix(name, "static/")
		if strings.Contains(rel, "/") {
			// The route /static/{hash}/{name} serves one level only.
			return fmt.Errorf("%s: static files live directly in static/", name)
		}
		ctype := mime.TypeByExtension(path.Ext(rel))
		switch path.Ext(rel) {
		case ".js":
			ctype = "text/javascript; charset=utf-8"
		case ".css":
			ctype = "text/css; charset=utf-8"
		case ".svg":
			ctype = "image/svg+xml"
		}
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		p.static[rel] = &asset{name: rel, hash: hex.EncodeToString(sum[:])[:16], body: body, ctype: ctype}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("static files: %w", err)
	}
	importMap, err := p.importMap()
	if err != nil {
		return nil, err
	}
	// The import map is the only inline script that runs; it is allowed by hash.
	sum := sha256.Sum256([]byte(importMap))
	p.scriptHash = "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	cats, err := loadCatalogs(catalogFiles)
	if err != nil {
		return nil, err
	}
	p.catalogs = cats
	p.langViews = map[string]map[string]*template.Template{}
	for _, lang := range langCodes {
		views, err := p.parseViews(fsys, importMap, cats[lang])
		if err != nil {
			return nil, err
		}
		p.langViews[lang] = views
	}
	p.views = p.langViews[langCodes[0]]
	return p, nil
}

// parseViews parses every page in one language: its t function reads that
// language's catalog.
func (p *pages) parseViews(fsys fs.FS, importMap string, cat *catalog) (map[string]*template.Template, error) {
	views := map[string]*template.Template{}
	funcs := template.FuncMap{
		"static": func(name string) (string, error) {
			a, ok := p.static[name]
			if !ok {
				return "", fmt.Errorf("no static file %q", name)
			}
			return a.url(), nil
		},
		// importmap lets modules import each other by bare names ("taikai/board.js")
		// that resolve to the checksummed URLs.
		"importmap": func() template.HTML {
			return template.HTML(`<script type="importmap">` + importMap + `</script>`)
		},
		// t is a message of the page's language: {{t "key" "name" value ...}}.
		"t": cat.html,
		// code is a value shown as code inside a message.
		"code": codeHTML,
		// name is a proper name inside a message (a model, a program), in
		// no language: translate="no", as the browser test expects.
		"name": func(s string) template.HTML {
			return template.HTML(`<span translate="no">` + template.HTMLEscapeString(s) + "</span>")
		},
		// el is an element with an id inside a message, for a script to fill.
		"el": func(tag, id, text string) (template.HTML, error) {
			if tag != "span" && tag != "strong" {
				return "", fmt.Errorf("el: no %q elements", tag)
			}
			return template.HTML("<" + tag + ` id="` + template.HTMLEscapeString(id) + `">` + template.HTMLEscapeString(text) + "</" + tag + ">"), nil
		},
		// catalog is the page's messages for the scripts (a JSON script element).
		"catalog":     func() template.JS { return cat.browser },
		"reasonLabel": func(reason string) (string, error) { return cat.text("reason." + reason) },
		"add1":        func(n int64) int64 { return n + 1 },
	}
	layout, err := fs.ReadFile(fsys, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	base, err := template.New("layout.html").Funcs(funcs).Parse(string(layout))
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	for _, name := range pageNames {
		file := "templates/" + name + ".html"
		src, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, fmt.Errorf("templates: %w", err)
		}
		t, err := base.Clone()
		if err == nil {
			t, err = t.Parse(string(src))
		}
		if err != nil {
			return nil, fmt.Errorf("templates: %w", err)
		}
		for _, need := range []string{"layout", "title", "content"} {
			if t.Lookup(need) == nil {
				return nil, fmt.Errorf("templates: %s does not define %q", file, need)
			}
		}
		views[name] = t
	}
	return views, nil
}

// importMap maps "taikai/<file>.js" to each module's checksummed URL.
func (p *pages) importMap() (string, error) {
	imports := map[string]string{}
	names := make([]string, 0, len(p.static))
	for name := range p.static {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if strings.HasSuffix(name, ".js") {
			imports["taikai/"+name] = p.static[name].url()
		}
	}
	b, err := json.Marshal(map[string]any{"imports": imports})
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// view is what every page template gets.
type view struct {
	Title string // the error page's; the others' templates say their own
	Page  string
	Lang  string // "en" or "ja": the page's language (langOf)
	Admin bool
	// Participant is the signed-in participant, nil for the admin or nobody.
	Participant *participantRef
	TV          bool
	Status      int

	Tournament *tournamentJSON
	Game       *gameJSON
	Settings   *tournament.Settings
	Reasons    []string
	Games      []gameChoice
	Message    template.HTML // the error page's: a message from trHTML
	Workers    *workersJSON
	Engine     *engineJSON
	// Cluster: games are played by workers (the nav shows their page).
	Cluster bool
	// SandboxWarning, if set, is shown on every page: engines run without
	// the sandbox (--sandbox=off), or only built-ins run (unavailable).
	SandboxWarning string
	// SandboxNotice, if set, says that the sandbox holds its memory limit by
	// polling, and the command that gives the kernel's.
	SandboxNotice string
}

// gameChoice is a registered game as the forms offer it.
type gameChoice struct {
	Name, Title            string
	Rules                  string // comma-separated, the default first; "" for one rule
	Size, MinSize, MaxSize int
}

// gameChoices lists the registered games for the forms.
func gameChoices() []gameChoice {
	var out []gameChoice
	for _, name := range games.Names() {
		g, _ := games.Lookup(name)
		out = append(out, gameChoice{Name: g.Name, Title: g.Title, Rules: strings.Join(g.Rules, ","), Size: g.Size, MinSize: g.MinSize, MaxSize: g.MaxSize})
	}
	return out
}

// reasons a game can end for, in the order the games filter lists them.
var reasons = []string{
	games.ReasonNormal, games.ReasonTimeout, games.ReasonIllegal, games.ReasonDisconnect,
	games.ReasonClose, games.ReasonResign, games.ReasonNoConnect, games.ReasonCrash, games.ReasonMemory, games.ReasonAborted,
}

func (p *pages) routes(r chi.Router, s *Server) {
	r.Get("/", func(w http.ResponseWriter, r *http.Request) {
		p.render(w, r, s, "index", &view{})
	})
	r.Get("/engines", func(w http.ResponseWriter, r *http.Request) {
		p.render(w, r, s, "engines", &view{})
	})
	r.Get("/engines/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := idParam(r, "id")
		if err != nil {
			p.notFound(w, r, s, p.trHTML(r, "error.no_engine", "id", codeHTML(chi.URLParam(r, "id"))))
			return
		}
		row, err := s.DB.EngineRow(r.Context(), id)
		if err != nil {
			p.fail(w, r, s, err, p.trHTML(r, "error.no_engine", "id", id))
			return
		}
		e := s.engineJSON(row)
		if row.OwnerID != 0 {
			// Its owner: the page shows its last check to them (and the admin).
			if o, err := s.DB.Participant(r.Context(), row.OwnerID); err == nil {
				e.Owner = &participantRef{ID: o.ID, Name: o.Name}
			}
		}
		p.render(w, r, s, "engine", &view{Engine: &e})
	})
	r.Get("/play", func(w http.ResponseWriter, r *http.Request) {
		p.render(w, r, s, "play", &view{})
	})
	r.Get("/play/{id}", func(w http.ResponseWriter, r *http.Request) {
		p.render(w, r, s, "play", &view{})
	})
	r.Get("/workers", func(w http.ResponseWriter, r *http.Request) {
		ws := s.workersJSON()
		p.render(w, r, s, "workers", &view{Workers: &ws})
	})
	r.Get("/tournaments/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := idParam(r, "id")
		if err != nil {
			p.notFound(w, r, s, p.trHTML(r, "error.no_tournament", "id", codeHTML(chi.URLParam(r, "id"))))
			return
		}
		t, err := s.DB.Tournament(r.Context(), id)
		if err != nil {
			p.fail(w, r, s, err, p.trHTML(r, "error.no_tournament", "id", id))
			return
		}
		names, err := s.DB.EngineNames(r.Context(), t.Engines)
		if err != nil {
			p.fail(w, r, s, err, "")
			return
		}
		tj := s.tournamentJSON(t, names)
		p.render(w, r, s, "tournament", &view{Title: t.Name, Tournament: &tj, Reasons: reasons})
	})
	r.Get("/games/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := idParam(r, "id")
		if err != nil {
			p.notFound(w, r, s, p.trHTML(r, "error.no_game", "id", codeHTML(chi.URLParam(r, "id"))))
			return
		}
		g, err := s.DB.Game(r.Context(), id)
		if err != nil {
			p.fail(w, r, s, err, p.trHTML(r, "error.no_game", "id", id))
			return
		}
		v := &view{}
		gj := withView(toGameJSON(g))
		v.Game = &gj
		if t, err := s.DB.Tournament(r.Context(), g.TournamentID); err == nil {
			tj := s.tournamentJSON(t, nil)
			v.Tournament, v.Settings = &tj, &t.Settings
		}
		p.render(w, r, s, "game", v)
	})
	r.Get("/participants", func(w http.ResponseWriter, r *http.Request) {
		p.render(w, r, s, "participants", &view{})
	})
	// The invitation page does not use the code up: the button on it does
	// (POST /api/invitations/accept), so that a link preview cannot.
	r.Get("/invite/{code}", func(w http.ResponseWriter, r *http.Request) {
		p.render(w, r, s, "invite", &view{})
	})
	r.Get("/static/{hash}/{name}", p.serveStatic)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		p.notFound(w, r, s, p.trHTML(r, "error.no_page", "path", codeHTML(r.URL.Path)))
	})
}

// tr is a message in the request's language, as plain text.
func (p *pages) tr(r *http.Request, key string, args ...any) string {
	// A wrong key or placeholder shows the key; TestCatalogKeysUsed catches it.
	text, _ := p.catalogs[langOf(r)].text(key, args...)
	return text
}

// trHTML is a message in the request's language for a page: escaped, but
// for values that are template.HTML already (codeHTML).
func (p *pages) trHTML(r *http.Request, key string, args ...any) template.HTML {
	text, err := p.catalogs[langOf(r)].html(key, args...)
	if err != nil {
		return template.HTML(template.HTMLEscapeString(key))
	}
	return text
}

// codeHTML is a value shown as code in a message: what the reader typed (a
// path, an id), which is in no language.
func codeHTML(s string) template.HTML {
	return template.HTML(`<code translate="no">` + template.HTMLEscapeString(s) + "</code>")
}

// fail shows the not-found page for a missing row and a 500 page otherwise.
func (p *pages) fail(w http.ResponseWriter, r *http.Request, s *Server, err error, missing template.HTML) {
	if games.ErrorCode(err) == games.ENotFound && missing != "" {
		p.notFound(w, r, s, missing)
		return
	}
	s.log().Error("page", "path", r.URL.Path, "err", err)
	p.render(w, r, s, "error", &view{Title: p.tr(r, "error.title"), Status: http.StatusInternalServerError, Message: p.trHTML(r, "error.internal")})
}

func (p *pages) notFound(w http.ResponseWriter, r *http.Request, s *Server, msg template.HTML) {
	p.render(w, r, s, "error", &view{Title: p.tr(r, "error.not_found"), Status: http.StatusNotFound, Message: msg})
}

// render executes a page into a buffer first, so that a failing template gives
// a clean 500 rather than half a page.
func (p *pages) render(w http.ResponseWriter, r *http.Request, s *Server, name string, v *view) {
	v.Page = name
	v.Lang = langOf(r)
	c := s.softCaller(r)
	v.Admin = c.Admin
	if c.ID > 0 {
		v.Participant = &participantRef{ID: c.ID, Name: c.Name}
	}
	v.TV = r.URL.Query().Get("tv") == "1"
	v.Games = gameChoices()
	v.Cluster = s.Workers != nil
	switch s.Sandbox {
	case "off":
		v.SandboxWarning = p.tr(r, "sandbox.off")
	case "unavailable":
		v.SandboxWarning = p.tr(r, "sandbox.unavailable", "error", s.SandboxError)
	case "on":
		if g := s.SandboxLimits; g != nil && g.Memory == "polling" {
			v.SandboxNotice = p.tr(r, "sandbox.polling", "command", g.Stronger)
		}
	}
	if v.Status == 0 {
		v.Status = http.StatusOK
	}
	var buf bytes.Buffer
	if err := p.langViews[v.Lang][name].ExecuteTemplate(&buf, "layout", v); err != nil {
		s.log().Error("render page", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Vary", "Accept-Language, Cookie")
	h.Set("Content-Language", v.Lang)
	h.Set("Content-Security-Policy", p.csp(r))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	w.WriteHeader(v.Status)
	_, _ = w.Write(buf.Bytes())
}

// csp is the pages' Content-Security-Policy: nothing from another host, no
// inline code but the import map. The websocket origin is named as well as
// 'self', which older browsers do not apply to ws: and wss:.
func (p *pages) csp(r *http.Request) string {
	connect := "'self'"
	if validHost(r.Host) {
		connect += " ws://" + r.Host + " wss://" + r.Host
	}
	return "default-src 'self'; script-src 'self' " + p.scriptHash + "; style-src 'self'; img-src 'self' data:; " +
		"connect-src " + connect + "; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
}

// validHost accepts a Host header made of the characters of names, IPv4 and
// IPv6 addresses and ports, so that it cannot change the policy it goes into.
func validHost(host string) bool {
	if host == "" || len(host) > 255 {
		return false
	}
	for _, c := range host {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(".-:[]", c)) {
			return false
		}
	}
	return true
}

// serveStatic serves a static file whose URL names its checksum; any other
// checksum is not found, so a cached URL never serves other content.
func (p *pages) serveStatic(w http.ResponseWriter, r *http.Request) {
	a, ok := p.static[chi.URLParam(r, "name")]
	if !ok || a.hash != chi.URLParam(r, "hash") {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", `"`+a.hash+`"`)
	h.Set("X-Content-Type-Options", "nosniff")
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, `"`+a.hash+`"`) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(a.body)
	}
}
