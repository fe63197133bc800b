package web_test

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/taikai-dev/taikai/tournament/cluster"
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
	e, err := cluster.StartEmbedded("127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	creds, err := cluster.OpenCredentials(filepath.Join(t.TempDir(), "nats-workers.json"), e)
	if err != nil {
		t.Fatal(err)
	}
	s := startSite(t, func(srv *web.Server) { srv.WorkerCredentials = creds })
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
