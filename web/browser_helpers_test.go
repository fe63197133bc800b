package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/builtin"
	"github.com/taikai-dev/taikai/engines/sandbox"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/othello"
	"github.com/taikai-dev/taikai/internal/testkit"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/tournament/cluster"
	"github.com/taikai-dev/taikai/web"
)

// TestMain lets the test binary stand in for the taikai binary: the launcher
// runs built-in engines as `<Self> engine NAME ...`.
func TestMain(m *testing.M) {
	sandbox.MaybeHelper() // the helper of prepared sandboxes (TestPlaySandboxedUpload)
	builtin.RunIfEngine()
	// Race-built engine processes would otherwise sleep a second at exit.
	race := "atexit_sleep_ms=0"
	if v := os.Getenv("GORACE"); v != "" {
		race = v + " " + race
	}
	os.Setenv("GORACE", race)
	// Four at once: the package runs last of `go test ./...` and, once the
	// other packages are done, alone; at three its tests left a CPU idle
	// (suite runs of 116-120 s at three, 112-114 s at four, in alternation).
	testkit.Parallel(4)
	unpath := testkit.PythonOnPath()
	code := m.Run()
	chromium.stop()
	unpath()
	os.Exit(code)
}

const browserToken = "browser-test-token"

// site is a real taikai server on loopback: SQLite in a temp dir, the hub, the
// metrics, and the tournament service that launches real engine processes.
type site struct {
	URL     string
	DB      *storage.DB
	token   string
	dataDir string // the server's --data

	mu      sync.Mutex
	sockets []net.Conn     // upgraded (websocket) connections
	wsOpens map[string]int // websocket requests by path
}

// wsOpened counts the websocket requests made to path.
func (s *site) wsOpened(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wsOpens[path]
}

// dropSockets cuts every websocket connection, as the hub does to a viewer
// that falls behind, and returns how many it cut.
func (s *site) dropSockets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.sockets)
	for _, c := range s.sockets {
		c.Close()
	}
	s.sockets = nil
	return n
}

// sinkFanout publishes tournament events to several sinks, as `taikai serve` does.
type sinkFanout []tournament.Sink

func (f sinkFanout) Publish(ev tournament.Event) {
	for _, s := range f {
		s.Publish(ev)
	}
}

// startSite builds the server the way cmd/taikai/serve.go does.
func startSite(tb testing.TB, options ...func(*web.Server)) *site {
	return startSiteWith(tb, false, options...)
}

// startSiteWith builds the server; withWorker plays its games on a worker
// (cluster.Worker, in this process) through an embedded NATS server, as
// `serve --nats-embedded` and `taikai worker` do.
func startSiteWith(tb testing.TB, withWorker bool, options ...func(*web.Server)) *site {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		tb.Fatal(err)
	}
	db, err := storage.Open(ctx, filepath.Join(dir, "taikai.db"))
	if err != nil {
		tb.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	lw := &lockedWriter{tb: tb}
	log := slog.New(slog.NewTextHandler(lw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	metrics := web.NewMetrics()
	hub := web.NewLive(db, log)
	svc := &tournament.Service{
		Store:   db,
		Runner:  &tournament.Runner{Launcher: &engines.Launcher{Self: self, Log: log}, DataDir: data, Log: log, People: &tournament.People{}},
		Sink:    sinkFanout{hub, metrics},
		DataDir: data,
		Log:     log,
	}
	srv := &web.Server{DB: db, Service: svc, Live: hub, Token: browserToken, DataDir: data, Log: log, Metrics: metrics}
	if withWorker {
		queue := startWorker(tb, dir, self, log)
		srv.Workers, svc.Dispatch = queue, queue
		metrics.WatchWorkers(queue)
	}
	for _, o := range options {
		o(srv)
	}
	handler, err := srv.Handler()
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	st := &site{token: browserToken, wsOpens: map[string]int{}, dataDir: data}
	count := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/ws/") {
			st.mu.Lock()
			st.wsOpens[r.URL.Path]++
			st.mu.Unlock()
		}
		handler.ServeHTTP(w, r)
	})
	hs := &http.Server{Handler: count, ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(c net.Conn, state http.ConnState) {
			if state == http.StateHijacked {
				st.mu.Lock()
				st.sockets = append(st.sockets, c)
				st.mu.Unlock()
			}
		}}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = hs.Serve(ln)
	}()
	tb.Cleanup(func() {
		srv.Close() // stops the background checks and reaps their engines
		svc.Close() // cancels running games; every engine process is reaped
		hub.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(sctx); err != nil {
			hs.Close()
		}
		<-served
		db.Close()
		lw.mu.Lock()
		lw.done = true
		lw.mu.Unlock()
	})
	st.URL, st.DB = "http://"+ln.Addr().String(), db
	return st
}

