// Package web is taikai's HTTP side: the JSON API, the dashboard pages, the
// websocket hub that streams live games, health and metrics. Router:
// github.com/go-chi/chi/v5.
package web

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/sandbox"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
)

// SessionCookie holds the dashboard's session id (never a token) over plain
// HTTP, SecureSessionCookie over HTTPS; it is sent only to this site
// (SameSite=Strict) and accepted for a write only with the dashboard's
// request header.
const (
	SessionCookie       = "taikai_session"
	SecureSessionCookie = "__Host-taikai_session"
	csrfHeader          = "X-Requested-With"
	csrfValue           = "taikai"
)

// Server serves the API, the dashboard and the live websockets.
type Server struct {
	DB      *storage.DB
	Service *tournament.Service
	Live    *Live
	Token   string // admin token for writes (plain; tests), or:
	// TokenHash is the hex SHA-256 of the admin token; it wins over Token.
	// The server keeps only the hash.
	TokenHash string
	DataDir   string // uploaded engines and engine logs live here
	Log       *slog.Logger
	Metrics   *Metrics
	// Allow says whether an engine may be registered: nil, or why not (the
	// launcher's: without a sandbox only built-ins run). Nil allows all.
	Allow func(engines.Engine) error
	// Sandbox is the engine sandbox's state, shown by /healthz and, when it
	// is not "on", by a banner on every page: on, off (--sandbox=off) or
	// unavailable (only built-ins run); SandboxError says why not.
	Sandbox      string
	SandboxError string
	// SandboxLimits, with the sandbox on, says which of its guarantees hold
	// (/healthz's sandbox_limits); a memory limit held by polling rather
	// than a cgroup is shown by a notice on every page.
	SandboxLimits *sandbox.Guarantees
	// PublicURL is where participants reach the server
	// (https://taikai.example.ac.jp, no trailing slash), the start of every
	// invitation link; "": the host the admin's browser used.
	PublicURL string
	// BodyTimeout is how long a request's JSON body may take to arrive
	// (default 30 s), UploadTimeout a multipart upload's (default 3 min): a
	// body shorter than its Content-Length does not hold a connection for
	// the server's whole read timeout.
	BodyTimeout, UploadTimeout time.Duration
	// Workers is the workers' queue when games are played by taikai worker
	// processes (serve --nats), nil when the server plays them (an untyped
	// nil: a nil *cluster.Server in it would not be).
	Workers WorkerQueue
	// WorkerCredentials are the workers' own NATS users, nil unless the
	// server runs its NATS server (serve --nats-embedded).
	WorkerCredentials WorkerCredentials
	// ParticipantLimits are the most a participant may set their own
	// engine's limits to (the admin sets any); zero fields are the defaults
	// of DefaultParticipantLimits.
	ParticipantLimits ParticipantLimits
	// UploadQuota bounds what uploads store; zero fields are
	// DefaultUploadQuota's.
	UploadQuota UploadQuota
	uploading   sync.Map // participant ids with an upload under way
	// Play says who may play engines in the browser (issue 39).
	Play  PlayOptions
	plays plays

	pages   *pages
	signIns signInLimiter // failed sign-ins per client address
	checks  checkQueue    // the pre-flight checks run in the background
	// health is the last write check of /healthz.
	health struct {
		sync.Mutex
		at  time.Time
		err error
	}
}

// admitted is the engine req describes, completed by fill (if set) and
// checked by admit.
func (s *Server) admitted(r *http.Request, req *engineRequest, fill func(*engineRequest)) (engines.Engine, error) {
	if fill != nil {
		fill(req)
	}
	e, err := req.engine()
	if err == nil {
		err = s.admit(r, e)
	}
	return e, err
}

// admit checks what registering an engine needs beyond its own fields: a
// fixed port that is not this server's own HTTP port (issue 16, item 11),
// and the launcher's consent (allow).
func (s *Server) admit(r *http.Request, e engines.Engine) error {
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && e.Port != 0 {
		if _, port, err := net.SplitHostPort(addr.String()); err == nil && port == strconv.Itoa(e.Port) {
			return games.Invalid("port", "%d is this server's own HTTP port: engines connect to their seat's port, not to the API", e.Port)
		}
	}
	if c := callerOf(r); !c.Admin {
		if err := s.participantLimits().check(e); err != nil {
			return err
		}
	}
	return s.allow(e)
}

// ParticipantLimits bound the limits a participant may ask for their engine:
// memory, processes and connect time are the admin's to give (issue 36,
// item 2), so that one student's engine cannot take what the others play on.
type ParticipantLimits struct {
	MemoryMB         int
	MaxProcs         int
	ConnectTimeoutMS int64
	// Engines is the most engines a participant may have registered at
	// once (withdrawn ones not counted).
	Engines int
}

