package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/storage"
)

// caller is who makes a request: the admin, a participant (ID > 0), or
// nobody (the zero value).
type caller struct {
	Admin bool
	ID    int64
	Name  string
}

func (c caller) member() bool { return c.Admin || c.ID > 0 }

// owns says whether the caller may change an engine owned by owner (0: the
// admin's): the admin may change every engine, a participant their own.
func (c caller) owns(owner int64) bool { return c.Admin || c.ID > 0 && c.ID == owner }

type callerKey struct{}

// callerOf is the caller that identify found for the request.
func callerOf(r *http.Request) caller {
	c, _ := r.Context().Value(callerKey{}).(caller)
	return c
}

// participantTokenPrefix starts every participant token: tkp_<id>_<secret>.
// The id names the account, so that a token is checked against one stored
// hash.
const participantTokenPrefix = "tkp_"

// sessionMaxAge is how long a browser's sign-in cookie lasts.
const sessionMaxAge = 30 * 24 * time.Hour

// newSecret is 32 random bytes in URL-safe base64 (43 characters, none that
// a cookie or a URL path cannot hold).
func newSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// newParticipantToken makes a participant's token.
func newParticipantToken(id int64) string {
	return participantTokenPrefix + strconv.FormatInt(id, 10) + "_" + newSecret()
}

// participantOf reads the account id out of a participant token.
func participantOf(token string) (int64, bool) {
	rest, ok := strings.CutPrefix(token, participantTokenPrefix)
	if !ok {
		return 0, false
	}
	idText, _, ok := strings.Cut(rest, "_")
	id, err := strconv.ParseInt(idText, 10, 64)
	return id, ok && err == nil && id > 0
}

// credentials reads a token from the request: the Authorization header
// (Bearer), or the sign-in cookie, which holds a session id (session true).
// The cookie counts for a write only with the dashboard's request header (a
// cross-site form or a cross-site fetch cannot send it without the server's
// consent, which it never gives); a read (GET, HEAD) takes the cookie alone
// when cookieRead is set, so that a signed-in browser can open a log link.
func credentials(r *http.Request, cookieRead bool) (token string, session, present bool, err error) {
	if h := r.Header.Get("Authorization"); h != "" {
		token, ok := strings.CutPrefix(h, "Bearer ")
		if !ok {
			return "", false, true, &games.Error{Code: games.EUnauthorized, Message: "Authorization must be 'Bearer <token>'", Field: "Authorization"}
		}
		return token, false, true, nil
	}
	c, cerr := r.Cookie(sessionCookieName(r))
	if cerr != nil || c.Value == "" {
		return "", false, false, nil
	}
	safe := r.Method == http.MethodGet || r.Method == http.MethodHead
	if r.Header.Get(csrfHeader) == csrfValue || cookieRead && safe {
		return c.Value, true, true, nil
	}
	return "", false, false, nil
}

// identify is who the request's credentials belong to: a Bearer token under
// the sign-in limits (authenticate), or a session cookie (a session signed
// out, expired or opened with a token since replaced is a 401).
func (s *Server) identify(r *http.Request, token string, session bool) (caller, error) {
	if !session {
		return s.authenticate(r.Context(), clientAddr(r), token)
	}
	return s.sessionCaller(r.Context(), token)
}

// authenticate finds who a token belongs to, under the sign-in limits: a
// 429 error when the address is over its limit, a
// 403 error for a wrong token (counted as a failure).
func (s *Server) authenticate(ctx context.Context, addr, token string) (caller, error) {
	now := time.Now()
	if wait, blocked := s.signIns.blocked(addr, now); blocked {
		return caller{}, tooMany("too many failed sign-ins from this address: try again in %s s", wait)
	}
	if id, ok := participantOf(token); ok {
		name, hash, err := s.DB.ParticipantTokenHash(ctx, id)
		if err != nil && games.ErrorCode(err) != games.ENotFound {
			return caller{}, err
		}
		if err == nil && hash != "" && subtle.ConstantTimeCompare([]byte(HashToken(token)), []byte(hash)) == 1 {
			return caller{ID: id, Name: name}, nil
		}
		s.signIns.failed(addr, now)
		return caller{}, &games.Error{Code: games.EForbidden, Message: "wrong token", Field: "Authorization"}
	}
	if s.TokenOK(token) {
		return caller{Admin: true, Name: "admin"}, nil
	}
	s.signIns.failed(addr, now)
	// Not "wrong admin token": a student who mistyped theirs would think it
	// was taken for the admin's.
	return caller{}, &games.Error{Code: games.EForbidden, Message: "this token is neither a valid participant token (those start with " + participantTokenPrefix + ") nor the admin token", Field: "Authorization"}
}