// startWorker starts an embedded NATS server, the server's side of the queue
// and one worker named browser-w1, all stopped when the test ends (after the
// site: cleanups run last first).
func startWorker(tb testing.TB, dir, self string, log *slog.Logger) *cluster.Server {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ns, err := cluster.StartEmbedded("127.0.0.1:0", filepath.Join(dir, "nats"))
	if err != nil {
		tb.Fatal(err)
	}
	nc, err := cluster.Connect(ns.URL(), "browser-test", log)
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := cluster.NewServer(ctx, nc, 10*time.Second, filepath.Join(dir, "data"), log)
	if err != nil {
		tb.Fatal(err)
	}
	w := &cluster.Worker{Name: "browser-w1", Host: "browser-host", Concurrency: 1,
		Runner:   &tournament.Runner{Launcher: &engines.Launcher{Self: self, Log: log}, Log: log},
		CacheDir: filepath.Join(dir, "cache"), Log: log}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, nc) }()
	tb.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("worker: %v", err)
			}
		case <-time.After(30 * time.Second):
			tb.Error("worker did not stop within 30 s")
		}
		srv.Close()
		nc.Close()
		ns.Close()
	})
	return srv
}

// lockedWriter sends server logs to the test log until the test is over.
type lockedWriter struct {
	mu   sync.Mutex
	tb   testing.TB
	done bool
}

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.tb.Log(strings.TrimSpace(string(b)))
	}
	return len(b), nil
}

// call does an API request with the admin token and decodes the JSON answer
// into out (if not nil); it returns the status.
func (s *site) call(tb testing.TB, method, path string, body, out any) int {
	tb.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			tb.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return s.do(tb, req, out)
}

func (s *site) do(tb testing.TB, req *http.Request, out any) int {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		tb.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			tb.Fatalf("%s %s: %v in %s", req.Method, req.URL.Path, err, b)
		}
	}
	return res.StatusCode
}

// mustCall is call that expects a 2xx status.
func (s *site) mustCall(tb testing.TB, method, path string, body, out any) {
	tb.Helper()
	var raw json.RawMessage
	code := s.call(tb, method, path, body, &raw)
	if code/100 != 2 {
		tb.Fatalf("%s %s: status %d: %s", method, path, code, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			tb.Fatal(err)
		}
	}
}

// upload posts an engine as multipart/form-data with the meta part and files.
func (s *site) upload(tb testing.TB, meta any, files map[string]string, out any) int {
	tb.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	b, _ := json.Marshal(meta)
	if err := mw.WriteField("meta", string(b)); err != nil {
		tb.Fatal(err)
	}
	for name, content := range files {
		w, err := mw.CreateFormFile("file", name)
		if err != nil {
			tb.Fatal(err)
		}
		io.WriteString(w, content)
	}
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/api/engines", &buf)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return s.do(tb, req, out)
}

// errorAnswer is the API's error body.
type errorAnswer struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field"`
		Line    int    `json:"line"`
	} `json:"error"`
}

