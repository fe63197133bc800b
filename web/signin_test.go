package web_test

import (
	"net"
	"net/http"
	"testing"
	"time"
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
