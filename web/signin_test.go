package web_test

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/web"
)

// clientFrom is an HTTP client whose connections come from the loopback
// address local (127.0.0.2: another machine, as far as the server can tell).
func clientFrom(local string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 10 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

// 100 wrong admin tokens from one address within a second end in 429s with a
// Retry-After, and then even the right token is refused from there; from
// another address the right token still works (issue 21).
func TestWrongTokensAreRateLimited(t *testing.T) {
	s := newAPIServer(t)
	ask := func(c *http.Client, token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", s.URL+"/api/auth", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Retry-After")
	}
	attacker := clientFrom("127.0.0.1")
	codes := map[int]int{}
	start := time.Now()
	for range 100 {
		code, retry := ask(attacker, "guess")
		codes[code]++
		if code == http.StatusTooManyRequests && retry == "" {
			t.Fatal("429 without Retry-After")
		}
	}
	took := time.Since(start)
	t.Logf("100 wrong tokens in %v: %v", took, codes)
	if codes[http.StatusForbidden] > 10+int(took/(3*time.Second))+1 || codes[http.StatusTooManyRequests] < 80 {
		t.Errorf("answers %v, want at most the burst of 10 refused as wrong and the rest 429", codes)
	}
	if code, _ := ask(attacker, apiToken); code != http.StatusTooManyRequests {
		t.Errorf("the right token from the limited address: %d, want 429 until its bucket refills", code)
	}
	if code, _ := ask(clientFrom("127.0.0.2"), apiToken); code != http.StatusOK {
		t.Errorf("the right token from another address: %d, want 200", code)
	}
	if code, _ := ask(clientFrom("127.0.0.2"), "guess"); code != http.StatusForbidden {
		t.Errorf("a wrong token from another address: %d, want 403 (its own budget)", code)
	}
}

// signInFrom signs in (POST /api/session, the dashboard's way) from the
// client c and returns the status and the answer.
func signInFrom(t *testing.T, c *http.Client, url, token string) (int, *http.Response) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/api/session", strings.NewReader(fmt.Sprintf(`{"token":%q}`, token)))
	req.Header.Set("X-Requested-With", "taikai")
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp
}

// A participant's sign-ins are limited per failing address, never per
// account (issue 36, item 6): 100 wrong tokens for one account from one
// address within a second end in 429s there, and the right token still
// works from another address; wrong tokens for that account from many more
// addresses throttle those addresses, and the right token from yet another
// address still signs in.
func TestParticipantSignInsAreRateLimited(t *testing.T) {
	s := startSite(t)
	id, token := newMember(t, s, "Carol")
	wrong := fmt.Sprintf("tkp_%d_wrong-guess", id)

	attacker := clientFrom("127.0.0.1")
	codes := map[int]int{}
	start := time.Now()
	for range 100 {
		code, resp := signInFrom(t, attacker, s.URL, wrong)
		codes[code]++
		if code == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
			t.Fatal("429 without Retry-After")
		}
	}
	took := time.Since(start)
	t.Logf("100 wrong sign-ins in %v: %v", took, codes)
	if codes[http.StatusForbidden] > 10+int(took/(3*time.Second))+1 || codes[http.StatusTooManyRequests] < 80 {
		t.Errorf("answers %v, want at most the burst of 10 refused as wrong and the rest 429", codes)
	}
	if code, _ := signInFrom(t, clientFrom("127.0.0.2"), s.URL, token); code != http.StatusOK {
		t.Errorf("Carol's right token from another address: %d, want 200", code)
	}

	// Eight more addresses, eleven wrong tokens each: each address is
	// throttled, the account is not.
	locked := 0
	for i := 3; i <= 10; i++ {
		c := clientFrom(fmt.Sprintf("127.0.0.%d", i))
		for range 11 {
			signInFrom(t, c, s.URL, wrong)
		}
		if code, _ := signInFrom(t, c, s.URL, wrong); code != http.StatusTooManyRequests {
			t.Errorf("the 12th wrong token from 127.0.0.%d: %d, want 429", i, code)
		}
		if code, _ := signInFrom(t, clientFrom("127.0.0.20"), s.URL, token); code != http.StatusOK {
			locked++
		}
	}
	t.Logf("Carol's right token from a fresh address refused %d times of 8 while her account was attacked", locked)
	if locked != 0 {
		t.Errorf("Carol's right token from a fresh address after failures on her account from other addresses: refused %d of 8 times, want never", locked)
	}
	// Other accounts and the admin are not affected.
	if code, _ := signInFrom(t, clientFrom("127.0.0.21"), s.URL, s.token); code != http.StatusOK {
		t.Errorf("the admin token from a fresh address: %d, want 200", code)
	}
}