// Shapes of the API answers the tests read.
type (
	engineAnswer struct {
		ID       int64    `json:"id"`
		Name     string   `json:"name"`
		Game     string   `json:"game"`
		Protocol string   `json:"protocol"`
		Uploaded bool     `json:"uploaded"`
		Files    []string `json:"files"`
	}
	tournamentAnswer struct {
		ID            int64  `json:"id"`
		Name          string `json:"name"`
		Status        string `json:"status"`
		TotalGames    int64  `json:"total_games"`
		FinishedGames int64  `json:"finished_games"`
	}
	standingAnswer struct {
		EngineID int64   `json:"engine_id"`
		Name     string  `json:"name"`
		Games    int64   `json:"games"`
		Wins     int64   `json:"wins"`
		Draws    int64   `json:"draws"`
		Losses   int64   `json:"losses"`
		Points   float64 `json:"points"`
		ScorePct float64 `json:"score_pct"`
	}
	playerAnswer struct {
		EngineID int64  `json:"engine_id"`
		Name     string `json:"name"`
	}
	moveAnswer struct {
		Ply   int      `json:"ply"`
		Color string   `json:"color"`
		X     *int     `json:"x"`
		Y     *int     `json:"y"`
		Text  string   `json:"text"`
		MS    int64    `json:"ms"`
		Path  [][2]int `json:"path"`
	}
	gameAnswer struct {
		ID           int64        `json:"id"`
		TournamentID int64        `json:"tournament_id"`
		Game         string       `json:"game"`
		Rule         string       `json:"rule"`
		Size         int          `json:"size"`
		Black        playerAnswer `json:"black"`
		White        playerAnswer `json:"white"`
		Status       string       `json:"status"`
		Result       *string      `json:"result"`
		Reason       *string      `json:"reason"`
		Plies        int          `json:"plies"`
		Moves        []moveAnswer `json:"moves"`
	}
)

// waitAPI polls an API condition until it holds or the deadline passes.
func waitAPI(tb testing.TB, what string, timeout time.Duration, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("waited %v for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// othelloFrames replays a game's moves with the rules package: frames[k] is the
// board after ply k, as rows of '.', 'x' and 'o'.
func othelloFrames(tb testing.TB, moves []moveAnswer) [][]string {
	tb.Helper()
	b := othello.New()
	rows := func() []string {
		out := make([]string, 8)
		for y := range 8 {
			var sb strings.Builder
			for x := range 8 {
				switch b.At(x, y) {
				case othello.Black:
					sb.WriteByte('x')
				case othello.White:
					sb.WriteByte('o')
				default:
					sb.WriteByte('.')
				}
			}
			out[y] = sb.String()
		}
		return out
	}
	frames := [][]string{rows()}
	for _, m := range moves {
		sq := othello.Pass
		if m.X != nil {
			sq = othello.At(*m.X, *m.Y)
		}
		if _, err := b.Play(sq); err != nil {
			tb.Fatalf("ply %d %s: %v", m.Ply, m.Text, err)
		}
		frames = append(frames, rows())
	}
	return frames
}

// checkersFrames replays a checkers game's moves with the rules package:
// frames[k] is the board after ply k, as rows of '.', 'x', 'o' and 'X', 'O'
// for kings.
func checkersFrames(tb testing.TB, rule string, moves []moveAnswer) [][]string {
	tb.Helper()
	g, _ := games.Lookup("checkers")
	r, err := g.New(rule, 8)
	if err != nil {
		tb.Fatal(err)
	}
	rows := func() []string {
		out := make([]string, 8)
		for y := range 8 {
			var sb strings.Builder
			for x := range 8 {
				sb.WriteByte(".xXoO"[map[int8]int{0: 0, 1: 1, 2: 2, -1: 3, -2: 4}[r.At(x, y)]])
			}
			out[y] = sb.String()
		}
		return out
	}
	frames := [][]string{rows()}
	for _, m := range moves {
		mv := games.Move{X: *m.X, Y: *m.Y}
		for _, p := range m.Path {
			mv.Path = append(mv.Path, games.Point{X: p[0], Y: p[1]})
		}
		if ref, ok := r.Check(mv); !ok {
			tb.Fatalf("ply %d %s: refused (%v)", m.Ply, m.Text, ref)
		}
		r.Play(mv)
		frames = append(frames, rows())
	}
	return frames
}

// signedRating is a rating as the pages show it (app.js's signedInt): a
// whole number with its sign, rounded half away from zero, as Go rounds.
func signedRating(v float64) string {
	switch n := math.Round(v); {
	case n > 0:
		return fmt.Sprintf("+%.0f", n)
	case n < 0:
		return fmt.Sprintf("−%.0f", -n)
	}
	return "0"
}

// ---- browser ----

// chromiumPath finds the browser; tests skip without one, except on CI.
// Chromium's headless shell comes first: the same Blink and V8 without the
// full browser around them (what Playwright runs headless), it took 32 s of
// CPU for the package's tests against 55 s for the full browser
// (docs/PERFORMANCE.md, "An eighth VM").
func chromiumPath(tb testing.TB) string {
	tb.Helper()
	for _, p := range []string{os.Getenv("TAIKAI_CHROMIUM"), "/usr/bin/chromium-headless-shell", "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		tb.Fatal("chromium not found (install it: apt-get install -y chromium-headless-shell); browser tests do not skip on CI")
	}
	tb.Skip("chromium not found: skipping browser tests (apt-get install -y chromium-headless-shell)")
	return ""
}

// browser is one headless Chromium tab and what its pages reported.
type browser struct {
	ctx  context.Context
	site *site

	mu       sync.Mutex
	errors   []string // JavaScript exceptions, console.error calls, error log entries
	watched  map[testing.TB]bool
	captured bool // a failed subtest's page was captured
}

// watch captures the page when tb, a subtest sharing the tab, fails: at
// its end, before the next subtest moves the tab on. The helpers that
// drive the page call it.
func (b *browser) watch(tb testing.TB) {
	b.mu.Lock()
	if b.watched == nil {
		b.watched = map[testing.TB]bool{}
	}
	seen := b.watched[tb]
	b.watched[tb] = true
	b.mu.Unlock()
	if seen {
		return
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			b.capture(tb, "failed-"+strings.NewReplacer("/", "-", " ", "-").Replace(tb.Name()))
			b.mu.Lock()
			b.captured = true
			b.mu.Unlock()
		}
	})
}