// DefaultParticipantLimits are the sandbox's defaults (1 GiB, 256
// processes), and twice the slowest protocol's connect time (a JVM compiling
// its source): a participant may ask for less, not for more. Three engines
// each: a student's tries, not a flood of them in a class tournament.
var DefaultParticipantLimits = ParticipantLimits{MemoryMB: 1024, MaxProcs: 256, ConnectTimeoutMS: 60_000, Engines: 3}

func (s *Server) participantLimits() ParticipantLimits {
	l, d := s.ParticipantLimits, DefaultParticipantLimits
	if l.MemoryMB == 0 {
		l.MemoryMB = d.MemoryMB
	}
	if l.MaxProcs == 0 {
		l.MaxProcs = d.MaxProcs
	}
	if l.ConnectTimeoutMS == 0 {
		l.ConnectTimeoutMS = d.ConnectTimeoutMS
	}
	if l.Engines == 0 {
		l.Engines = d.Engines
	}
	return l
}

// check names the first of e's limits over l.
func (l ParticipantLimits) check(e engines.Engine) error {
	const why = "a participant's engine may ask for at most %d (the admin sets more: serve --participant-max-%s)"
	facts := func(value, limit int64, flag string) map[string]any {
		return map[string]any{"value": value, "limit": limit, "flag": "--participant-max-" + flag}
	}
	switch {
	case e.MemoryMB > l.MemoryMB:
		return games.Invalid("memory_mb", "%d MiB: "+why, e.MemoryMB, l.MemoryMB, "memory-mb").With("participant_limit", facts(int64(e.MemoryMB), int64(l.MemoryMB), "memory-mb"))
	case e.MaxProcs > l.MaxProcs:
		return games.Invalid("max_procs", "%d: "+why, e.MaxProcs, l.MaxProcs, "procs").With("participant_limit", facts(int64(e.MaxProcs), int64(l.MaxProcs), "procs"))
	case e.ConnectTimeoutMS > l.ConnectTimeoutMS:
		return games.Invalid("connect_timeout_ms", "%d ms: "+why, e.ConnectTimeoutMS, l.ConnectTimeoutMS, "connect").With("participant_limit", facts(e.ConnectTimeoutMS, l.ConnectTimeoutMS, "connect"))
	}
	return nil
}

func (s *Server) allow(e engines.Engine) error {
	if s.Allow == nil {
		return nil
	}
	return s.Allow(e)
}

// TokenOK compares a token with the admin token's hash in constant time.
func (s *Server) TokenOK(token string) bool {
	want := s.adminHash()
	return want != "" && token != "" && subtle.ConstantTimeCompare([]byte(HashToken(token)), []byte(want)) == 1
}

// adminHash is the admin token's hash, "" when there is no admin token.
func (s *Server) adminHash() string {
	if s.TokenHash != "" || s.Token == "" {
		return s.TokenHash
	}
	return HashToken(s.Token)
}

