package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// sessionCookie is the cookie a sign-in answer set (the name depends on
// HTTPS), nil if none.
func sessionCookie(resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if strings.Contains(c.Name, "taikai") && c.MaxAge >= 0 && c.Value != "" {
			return c
		}
	}
	return nil
}

// Signing out revokes the session (issue 36, item 7): the cookie is a
// random session id, not the token; after DELETE /api/session the old
// cookie, sent again, signs nobody in and writes nothing; the token itself
// (Bearer) still works.
func TestSignOutRevokesTheCookie(t *testing.T) {
	s := startSite(t)
	_, token := newMember(t, s, "Fumi")
	code, resp := signInFrom(t, http.DefaultClient, s.URL, token)
	cookie := sessionCookie(resp)
	if code != http.StatusOK || cookie == nil {
		t.Fatalf("sign-in: %d, cookies %v", code, resp.Cookies())
	}
	if strings.Contains(cookie.Value, token) || strings.Contains(token, cookie.Value) {
		t.Errorf("the cookie %q carries the token %q", cookie.Value, token)
	}
	who := func() string {
		t.Helper()
		req, _ := http.NewRequest("GET", s.URL+"/api/session", nil)
		req.AddCookie(cookie)
		req.Header.Set("X-Requested-With", "taikai")
		var a struct {
			Participant *struct{ Name string }
		}
		s.do(t, req, &a)
		if a.Participant == nil {
			return ""
		}
		return a.Participant.Name
	}
	write := func(name string) int {
		t.Helper()
		req, _ := http.NewRequest("POST", s.URL+"/api/engines", strings.NewReader(fmt.Sprintf(`{"name":%q,"game":"othello","builtin":"othello-random"}`, name)))
		req.AddCookie(cookie)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Requested-With", "taikai")
		return s.do(t, req, nil)
	}
	if got := who(); got != "Fumi" {
		t.Fatalf("signed in as %q, want Fumi", got)
	}
	if code := write("fumi-1"); code != http.StatusCreated {
		t.Fatalf("a write with the cookie: %d, want 201", code)
	}
	req, _ := http.NewRequest("DELETE", s.URL+"/api/session", nil)
	req.AddCookie(cookie)
	req.Header.Set("X-Requested-With", "taikai")
	if code := s.do(t, req, nil); code != http.StatusNoContent {
		t.Fatalf("sign-out: %d", code)
	}
	reused := 0
	if got := who(); got != "" {
		reused++
		t.Errorf("the old cookie after sign-out signs in %q, want nobody", got)
	}
	if code := write("fumi-2"); code != http.StatusUnauthorized && code != http.StatusForbidden {
		reused++
		t.Errorf("a write with the old cookie after sign-out: %d, want 401 or 403", code)
	}
	t.Logf("uses of the old cookie that worked after sign-out: %d of 2", reused)
	if code := (member{s: s, token: token}).call(t, "GET", "/api/session", nil, nil); code != http.StatusOK {
		t.Errorf("the token itself after sign-out: %d, want 200", code)
	}
}

// Over HTTPS (here: behind a proxy that says so) the cookie is
// __Host-taikai_session: Secure, Path=/, no Domain, so that a plain-HTTP page
// on the same host cannot set it.
func TestHostCookieOverHTTPS(t *testing.T) {
	s := startSite(t)
	req, _ := http.NewRequest("POST", s.URL+"/api/session", strings.NewReader(fmt.Sprintf(`{"token":%q}`, s.token)))
	req.Header.Set("X-Requested-With", "taikai")
	req.Header.Set("X-Forwarded-Proto", "https")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	c := sessionCookie(resp)
	if c == nil || c.Name != "__Host-taikai_session" || !c.Secure || c.Path != "/" || c.Domain != "" || !c.HttpOnly {
		t.Fatalf("cookie over HTTPS %+v, want __Host-taikai_session, Secure, Path=/, no Domain, HTTP-only", c)
	}
	// The plain name is not read over HTTPS.
	get := func(name string) bool {
		req, _ := http.NewRequest("GET", s.URL+"/api/session", nil)
		req.AddCookie(&http.Cookie{Name: name, Value: c.Value})
		req.Header.Set("X-Requested-With", "taikai")
		req.Header.Set("X-Forwarded-Proto", "https")
		var a struct{ Admin bool }
		s.do(t, req, &a)
		return a.Admin
	}
	if !get("__Host-taikai_session") {
		t.Error("the __Host- cookie over HTTPS does not sign in")
	}
	if get("taikai_session") {
		t.Error("the plain-named cookie over HTTPS signs in: a plain-HTTP page could set it")
	}
}