// chromium is the one headless Chromium of the package's tests, started by
// the first test that needs it and stopped after the last; each test gets a
// tab of its own in a browser context of its own (cookies, storage and
// cache are not shared).
var chromium sharedBrowser

type sharedBrowser struct {
	once   sync.Once
	ctx    context.Context // the browser's first tab: the parent of every test's
	err    error
	cancel func()
}

// sharedChromium starts the package's Chromium once and returns its first tab.
func sharedChromium(tb testing.TB) context.Context {
	tb.Helper()
	path := chromiumPath(tb)
	chromium.once.Do(func() {
		dir, err := os.MkdirTemp("", "taikai-chromium-")
		if err != nil {
			chromium.err = err
			return
		}
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(path),
			chromedp.Headless,
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck,
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.Flag("disable-extensions", true),
			chromedp.Flag("disable-default-apps", true),
			chromedp.Flag("disable-background-timer-throttling", true),
			chromedp.Flag("disable-renderer-backgrounding", true),
			chromedp.Flag("force-color-profile", "srgb"),
			chromedp.Flag("hide-scrollbars", true),
			// No test goes back a page, and a page left for the
			// back-forward cache is kept, and frozen, at a cost: 8% of
			// Chromium's CPU in the package (65-68 s against 71-76 s).
			chromedp.Flag("disable-features", "BackForwardCache"),
			chromedp.UserDataDir(dir),
			chromedp.WindowSize(1280, 900),
		}
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelTab := chromedp.NewContext(allocCtx)
		chromium.ctx = ctx
		chromium.cancel = func() {
			cancelTab()
			cancelAlloc() // kills the browser and waits for it
			os.RemoveAll(dir)
		}
		// The first run starts the browser; it must not have a deadline of its own.
		start := make(chan error, 1)
		go func() { start <- chromedp.Do(ctx) }()
		select {
		case err := <-start:
			if err != nil {
				chromium.err = fmt.Errorf("start chromium: %w", err)
			}
		case <-time.After(30 * time.Second):
			chromium.err = errors.New("chromium did not start in 30s")
		}
	})
	if chromium.err != nil {
		tb.Fatal(chromium.err)
	}
	return chromium.ctx
}