// A write with the sign-in cookie needs the dashboard's header (CSRF): a
// cross-site form cannot send it. The cookie the sign-in sets is HTTP-only
// and SameSite=Strict, and Secure behind a proxy that says HTTPS.
func TestSessionCookieAndCSRF(t *testing.T) {
	s := startSite(t)
	_, token := newMember(t, s, "Dave")

	_, resp := signInFrom(t, http.DefaultClient, s.URL, token)
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == web.SessionCookie {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Secure || cookie.Value == token {
		t.Fatalf("sign-in cookie %+v, want a session id (not the token), HTTP-only, SameSite=Strict, not Secure over plain HTTP", cookie)
	}
	req, _ := http.NewRequest("POST", s.URL+"/api/session", strings.NewReader(fmt.Sprintf(`{"token":%q}`, token)))
	req.Header.Set("X-Requested-With", "taikai")
	req.Header.Set("X-Forwarded-Proto", "https")
	behind, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	behind.Body.Close()
	if cs := behind.Cookies(); len(cs) != 1 || !cs[0].Secure {
		t.Errorf("behind an HTTPS proxy the cookie %+v, want Secure", cs)
	}

	register := func(header bool, name string) int {
		req, _ := http.NewRequest("POST", s.URL+"/api/engines", strings.NewReader(fmt.Sprintf(`{"name":%q,"game":"othello","builtin":"othello-random"}`, name)))
		req.AddCookie(cookie)
		req.Header.Set("Content-Type", "application/json")
		if header {
			req.Header.Set("X-Requested-With", "taikai")
		}
		return s.do(t, req, nil)
	}
	if code := register(false, "csrf"); code != http.StatusUnauthorized {
		t.Errorf("a write with the cookie and without the header: %d, want 401", code)
	}
	if code := register(true, "dave-random"); code != http.StatusCreated {
		t.Errorf("a write with the cookie and the header: %d, want 201", code)
	}
	// Signing in without the header is refused too (a login CSRF).
	req, _ = http.NewRequest("POST", s.URL+"/api/session", strings.NewReader(fmt.Sprintf(`{"token":%q}`, token)))
	if code := s.do(t, req, nil); code != http.StatusForbidden {
		t.Errorf("a sign-in without the header: %d, want 403", code)
	}
}

// A CSV of names is taken all or none, and each error names its line.
func TestParticipantsCSVErrors(t *testing.T) {
	s := startSite(t)
	if code := postCSV(t, s, "Erin\n", nil); code != http.StatusCreated {
		t.Fatalf("create Erin: %d", code)
	}
	long := strings.Repeat("x", 65)
	for _, tc := range []struct {
		csv, want string
		line      int
	}{
		{"Ann\nBen\nann\n", `line 3: the name "ann" is already on line 1`, 3},
		{"id,name\n1,Cat\n2,\n", "line 3: the name is empty", 3},
		{"Ann\n\"Be\"n\"\n", "line 2: ", 2},
		{"Ann\n" + long + "\n", "line 2: the name \"" + long + "\" is longer than 64 bytes", 2},
		{"Ann\nBen\nErin\n", `line 3: a participant named "Erin" already exists`, 3},
		{"name\n\n", "no names in the file", 0},
		{"Ann\nB\x01n\n", "line 2: the name \"B\\x01n\" has a character that cannot be printed", 2},
	} {
		var ae errorAnswer
		code := postCSV(t, s, tc.csv, &ae)
		if code/100 != 4 || ae.Error.Field != "csv" || !strings.Contains(ae.Error.Message, tc.want) || ae.Error.Line != tc.line {
			t.Errorf("CSV %q: %d %+v, want a 4xx on field csv, line %d, saying %q", tc.csv, code, ae.Error, tc.line, tc.want)
		}
	}
	var list struct{ Participants []struct{ Name string } }
	s.mustCall(t, "GET", "/api/participants", nil, &list)
	if len(list.Participants) != 1 {
		t.Errorf("participants after refused CSVs: %+v, want Erin alone", list.Participants)
	}
}