// HashToken is the stored form of an admin token: hex SHA-256. The tokens
// are random (or chosen by the operator and never stored), so a fast hash is
// enough: it is not a password.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func (s *Server) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Handler builds the router. It fails if a page template does not parse, so a
// broken template stops the start, not a request.
func (s *Server) Handler() (http.Handler, error) {
	p, err := loadPages()
	if err != nil {
		return nil, err
	}
	s.pages = p
	r := chi.NewRouter()
	r.Use(s.recoverer)
	r.Use(s.bodyDeadline)
	// HEAD is a GET without its body, for every GET route.
	r.Use(middleware.GetHead)
	// A method HTTP does not know never reaches the /api routes: answer it
	// here, in JSON under /api/ like every other answer there.
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			methodNotAllowed(w, r)
			return
		}
		http.Error(w, r.Method+" is not allowed on "+r.URL.Path, http.StatusMethodNotAllowed)
	})
	if s.Metrics != nil {
		r.Use(s.Metrics.middleware)
	}
	r.Get("/healthz", s.healthz)
	if s.Metrics != nil {
		r.Handle("/metrics", s.Metrics.Handler())
	}
	r.Route("/api", func(r chi.Router) {
		r.Get("/engines", s.listEngines)
		r.With(s.member).Post("/engines", s.createEngine)
		r.Get("/engines/{id}", s.getEngine)
		r.With(s.member).Delete("/engines/{id}", s.deleteEngine)
		r.With(s.member).Post("/engines/{id}/check", s.checkEngine)
		r.With(s.member).Put("/engines/{id}", s.replaceEngine)
		r.With(s.member).Patch("/engines/{id}", s.patchEngine)
		r.With(s.reader).Get("/engines/{id}/check", s.getCheck)
		r.With(s.reader).Get("/engines/{id}/versions", s.getVersions)
		r.With(s.admin).Post("/participants", s.createParticipants)
		r.With(s.admin).Get("/participants", s.listParticipants)
		r.With(s.admin).Post("/participants/{id}/invitation", s.reinvite)
		r.With(s.admin).Patch("/participants/{id}", s.updateParticipant)
		r.With(s.admin).Delete("/participants/{id}", s.deleteParticipant)
		r.Post("/invitations/accept", s.acceptInvitation)
		r.With(s.reader).Get("/session", s.getSession)
		r.Post("/session", s.signIn)
		r.Delete("/session", s.signOut)
		r.Get("/submissions", s.getSubmissions)
		r.With(s.admin).Put("/submissions", s.setSubmissions)
		r.Get("/engines/{id}/record", s.getEngineRecord)
		r.Get("/engines/{id}/games", s.getEngineGames)
		r.Get("/builtins", s.listBuiltins)
		r.Get("/tournaments", s.listTournaments)
		r.With(s.admin).Post("/tournaments", s.createTournament)
		r.Get("/tournaments/{id}", s.getTournament)
		r.With(s.admin).Post("/tournaments/{id}/start", s.startTournament)
		r.With(s.admin).Post("/tournaments/{id}/cancel", s.cancelTournament)
		r.With(s.admin).Post("/tournaments/{id}/pause", s.pauseTournament)
		r.With(s.admin).Post("/tournaments/{id}/snapshot", s.snapshotTournament)
		r.Get("/tournaments/{id}/standings", s.getStandings)
		r.Get("/tournaments/{id}/crosstable", s.getCrosstable)
		r.Get("/tournaments/{id}/games", s.listGames)
		r.Get("/openings", s.listSuites)
		r.With(s.admin).Post("/openings", s.createSuite)
		r.Get("/openings/{id}", s.getSuite)
		r.Get("/tournaments/{id}/pairs", s.getPairs)
		r.Get("/tournaments/{id}/bracket", s.getBracket)
		r.Get("/tournaments/{id}/{file}", s.getTournamentFile)
		r.Get("/workers", s.listWorkers)
		r.With(s.admin).Get("/workers/credentials", s.listWorkerCredentials)
		r.With(s.admin).Post("/workers/credentials", s.issueWorkerCredentials)
		r.With(s.admin).Delete("/workers/credentials/{name}", s.revokeWorkerCredentials)
		r.Post("/workers/enroll", s.enrollWorker)
		r.Get("/games", s.listRunningGames)
		r.Get("/games/{id}", s.getGame)
		r.Get("/games/{id}/log/{color}", s.getGameLog)
		r.With(s.admin).Get("/auth", s.checkAuth)
		s.playRoutes(r)
		r.NotFound(func(w http.ResponseWriter, r *http.Request) {
			s.writeError(w, r, &games.Error{Code: games.ENotFound, Message: "no API endpoint " + r.Method + " " + r.URL.Path})
		})
		r.MethodNotAllowed(methodNotAllowed)
	})
	if s.Live != nil {
		r.Get("/ws/games/{id}", s.Live.ServeGame)
		r.Get("/ws/tournaments/{id}", s.Live.ServeTournament)
		r.Get("/ws/live", s.Live.ServeLive)
	}
	s.pages.routes(r, s)
	return r, nil
}

// minFreeBytes is the free disk space under which /healthz says the disk is
// full: less than a finished game and its logs may need.
const minFreeBytes = 1 << 20

// writeCheckEvery bounds how often /healthz, which anyone may ask, makes the
// database commit a write; in between it answers with the last result.
const writeCheckEvery = 5 * time.Second

// checkWrite is DB.CheckWrite at most once per writeCheckEvery.
func (s *Server) checkWrite(ctx context.Context) error {
	s.health.Lock()
	defer s.health.Unlock()
	if !s.health.at.IsZero() && time.Since(s.health.at) < writeCheckEvery {
		return s.health.err
	}
	s.health.err = s.DB.CheckWrite(ctx)
	s.health.at = time.Now()
	return s.health.err
}