// stop ends the shared Chromium, if a test started it.
func (c *sharedBrowser) stop() {
	if c.cancel != nil {
		c.cancel()
	}
}

func startBrowser(tb testing.TB, s *site) *browser {
	tb.Helper()
	// A tab in a new browser context of the shared Chromium, closed (and
	// its context thrown away) when the test ends.
	ctx, cancelTab := chromedp.NewContext(sharedChromium(tb), chromedp.WithNewBrowserContext())
	tb.Cleanup(cancelTab)
	// The first run opens the tab; like the browser's, without a deadline
	// of its own.
	open := make(chan error, 1)
	go func() { open <- chromedp.Do(ctx) }()
	select {
	case err := <-open:
		if err != nil {
			tb.Fatalf("open a tab: %v", err)
		}
	case <-time.After(30 * time.Second):
		tb.Fatal("chromium did not open a tab in 30s")
	}
	b := &browser{ctx: ctx, site: s}
	// A failed test's page as it was at the end (run before the tab closes:
	// cleanups run last first), unless a failed subtest's page was.
	b.watched = map[testing.TB]bool{tb: true}
	tb.Cleanup(func() {
		b.mu.Lock()
		done := b.captured
		b.mu.Unlock()
		if tb.Failed() && !done {
			b.capture(tb, "failed-"+strings.NewReplacer("/", "-", " ", "-").Replace(tb.Name()))
		}
	})
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		tb.Fatal(err)
	}
	err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				msg += " " + d.Exception.Description
			}
			b.report(fmt.Sprintf("exception: %s (%s:%d)", msg, d.URL, d.LineNumber+1))
		case *runtime.EventConsoleAPICalled:
			if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert {
				return
			}
			var parts []string
			for _, a := range ev.Args {
				if a.Description != "" {
					parts = append(parts, a.Description)
				} else {
					parts = append(parts, string(a.Value))
				}
			}
			b.report("console." + string(ev.Type) + ": " + strings.Join(parts, " "))
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError {
				b.report(fmt.Sprintf("log %s: %s (%s)", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		}
	})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func (b *browser) report(msg string) {
	b.mu.Lock()
	b.errors = append(b.errors, msg)
	b.mu.Unlock()
}

// takeErrors returns and forgets what the pages reported, leaving out the
// entries allow says are expected.
func (b *browser) takeErrors(allow func(string) bool) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, e := range b.errors {
		if allow == nil || !allow(e) {
			out = append(out, e)
		}
	}
	b.errors = nil
	return out
}

// noErrors fails the test if a page reported a JavaScript error.
func (b *browser) noErrors(tb testing.TB, page string, allow func(string) bool) {
	tb.Helper()
	for _, e := range b.takeErrors(allow) {
		tb.Errorf("%s: %s", page, e)
	}
}

// run runs browser steps with a deadline.
func (b *browser) run(tb testing.TB, what string, timeout time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	tb.Helper()
	b.watch(tb)
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
}