// limitedError is a sign-in refused because its address or account is over
// its limit, and how long until it may try again.
type limitedError struct {
	err  *games.Error
	wait time.Duration
}

func (e *limitedError) Error() string { return e.err.Message }
func (e *limitedError) Unwrap() error { return e.err }

func tooMany(format string, wait time.Duration) *limitedError {
	return &limitedError{err: &games.Error{Code: games.ETooMany, Message: fmt.Sprintf(format, retryAfter(wait)), Field: "Authorization"}, wait: wait}
}

// writeAuthError writes an authentication error, with Retry-After on a 429.
func (s *Server) writeAuthError(w http.ResponseWriter, r *http.Request, err error) {
	var l *limitedError
	if errors.As(err, &l) {
		w.Header().Set("Retry-After", retryAfter(l.wait))
		err = l.err
	}
	s.writeError(w, r, err)
}

// member lets a request through with the admin's or a participant's token;
// the handler finds who with callerOf.
func (s *Server) member(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, session, present, err := credentials(r, false)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if !present || token == "" {
			if wait, blocked := s.signIns.blocked(clientAddr(r), time.Now()); blocked {
				s.writeAuthError(w, r, tooMany("too many failed sign-ins from this address: try again in %s s", wait))
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="taikai"`)
			s.writeError(w, r, &games.Error{Code: games.EUnauthorized, Message: "this needs the admin's or a participant's token: Authorization: Bearer <token>", Field: "Authorization"})
			return
		}
		c, err := s.identify(r, token, session)
		if err != nil {
			if session {
				clearSession(w, r) // stop the browser sending a dead session
			}
			s.writeAuthError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)))
	})
}

// reader finds who makes a read that anyone may make but whose answer
// depends on who asks (an engine's log): a wrong or limited token makes the
// caller nobody, and still counts as a failed sign-in, so that a public page
// is no way around the limits.
func (s *Server) reader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, s.softCaller(r))))
	})
}

// softCaller is the request's caller, nobody when its token is missing,
// wrong or over the limits.
func (s *Server) softCaller(r *http.Request) caller {
	token, session, present, err := credentials(r, true)
	if err != nil || !present || token == "" {
		return caller{}
	}
	c, err := s.identify(r, token, session)
	if err != nil {
		return caller{}
	}
	return c
}

// setSession signs a browser in: the token goes into an HTTP-only cookie
// that is sent to this site only (SameSite=Strict), and only over HTTPS when
// the request came over TLS or through a proxy that says it did.
func setSession(w http.ResponseWriter, r *http.Request, id string) {
	c := &http.Cookie{Name: sessionCookieName(r), Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: overTLS(r)}
	if id == "" {
		c.MaxAge = -1
	} else {
		c.MaxAge = int(sessionMaxAge / time.Second)
	}
	http.SetCookie(w, c)
}

// clearSession tells the browser to forget its session cookie.
func clearSession(w http.ResponseWriter, r *http.Request) { setSession(w, r, "") }

// sessionCookieName is the session cookie's name: over HTTPS the __Host-
// one, which a browser takes only from a secure page, for the whole host,
// without Domain; the other name is neither read nor set there, so a
// plain-HTTP page on the same host cannot plant a session.
func sessionCookieName(r *http.Request) string {
	if overTLS(r) {
		return SecureSessionCookie
	}
	return SessionCookie
}

// startSession opens a server-side session for c, who signed in with token,
// and sets its cookie: a random id, of which the server keeps only the hash.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, c caller, token string) error {
	id := newSecret()
	err := s.DB.CreateSession(r.Context(), HashToken(id), storage.Session{
		ParticipantID: c.ID, CredentialHash: HashToken(token), ExpiresAt: time.Now().Add(sessionMaxAge)})
	if err != nil {
		return err
	}
	setSession(w, r, id)
	return nil
}

// sessionCaller is who the session with this cookie id signs in: nobody
// (a 401) when it was never opened, was signed out, has expired, or was
// opened with a token that is no longer the account's.
func (s *Server) sessionCaller(ctx context.Context, id string) (caller, error) {
	gone := &games.Error{Code: games.EUnauthorized, Message: "signed out, or the session expired: sign in again", Field: "Authorization"}
	ss, err := s.DB.SessionByHash(ctx, HashToken(id))
	if games.ErrorCode(err) == games.ENotFound {
		return caller{}, gone
	}
	if err != nil {
		return caller{}, err
	}
	if ss.ParticipantID == 0 {
		if s.adminHash() == "" || subtle.ConstantTimeCompare([]byte(ss.CredentialHash), []byte(s.adminHash())) != 1 {
			return caller{}, gone
		}
		return caller{Admin: true, Name: "admin"}, nil
	}
	name, hash, err := s.DB.ParticipantTokenHash(ctx, ss.ParticipantID)
	if games.ErrorCode(err) == games.ENotFound {
		return caller{}, gone
	}
	if err != nil {
		return caller{}, err
	}
	if hash == "" || subtle.ConstantTimeCompare([]byte(ss.CredentialHash), []byte(hash)) != 1 {
		return caller{}, gone
	}
	return caller{ID: ss.ParticipantID, Name: name}, nil
}

// overTLS says whether the browser reached the server over HTTPS: directly,
// or through a proxy that sets X-Forwarded-Proto (a client that lies only
// makes its own cookie HTTPS-only).
func overTLS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// sessionJSON says who is signed in.
type sessionJSON struct {
	Admin       bool             `json:"admin"`
	Participant *participantRef  `json:"participant"`
	Submissions *submissionsJSON `json:"submissions,omitempty"`
}

type participantRef struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

func sessionOf(c caller) sessionJSON {
	out := sessionJSON{Admin: c.Admin}
	if c.ID > 0 {
		out.Participant = &participantRef{ID: c.ID, Name: c.Name}
	}
	return out
}

// getSession is GET /api/session: who the request's token or cookie belongs
// to (nobody: admin false, participant null), and whether submissions are
// open.
func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	out := sessionOf(callerOf(r))
	sub, err := s.submissions(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out.Submissions = &sub
	writeJSON(w, http.StatusOK, out)
}

// signIn is POST /api/session {"token"}: the browser's sign-in. A right token
// (the admin's or a participant's) sets the session cookie.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(csrfHeader) != csrfValue {
		s.writeError(w, r, &games.Error{Code: games.EForbidden, Message: "signing in needs the dashboard's header X-Requested-With: taikai", Field: csrfHeader})
		return
	}
	var req struct {
		Token string `json:"token"`
	}
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	req.Token = strings.TrimSpace(req.Token)
	if req.Token == "" {
		s.writeError(w, r, errInvalid("token", "token: enter your token"))
		return
	}
	c, err := s.authenticate(r.Context(), clientAddr(r), req.Token)
	if err != nil {
		var l *limitedError
		if errors.As(err, &l) {
			w.Header().Set("Retry-After", retryAfter(l.wait))
			err = l.err
		}
		if ge, ok := err.(*games.Error); ok {
			e := *ge
			e.Field = "token"
			err = &e
		}
		s.writeError(w, r, err)
		return
	}
	if err := s.startSession(w, r, c, req.Token); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sessionOf(c))
}

// signOut is DELETE /api/session: the session is ended on the server (its
// cookie, sent again, signs nobody in) and the cookie is cleared.
func (s *Server) signOut(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(csrfHeader) != csrfValue && r.Header.Get("Authorization") == "" {
		s.writeError(w, r, &games.Error{Code: games.EForbidden, Message: "signing out needs the dashboard's header X-Requested-With: taikai", Field: csrfHeader})
		return
	}
	if c, err := r.Cookie(sessionCookieName(r)); err == nil && c.Value != "" {
		if err := s.DB.DeleteSession(r.Context(), HashToken(c.Value)); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	clearSession(w, r)
	w.WriteHeader(http.StatusNoContent)
}
