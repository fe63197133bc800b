package web_test

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/taikai-dev/taikai/tournament/cluster"
	"github.com/taikai-dev/taikai/tournament/cluster/fleet"
	"github.com/taikai-dev/taikai/web"
)

// The admin's REST calls for the workers' own NATS credentials (issue 36):
// issued once with the secret, listed, revoked; 409 when the server's NATS
// is not its own; refused without the admin token.
func TestWorkerCredentialsAPI(t *testing.T) {
	plain := startSite(t)
	if code := plain.call(t, "POST", "/api/workers/credentials", map[string]string{"name": "w1"}, nil); code != http.StatusConflict {
		t.Errorf("credentials without an embedded NATS: %d, want 409", code)
	}
	_, s := credentialsSite(t)
	var got struct{ Name, Secret string }
	if code := s.call(t, "POST", "/api/workers/credentials", map[string]string{"name": "w1"}, &got); code != http.StatusCreated || got.Name != "w1" || len(got.Secret) != 64 {
		t.Fatalf("issue: %d %+v", code, got)
	}
	if code := s.call(t, "POST", "/api/workers/credentials", map[string]string{"name": "a.b"}, nil); code != http.StatusBadRequest {
		t.Errorf("a name that is not one subject token: %d, want 400", code)
	}
	var list struct{ Names []string }
	s.mustCall(t, "GET", "/api/workers/credentials", nil, &list)
	if len(list.Names) != 1 || list.Names[0] != "w1" {
		t.Errorf("names %v, want [w1]", list.Names)
	}
	req, _ := http.NewRequest("POST", s.URL+"/api/workers/credentials", nil)
	if code := s.do(t, req, nil); code != http.StatusUnauthorized {
		t.Errorf("without the admin token: %d, want 401", code)
	}
	if code := s.call(t, "DELETE", "/api/workers/credentials/w1", nil, nil); code != http.StatusNoContent {
		t.Errorf("revoke: %d, want 204", code)
	}
	if code := s.call(t, "DELETE", "/api/workers/credentials/w1", nil, nil); code != http.StatusNotFound {
		t.Errorf("revoke again: %d, want 404", code)
	}
}

// A worker enrolls itself with the join token (issue 36: the compose
// workers' own credentials): POST /api/workers/enroll answers a secret that
// connects to the server's NATS as that worker; a wrong or missing join
// token is 401, a name that has credentials 409 (the join token cannot take
// over a worker), and without a join token on the server enrollment is off
// (403).
func TestWorkerEnrollAPI(t *testing.T) {
	const join = "join-token-0123456789abcdef"
	t.Setenv(cluster.TokenEnv, "")
	t.Setenv(fleet.JoinTokenEnv, join)
	e, s := credentialsSite(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	for _, bad := range []string{"", "wrong", s.token} {
		if _, err := cluster.Enroll(ctx, s.URL, bad, "w1", log); err == nil || !strings.Contains(err.Error(), "401") {
			t.Errorf("join token %q: %v, want 401", bad, err)
		}
	}
	secret, err := cluster.Enroll(ctx, s.URL, join, "w1", log)
	if err != nil || len(secret) != 64 {
		t.Fatalf("enroll w1: %q %v", secret, err)
	}
	if _, err := cluster.Enroll(ctx, s.URL, join, "w1", log); err == nil || !strings.Contains(err.Error(), "409") {
		t.Errorf("enroll w1 again: %v, want 409", err)
	}
	if _, err := cluster.Enroll(ctx, s.URL, join, "a.b", log); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("enroll a.b: %v, want 400", err)
	}
	nc, err := nats.Connect(e.URL(), append(cluster.WorkerAuth("w1", secret), nats.Timeout(10*time.Second), nats.NoReconnect())...)
	if err != nil {
		t.Fatalf("w1's enrolled secret: %v", err)
	}
	nc.Close()
	var list struct{ Names []string }
	s.mustCall(t, "GET", "/api/workers/credentials", nil, &list)
	if len(list.Names) != 1 || list.Names[0] != "w1" {
		t.Errorf("names %v, want [w1]", list.Names)
	}

	// Wrong join tokens are failed sign-ins of their address: 429 soon.
	limited := 0
	for i := 0; i < 20 && limited == 0; i++ {
		req, _ := http.NewRequest("POST", s.URL+"/api/workers/enroll", strings.NewReader(`{"name":"w9"}`))
		req.Header.Set("Authorization", "Bearer guess")
		if code := s.do(t, req, nil); code == http.StatusTooManyRequests {
			limited = i + 1
		}
	}
	if limited == 0 {
		t.Error("20 wrong join tokens from one address: never 429")
	}
	t.Logf("wrong join tokens: 429 at the %dth", limited)

	// A server without a join token.
	t.Setenv(fleet.JoinTokenEnv, "")
	_, off := credentialsSite(t)
	if _, err := cluster.Enroll(ctx, off.URL, join, "w1", log); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("enroll without a join token on the server: %v, want 403", err)
	}
}

// credentialsSite is a site whose workers' credentials live on an embedded
// NATS server of its own.
func credentialsSite(t *testing.T) (*cluster.Embedded, *site) {
	t.Helper()
	e, err := cluster.StartEmbedded("127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	creds, err := cluster.OpenCredentials(filepath.Join(t.TempDir(), "nats-workers.json"), e)
	if err != nil {
		t.Fatal(err)
	}
	return e, startSite(t, func(srv *web.Server) { srv.WorkerCredentials = creds })
}