// click clicks sel with the mouse, and makes sure the click reached it.
// Two things can take the element from under the mouse between chromedp
// finding it and pressing the button: a list drawn anew (the engines
// page's, every second while a check runs), which makes chromedp say
// "Could not find node with given id", and a layout shift (a live board
// added above a form), after which the press lands beside the element.
// Either way the element had no click, so clicking again, up to 5 times,
// cannot act twice. A click that navigates away counts as reached.
func (b *browser) click(tb testing.TB, what, sel string) {
	tb.Helper()
	arm := fmt.Sprintf(armClick, sel)
	b.watch(tb)
	for try := 1; ; try++ {
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		armed := false
		err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(sel)))
		if err == nil {
			armed, err = chromedp.Run(ctx, chromedp.Evaluate[bool](arm))
		}
		if err == nil && armed {
			err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel)))
		}
		missed := !armed // gone between the wait and the arming: a list drawn anew
		if err == nil && armed {
			// An error here is the page the click navigated away from.
			missed, _ = chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__taikaiClick?.hit === false`))
		}
		cancel()
		switch {
		case err == nil && !missed:
			return
		case try == 5:
			if err == nil && armed {
				err = errors.New("the element never had the click: something else was under the mouse")
			} else if err == nil {
				err = errors.New("the element was gone each time, drawn anew")
			}
			tb.Fatalf("%s: %v", what, err)
		case err != nil && !strings.Contains(err.Error(), "Could not find node"):
			tb.Fatalf("%s: %v", what, err)
		}
		if missed && armed {
			tb.Logf("%s: the click did not reach %s (something else was under the mouse); again", what, sel)
		}
	}
}

// armClick (with the element's selector) notes in window.__taikaiClick
// whether the element's next click reached it; false if there is no such
// element.
const armClick = `(() => {
	const e = document.querySelector(%q);
	if (!e) return false;
	const c = {hit: false};
	window.__taikaiClick = c;
	e.addEventListener('click', () => { c.hit = true; }, {once: true, capture: true});
	return true;
})()`

// press focuses the element sel and presses key (kb.Enter on a button or a
// <summary>, " " on a checkbox), as a keyboard user does, and makes sure
// the element had the click that activates it. Unlike the mouse it cannot
// land beside the element: on the overview the live boards above the new
// tournament form come and go as games start and end, and a click at where
// the submit button had been closed the form's <details> instead (seen
// with the suite's other packages running beside the browser tests).
func (b *browser) press(tb testing.TB, what, sel, key string) {
	tb.Helper()
	b.watch(tb)
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(sel)))
	if err == nil {
		var armed bool
		if armed, err = chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(armClick, sel))); err == nil && !armed {
			err = errors.New("no such element")
		}
	}
	if err == nil {
		err = chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(sel)), chromedp.KeyEvent(key))
	}
	if err == nil {
		// An error here is the page the key navigated away from.
		if missed, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__taikaiClick?.hit === false`)); missed {
			err = errors.New("the key did not activate it")
		}
	}
	if err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
}

// open navigates to a dashboard path and waits for the load event.
func (b *browser) open(tb testing.TB, path string) {
	tb.Helper()
	b.run(tb, "open "+path, 45*time.Second, chromedp.Navigate(b.site.URL+path))
}

// evalJS evaluates a JavaScript expression into T.
func evalJS[T any](tb testing.TB, b *browser, expr string) T {
	tb.Helper()
	b.watch(tb)
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitJS waits until a JavaScript expression is truthy.
func (b *browser) waitJS(tb testing.TB, what, expr string, timeout time.Duration) {
	tb.Helper()
	ok, err := b.poll(tb, what, expr, timeout)
	if ok {
		return
	}
	if err != nil {
		tb.Fatalf("waited %v for %s (%s): %v", timeout, what, expr, err)
	}
	// Where the page was and what it reported, for a wait that fails once
	// in many runs.
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	at, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + ' ' + JSON.stringify([...document.querySelectorAll('.field-error, .error, [role=alert]')].map((e) => e.textContent.trim()).filter(Boolean))`))
	cancel()
	tb.Fatalf("waited %v for %s (%s); the page was at %s and reported %v", timeout, what, expr, at, b.takeErrors(nil))
}

// poll waits up to timeout for a JavaScript expression to be truthy, and
// says whether it came true (and if not, the last error, if the last try
// failed). The page polls it every 25 ms, for up to 2 s a round: one
// DevTools call a round rather than one a poll, each of which cost Chromium
// about 5 ms of CPU. A navigation while waiting (a form that redirects)
// only costs a retry.
func (b *browser) poll(tb testing.TB, what, expr string, timeout time.Duration) (bool, error) {
	tb.Helper()
	b.watch(tb)
	const round = `new Promise((resolve, reject) => {
		const end = Date.now() + %d;
		const check = () => {
			let ok;
			try { ok = !!(%s); } catch (e) { reject(e); return; }
			if (ok || Date.now() >= end) resolve(ok); else setTimeout(check, 25);
		};
		check();
	})`
	deadline := time.Now().Add(timeout)
	for {
		d := min(2*time.Second, max(time.Until(deadline), 0))
		ctx, cancel := context.WithTimeout(b.ctx, d+15*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(round, d.Milliseconds(), expr), chromedp.EvalAwaitPromise))
		cancel()
		if err == nil && ok {
			return true, nil
		}
		if !time.Now().Before(deadline) {
			return false, err
		}
		if err == nil {
			continue // the round ended false: the page polls on
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-b.ctx.Done():
			tb.Fatalf("wait for %s: %v", what, b.ctx.Err())
		}
	}
}

// setValue sets a form field's value as typing would, and tells the page.
func (b *browser) setValue(tb testing.TB, sel, value string) {
	tb.Helper()
	evalJS[chromedp.Void](tb, b, fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); })()`, sel, value))
}