// healthz answers 200 with {"status": "ok"} when the server can run
// tournaments, and 503 with a status and an error saying what is wrong: a
// database it cannot read ("database unavailable") or write ("database
// unwritable"), a full disk ("disk full"), or games that could not be stored
// ("storage failing"; the tournaments go on by themselves when it works).
// The sandbox's state is shown either way.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	// "sandbox" stays the string it always was (scripts and the compose
	// tests read it); the details are an object beside it.
	out := map[string]any{"status": "ok", "sandbox": cmp.Or(s.Sandbox, "off")}
	if s.SandboxError != "" {
		out["sandbox_error"] = s.SandboxError
	}
	if s.SandboxLimits != nil && s.Sandbox == "on" {
		out["sandbox_limits"] = s.SandboxLimits
	}
	fail := func(status string, err error) {
		out["status"] = status
		if err != nil {
			out["error"] = apiError(err).Message
		}
		writeJSON(w, http.StatusServiceUnavailable, out)
	}
	if err := s.DB.Ping(r.Context()); err != nil {
		fail("database unavailable", err)
		return
	}
	for _, d := range []struct{ what, dir string }{{"database", filepath.Dir(s.DB.Path())}, {"data directory", s.DataDir}} {
		if free, ok := freeBytes(d.dir); ok && free < minFreeBytes {
			out["error"] = fmt.Sprintf("less than %d MiB free on the disk of the %s", minFreeBytes>>20, d.what)
			fail("disk full", nil)
			return
		}
	}
	if err := s.checkWrite(r.Context()); err != nil {
		fail("database unwritable", err)
		return
	}
	if s.Service != nil {
		if err := s.Service.StorageError(); err != nil {
			fail("storage failing", err)
			return
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// recoverer turns a panic in a handler into a 500 and a log line.
// bodyDeadline bounds the time a request's body may take to arrive.
func (s *Server) bodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
			d := cmp.Or(s.BodyTimeout, 30*time.Second)
			if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
				d = cmp.Or(s.UploadTimeout, 3*time.Minute)
			}
			// Not every writer can (a test's recorder): then the server's
			// read timeout is the bound.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log().Error("panic", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v))
				s.writeError(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// admin lets a request through only with the admin token: in the
// Authorization header (Bearer), or in the dashboard's cookie together with its
// request header (a cross-site form cannot set that header).
func (s *Server) admin(next http.Handler) http.Handler {
	return s.member(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !callerOf(r).Admin {
			s.writeError(w, r, &games.Error{Code: games.EForbidden, Message: "this needs the admin token; a participant's token does not do it", Field: "Authorization"})
			return
		}
		next.ServeHTTP(w, r)
	}))
}

func (s *Server) checkAuth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]bool{"admin": true})
}

// maxJSON bounds a JSON request body.
const maxJSON = 1 << 20

// decode reads a JSON body into v, strictly: unknown fields, wrong types,
// trailing data and bodies over 1 MiB are errors that name what is wrong.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	// curl -d sends application/x-www-form-urlencoded unless told otherwise: a
	// JSON body is read as JSON whatever plain type it came with.
	ct := r.Header.Get("Content-Type")
	if ct != "" && !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "text/plain") && !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		return &games.Error{Code: games.EUnsupported, Message: fmt.Sprintf("Content-Type %q: want application/json", ct), Field: "Content-Type"}
	}
	return decodeJSON(http.MaxBytesReader(w, r.Body, maxJSON), v)
}

func decodeJSON(body io.Reader, v any) error {
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("trailing data after the JSON object")
	}
	if err == nil {
		return nil
	}
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
		big *http.MaxBytesError
	)
	switch {
	case errors.As(err, &big):
		return &games.Error{Code: games.ETooLarge, Message: fmt.Sprintf("request body over %d bytes", big.Limit), Field: "body"}
	case errors.As(err, &syn):
		return errInvalid("body", fmt.Sprintf("malformed JSON at byte %d: %v", syn.Offset, err))
	case errors.As(err, &typ) && typ.Field == "":
		return errInvalid("body", fmt.Sprintf("want a JSON object, got %s", typ.Value))
	case errors.As(err, &typ):
		return errInvalid(typ.Field, fmt.Sprintf("%s: want %s, got %s", typ.Field, typ.Type, typ.Value))
	case errors.Is(err, io.EOF):
		return errInvalid("body", "empty body: want a JSON object")
	case errors.Is(err, os.ErrDeadlineExceeded):
		return errInvalid("body", "body: it did not arrive in time (is Content-Length longer than the body?)")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		// A key "" is unknown too, and names no field: the body is at fault.
		return errInvalid(cmp.Or(name, "body"), fmt.Sprintf("unknown field %q", name))
	}
	return errInvalid("body", err.Error())
}

// idParam reads a positive integer id from the route.
func idParam(r *http.Request, name string) (int64, error) {
	v := chi.URLParam(r, name)
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, &games.Error{Code: games.ENotFound, Message: fmt.Sprintf("%s %q is not an id", name, v), Field: name}
	}
	return id, nil
}

// timeOrNil formats a time for JSON, nil for the zero time.
func timeOrNil(t *time.Time) *string {
	if t == nil || t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

// methodNotAllowed is the API's answer to a method a route does not take.
func methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusMethodNotAllowed, map[string]errorJSON{"error": {Code: "method_not_allowed", Message: r.Method + " is not allowed on " + r.URL.Path}})
}