// artifacts is where screenshots go: $TAIKAI_TEST_ARTIFACTS, or test-artifacts
// at the repository's root.
func artifacts(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("TAIKAI_TEST_ARTIFACTS")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			tb.Fatal(err)
		}
		dir = filepath.Join(filepath.Dir(wd), "test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// screenshot writes a full-page PNG of the current page as name.png, when
// TAIKAI_TEST_ARTIFACTS names a folder (a person looking at the pages):
// the captures assert nothing, and the suite's 50 of them cost Chromium
// about 25 s of CPU. A failed browser test captures its page either way
// (startBrowser).
func (b *browser) screenshot(tb testing.TB, name string) {
	tb.Helper()
	if os.Getenv("TAIKAI_TEST_ARTIFACTS") == "" {
		return
	}
	b.capture(tb, name)
}

// capture is screenshot, always.
func (b *browser) capture(tb testing.TB, name string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	// A full-page capture makes the viewport as tall as the page, which would
	// change sizes given in vh (the game page's board): pin the page's width
	// to what the real viewport gives first.
	pin := `(() => {
		window.scrollTo(0, 0);
		for (const m of document.querySelectorAll('.main')) m.style.maxWidth = m.getBoundingClientRect().width + 'px';
	})()`
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](pin)); err != nil {
		tb.Errorf("screenshot %s: %v", name, err)
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(artifacts(tb), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tb.Error(err)
		return
	}
	tb.Logf("screenshot: %s", path)
}

// boardRows reads the game page's SVG board back into rows of '.', 'x', 'o',
// from the data-x, data-y and data-color of its stones ('X', 'O' for a
// piece with data-king).
func (b *browser) boardRows(tb testing.TB, size int) []string {
	tb.Helper()
	return evalJS[[]string](tb, b, fmt.Sprintf(`(() => {
		const n = %d;
		const rows = Array.from({length: n}, () => Array(n).fill('.'));
		for (const s of document.querySelectorAll('#board .stone')) {
			const c = s.dataset.color === 'black' ? 'x' : 'o';
			rows[+s.dataset.y][+s.dataset.x] = s.dataset.king ? c.toUpperCase() : c;
		}
		return rows.map((r) => r.join(''));
	})()`, size))
}

// gameView is what the game page shows: the ply, the board and the result.
type gameView struct {
	Ply    int      `json:"ply"`
	Rows   []string `json:"rows"`
	Result string   `json:"result"`
}

// view reads the game page in one go, so that a move arriving meanwhile cannot
// mix two positions.
func (b *browser) view(tb testing.TB, size int) gameView {
	tb.Helper()
	return evalJS[gameView](tb, b, fmt.Sprintf(`(() => {
		const n = %d;
		const rows = Array.from({length: n}, () => Array(n).fill('.'));
		for (const s of document.querySelectorAll('#board .stone')) {
			const c = s.dataset.color === 'black' ? 'x' : 'o';
			rows[+s.dataset.y][+s.dataset.x] = s.dataset.king ? c.toUpperCase() : c;
		}
		return {
			ply: +document.querySelector('#ply').textContent,
			rows: rows.map((r) => r.join('')),
			result: document.querySelector('#result').textContent.trim(),
		};
	})()`, size))
}
