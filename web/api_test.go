package web_test

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/web"
)

const apiToken = "test-token"

// apiServer runs the web server in-process on a real SQLite file; no games are
// played (the tournaments it creates are not started).
type apiServer struct {
	*httptest.Server
	db   *storage.DB
	data string
}

func newAPIServer(tb testing.TB, options ...func(*web.Server)) *apiServer {
	tb.Helper()
	dir := tb.TempDir()
	db, err := storage.Open(context.Background(), filepath.Join(dir, "taikai.db"))
	if err != nil {
		tb.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	hub := web.NewLive(db, nil)
	svc := &tournament.Service{Store: db, Runner: &tournament.Runner{Launcher: &engines.Launcher{}}, Sink: hub, DataDir: data}
	srv := &web.Server{DB: db, Service: svc, Live: hub, Token: apiToken, DataDir: data, Metrics: web.NewMetrics()}
	for _, o := range options {
		o(srv)
	}
	h, err := srv.Handler()
	if err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewServer(h)
	tb.Cleanup(func() {
		ts.Close()
		srv.Close() // the background checks
		svc.Close()
		hub.Close()
		db.Close()
	})
	return &apiServer{Server: ts, db: db, data: data}
}

type apiRequest struct {
	method, path string
	body         io.Reader
	contentType  string
	auth         string // "" for the right token, "none" for no header
}

func (s *apiServer) do(tb testing.TB, r apiRequest) (int, []byte) {
	tb.Helper()
	req, err := http.NewRequest(r.method, s.URL+r.path, r.body)
	if err != nil {
		tb.Fatal(err)
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	switch r.auth {
	case "":
		req.Header.Set("Authorization", "Bearer "+apiToken)
	case "none":
	default:
		req.Header.Set("Authorization", r.auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, body
}

func (s *apiServer) post(tb testing.TB, path, body string) map[string]any {
	tb.Helper()
	code, b := s.do(tb, apiRequest{method: "POST", path: path, body: strings.NewReader(body), contentType: "application/json"})
	if code != http.StatusCreated {
		tb.Fatalf("POST %s %s: %d %s", path, body, code, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	return m
}

// multipartBody builds an upload: a meta part (if meta != "") and file parts.
func multipartBody(tb testing.TB, meta string, files map[string][]byte, extra ...string) (io.Reader, string) {
	tb.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if meta != "" {
		pw, _ := w.CreateFormField("meta")
		pw.Write([]byte(meta))
	}
	for name, content := range files {
		fw, _ := w.CreateFormFile("file", name)
		fw.Write(content)
	}
	for _, name := range extra {
		pw, _ := w.CreateFormField(name)
		pw.Write([]byte("x"))
	}
	w.Close()
	return &buf, w.FormDataContentType()
}

type zipEntry struct {
	name string
	mode fs.FileMode
	body string
}

func zipOf(tb testing.TB, entries ...zipEntry) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		h.SetMode(e.mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			tb.Fatal(err)
		}
		w.Write([]byte(e.body))
	}
	zw.Close()
	return buf.Bytes()
}

func tgzOf(tb testing.TB, headers ...*tar.Header) []byte {
	tb.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, h := range headers {
		body := ""
		if h.Typeflag == tar.TypeReg {
			body = "content of " + h.Name
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(h); err != nil {
			tb.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// TestAPIRejectsBadRequests sends bad requests to every endpoint: each gets a
// 4xx with a JSON error naming what is wrong, none gets a 5xx, and nothing is
// half-written.
func TestAPIRejectsBadRequests(t *testing.T) {
	t.Parallel()
	s := newAPIServer(t)
	a := s.post(t, "/api/engines", `{"name":"alpha","game":"othello","builtin":"othello-random"}`)
	s.post(t, "/api/engines", `{"name":"beta","game":"othello","command":"./beta {host} {port}"}`)
	g := s.post(t, "/api/engines", `{"name":"gamma","game":"gomoku","builtin":"gomoku-random"}`)
	s.post(t, "/api/tournaments", fmt.Sprintf(`{"name":"t","game":"othello","engines":[%v,2]}`, a["id"]))
	gomokuID := g["id"]

	const meta = `{"name":"up","game":"othello","command":"java X.java {host}"}`
	upload := func(meta string, files map[string][]byte, extra ...string) (io.Reader, string) {
		return multipartBody(t, meta, files, extra...)
	}
	big := bytes.Repeat([]byte("a"), web.MaxUpload+1024)
	json := "application/json"
	type tc struct {
		name   string
		req    apiRequest
		status int
		field  string
	}
	cases := []tc{
		{"no token", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{}`), auth: "none"}, 401, "Authorization"},
		{"wrong token", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{}`), auth: "Bearer nope"}, 403, "Authorization"},
		{"not bearer", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{}`), auth: "Basic dTpw"}, 401, "Authorization"},
		{"bad JSON", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":`)}, 400, "body"},
		{"empty body", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(``)}, 400, "body"},
		{"JSON array", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`[1,2]`)}, 400, "body"},
		{"unknown field", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"nam":"x","game":"othello"}`)}, 400, "nam"},
		{"trailing data", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":"x","game":"othello","builtin":"othello-random"} {}`)}, 400, "body"},
		{"empty name", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":" ","game":"othello","builtin":"othello-random"}`)}, 400, "name"},
		{"name wrong type", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":5,"game":"othello"}`)}, 400, "name"},
		{"missing game", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":"x","builtin":"othello-random"}`)}, 400, "game"},
		{"unknown game", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":"x","game":"chess","command":"x"}`)}, 400, "game"},
		{"unknown protocol", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":"x","game":"othello","protocol":"uci","command":"x"}`)}, 400, "protocol"},
		{"protocol of another game", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":"x","game":"othello","protocol":"gomoku-turn","command":"x"}`)}, 400, "protocol"},
		{"empty command", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":"x","game":"othello","command":""}`)}, 400, "command"},
		{"no command", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":"x","game":"othello"}`)}, 400, "command"},
		{"command wrong type", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":"x","game":"othello","command":5}`)}, 400, "command"},
		{"unknown placeholder", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":"x","game":"othello","command":"prog {hots}"}`)}, 400, "command"},
		{"unclosed placeholder", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":"x","game":"othello","command":["prog","{host"]}`)}, 400, "command"},
		{"unterminated quote", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":"x","game":"othello","command":"prog 'abc"}`)}, 400, "command"},
		{"command and builtin", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":"x","game":"othello","command":"x","builtin":"othello-random"}`)}, 400, "command"},
		{"unknown builtin", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":"x","game":"othello","builtin":"stockfish"}`)}, 400, "builtin"},
		{"builtin of another game", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":"x","game":"gomoku","builtin":"othello-random"}`)}, 400, "builtin"},
		{"port out of range", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":"x","game":"othello","command":"x","port":80}`)}, 400, "port"},
		{"port wrong type", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":"x","game":"othello","command":"x","port":"46000"}`)}, 400, "port"},
		{"duplicate name", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`{"name":"alpha","game":"othello","builtin":"othello-greedy"}`)}, 409, "name"},
		{"body over 1 MiB", apiRequest{method: "POST", path: "/api/engines", body: bytes.NewReader(append([]byte(`{"name":"`), bytes.Repeat([]byte("n"), 2<<20)...))}, 413, "body"},
		{"content type xml", apiRequest{method: "POST", path: "/api/engines", body: strings.NewReader(`<engine/>`), contentType: "application/xml"}, 415, "Content-Type"},
	}
	uploads := []struct {
		name   string
		meta   string
		files  map[string][]byte
		extra  []string
		status int
		field  string
	}{
		{"upload without meta", "", map[string][]byte{"a.py": []byte("print(1)")}, nil, 400, "meta"},
		{"upload meta bad JSON", `{"name":`, map[string][]byte{"a.py": []byte("x")}, nil, 400, "meta"},
		{"upload meta unknown field", `{"name":"up","game":"othello","cmd":"x"}`, map[string][]byte{"a.py": []byte("x")}, nil, 400, "cmd"},
		{"upload meta bad protocol", `{"name":"up","game":"gomoku","protocol":"othello-board","command":"x"}`, map[string][]byte{"a.py": []byte("x")}, nil, 400, "protocol"},
		{"upload without file", meta, nil, nil, 400, "file"},
		{"upload unknown part", meta, map[string][]byte{"a.py": []byte("x")}, []string{"extra"}, 400, "extra"},
		{"zip escaping", meta, map[string][]byte{"e.zip": zipOf(t, zipEntry{"../evil.sh", 0o755, "rm -rf /"})}, nil, 400, "file"},
		{"zip absolute path", meta, map[string][]byte{"e.zip": zipOf(t, zipEntry{"/etc/evil", 0o644, "x"})}, nil, 400, "file"},
		{"zip with symlink", meta, map[string][]byte{"e.zip": zipOf(t, zipEntry{"ok.txt", 0o644, "x"}, zipEntry{"link", fs.ModeSymlink | 0o777, "/etc/passwd"})}, nil, 400, "file"},
		{"empty zip", meta, map[string][]byte{"e.zip": zipOf(t)}, nil, 400, "file"},
		{"zip of only a directory", meta, map[string][]byte{"e.zip": zipOf(t, zipEntry{"dir/", fs.ModeDir | 0o755, ""})}, nil, 400, "file"},
		{"not a zip", meta, map[string][]byte{"e.zip": []byte("this is not a zip")}, nil, 400, "file"},
		{"tgz with symlink", meta, map[string][]byte{"e.tar.gz": tgzOf(t, &tar.Header{Name: "ok", Typeflag: tar.TypeReg, Mode: 0o644}, &tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/etc/shadow"})}, nil, 400, "file"},
		{"tgz with hard link", meta, map[string][]byte{"e.tgz": tgzOf(t, &tar.Header{Name: "h", Typeflag: tar.TypeLink, Linkname: "/etc/shadow"})}, nil, 400, "file"},
		{"tgz escaping", meta, map[string][]byte{"e.tar.gz": tgzOf(t, &tar.Header{Name: "a/../../x", Typeflag: tar.TypeReg, Mode: 0o644})}, nil, 400, "file"},
		{"tgz device", meta, map[string][]byte{"e.tar.gz": tgzOf(t, &tar.Header{Name: "dev", Typeflag: tar.TypeChar, Mode: 0o644})}, nil, 400, "file"},
		{"empty tgz", meta, map[string][]byte{"e.tar.gz": tgzOf(t)}, nil, 400, "file"},
		{"not gzip", meta, map[string][]byte{"e.tgz": []byte("plain")}, nil, 400, "file"},
		{"file name dot-dot", meta, map[string][]byte{"..": []byte("x")}, nil, 400, "file"},
		{"upload over 64 MiB", meta, map[string][]byte{"big.bin": big}, nil, 413, "file"},
		{"upload duplicate name", `{"name":"alpha","game":"othello","command":"x"}`, map[string][]byte{"a.py": []byte("x")}, nil, 409, "name"},
	}
	for _, u := range uploads {
		body, ct := upload(u.meta, u.files, u.extra...)
		cases = append(cases, tc{u.name, apiRequest{method: "POST", path: "/api/engines", body: body, contentType: ct}, u.status, u.field})
	}
	cases = append(cases, []tc{
		{"engine id not a number", apiRequest{method: "GET", path: "/api/engines/abc"}, 404, "id"},
		{"engine not found", apiRequest{method: "GET", path: "/api/engines/999"}, 404, ""},
		{"delete engine not found", apiRequest{method: "DELETE", path: "/api/engines/999"}, 404, ""},
		{"delete without token", apiRequest{method: "DELETE", path: "/api/engines/1", auth: "none"}, 401, "Authorization"},
		{"delete engine in a pending tournament", apiRequest{method: "DELETE", path: "/api/engines/1"}, 409, ""},
		{"tournament without token", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{}`), auth: "none"}, 401, "Authorization"},
		{"tournament empty name", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"game":"othello","engines":[1,2]}`)}, 400, "name"},
		{"tournament unknown game", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"go","engines":[1,2]}`)}, 400, "game"},
		{"tournament no engines", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello"}`)}, 400, "engines"},
		{"tournament one engine", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1]}`)}, 400, "engines"},
		{"tournament engine twice", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,1]}`)}, 400, "engines"},
		{"tournament unknown engine", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,77]}`)}, 400, "engines"},
		{"tournament engine of another game", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(fmt.Sprintf(`{"name":"t","game":"othello","engines":[1,%v]}`, gomokuID))}, 400, "engines"},
		{"tournament engines wrong type", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":"1,2"}`)}, 400, "engines"},
		{"games_per_pair negative", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,2],"games_per_pair":-2}`)}, 400, "games_per_pair"},
		{"games_per_pair too many", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,2],"games_per_pair":100000}`)}, 400, "games_per_pair"},
		{"concurrency too high", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,2],"concurrency":1000}`)}, 400, "concurrency"},
		{"move_time_ms negative", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,2],"move_time_ms":-5}`)}, 400, "move_time_ms"},
		{"move_time_ms wrong type", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,2],"move_time_ms":"10s"}`)}, 400, "move_time_ms"},
		{"othello with a rule", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,2],"rule":"renju"}`)}, 400, "rule"},
		{"gomoku unknown rule", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(fmt.Sprintf(`{"name":"t","game":"gomoku","engines":[%v,3],"rule":"pente"}`, gomokuID))}, 400, "rule"},
		{"checkers unknown rule", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"checkers","engines":[1,2],"rule":"international"}`)}, 400, "rule"},
		{"checkers engine of another game", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"checkers","engines":[1,2]}`)}, 400, "engines"},
		{"gomoku size", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(fmt.Sprintf(`{"name":"t","game":"gomoku","engines":[%v,3],"size":30}`, gomokuID))}, 400, "size"},
		{"on_timeout unknown", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,2],"on_timeout":"cry"}`)}, 400, "on_timeout"},
		{"board_order unknown", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,2],"board_order":"diagonal"}`)}, 400, "board_order"},
		{"start wrong type", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,2],"start":"yes"}`)}, 400, "start"},
		{"start unknown tournament", apiRequest{method: "POST", path: "/api/tournaments/999/start"}, 404, ""},
		{"cancel unknown tournament", apiRequest{method: "POST", path: "/api/tournaments/999/cancel"}, 404, ""},
		{"start without token", apiRequest{method: "POST", path: "/api/tournaments/1/start", auth: "none"}, 401, "Authorization"},
		{"tournament id not a number", apiRequest{method: "GET", path: "/api/tournaments/xyz"}, 404, "id"},
		{"standings of unknown tournament", apiRequest{method: "GET", path: "/api/tournaments/999/standings"}, 404, ""},
		{"crosstable of unknown tournament", apiRequest{method: "GET", path: "/api/tournaments/999/crosstable"}, 404, ""},
		{"games bad status", apiRequest{method: "GET", path: "/api/tournaments/1/games?status=bogus"}, 400, "status"},
		{"games bad limit", apiRequest{method: "GET", path: "/api/tournaments/1/games?limit=-1"}, 400, "limit"},
		{"games bad engine", apiRequest{method: "GET", path: "/api/tournaments/1/games?engine=abc"}, 400, "engine"},
		{"game not found", apiRequest{method: "GET", path: "/api/games/999"}, 404, ""},
		{"game log bad color", apiRequest{method: "GET", path: "/api/games/1/log/purple"}, 404, "color"},
		{"openings unknown suite", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,2],"openings":{"suite":"xot"}}`)}, 400, "openings.suite"},
		{"openings no suite", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,2],"openings":{}}`)}, 400, "openings.suite"},
		{"openings uploaded suite not found", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,2],"openings":{"suite_id":99}}`)}, 400, "openings.suite_id"},
		{"openings file", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,2],"openings":{"file":"/etc/passwd"}}`)}, 400, "openings.file"},
		{"openings bad order", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,2],"openings":{"suite":"builtin","order":"shuffle"}}`)}, 400, "openings.order"},
		{"openings odd games_per_pair", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,2],"games_per_pair":3,"openings":{"suite":"builtin"}}`)}, 400, "games_per_pair"},
		{"sprt bad", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,2],"sprt":"elo0=5 elo1=0"}`)}, 400, "sprt"},
		{"sprt three engines", apiRequest{method: "POST", path: "/api/tournaments", body: strings.NewReader(`{"name":"t","game":"othello","engines":[1,2,3],"sprt":"elo0=0 elo1=5"}`)}, 400, "sprt"},
		{"suite bad line", apiRequest{method: "POST", path: "/api/openings", body: strings.NewReader(`{"name":"s","game":"othello","text":"f5d6\nf5d6a1\n"}`)}, 400, "openings"},
		{"suite empty", apiRequest{method: "POST", path: "/api/openings", body: strings.NewReader(`{"name":"s","game":"othello","text":"# nothing\n"}`)}, 400, "openings"},
		{"suite no name", apiRequest{method: "POST", path: "/api/openings", body: strings.NewReader(`{"game":"othello","text":"f5\n"}`)}, 400, "name"},
		{"suite unknown game", apiRequest{method: "POST", path: "/api/openings", body: strings.NewReader(`{"name":"s","game":"go","text":"f5\n"}`)}, 400, "game"},
		{"suite without token", apiRequest{method: "POST", path: "/api/openings", body: strings.NewReader(`{"name":"s","game":"othello","text":"f5\n"}`), auth: "none"}, 401, "Authorization"},
		{"suite not found", apiRequest{method: "GET", path: "/api/openings/99"}, 404, ""},
		{"pairs of unknown tournament", apiRequest{method: "GET", path: "/api/tournaments/999/pairs"}, 404, ""},
		{"unknown endpoint", apiRequest{method: "GET", path: "/api/nothing"}, 404, ""},
		{"wrong method", apiRequest{method: "PUT", path: "/api/engines"}, 405, ""},
	}...)
	if len(cases) < 40 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		if c.req.contentType == "" && c.req.body != nil {
			c.req.contentType = json
		}
		code, body := s.do(t, c.req)
		var e struct {
			Error struct{ Code, Message, Field string }
		}
		if err := jsonUnmarshal(body, &e); err != nil || e.Error.Message == "" {
			t.Errorf("%s: status %d, body %q is not a JSON error", c.name, code, body)
			continue
		}
		if code != c.status || e.Error.Field != c.field {
			t.Errorf("%s: got %d field %q (%s), want %d field %q", c.name, code, e.Error.Field, e.Error.Message, c.status, c.field)
		}
		if code >= 500 {
			t.Errorf("%s: server error %d", c.name, code)
		}
	}
	t.Logf("%d bad requests", len(cases))

	// Nothing half-written: the three engines and the one tournament only, and
	// no upload left on disk.
	list, _ := s.db.Engines(context.Background())
	if len(list) != 3 {
		t.Errorf("%d engines registered after the bad requests, want 3", len(list))
	}
	ts, _ := s.db.Tournaments(context.Background())
	if len(ts) != 1 {
		t.Errorf("%d tournaments after the bad requests, want 1", len(ts))
	}
	left, _ := os.ReadDir(filepath.Join(s.data, "engines"))
	for _, e := range left {
		t.Errorf("left on disk after failed uploads: %s", e.Name())
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// TestUploadEngine registers engines from a single file, a zip and a tar.gz;
// the files land in the engine's own directory with their execute bits.
func TestUploadEngine(t *testing.T) {
	s := newAPIServer(t)
	for _, u := range []struct {
		name  string
		files map[string][]byte
		want  []string
	}{
		{"single", map[string][]byte{"client.py": []byte("print('hi')\n")}, []string{"client.py"}},
		{"zip", map[string][]byte{"e.zip": zipOf(t, zipEntry{"bin/run", 0o755, "#!/bin/sh\n"}, zipEntry{"README", 0o644, "x"}, zipEntry{"bin/", fs.ModeDir | 0o755, ""})}, []string{"README", "bin/run"}},
		{"tgz", map[string][]byte{"e.tar.gz": tgzOf(t, &tar.Header{Name: "src/", Typeflag: tar.TypeDir, Mode: 0o755}, &tar.Header{Name: "src/main.c", Typeflag: tar.TypeReg, Mode: 0o644})}, []string{"src/main.c"}},
		{"two files", map[string][]byte{"a.rb": []byte("1"), "b.rb": []byte("2")}, []string{"a.rb", "b.rb"}},
	} {
		body, ct := multipartBody(t, fmt.Sprintf(`{"name":"up-%s","game":"gomoku","command":"ruby a.rb {host} {port} {colorflag}"}`, u.name), u.files)
		code, b := s.do(t, apiRequest{method: "POST", path: "/api/engines", body: body, contentType: ct})
		if code != 201 {
			t.Fatalf("%s: %d %s", u.name, code, b)
		}
		var got struct {
			ID    int64
			Files []string
		}
		json.Unmarshal(b, &got)
		if strings.Join(got.Files, ",") != strings.Join(u.want, ",") {
			t.Errorf("%s: files %v, want %v", u.name, got.Files, u.want)
		}
		e, _ := s.db.Engine(context.Background(), got.ID)
		if !strings.HasPrefix(e.Dir, filepath.Join(s.data, "engines")+string(filepath.Separator)) {
			t.Errorf("%s: engine dir %q is not under the data dir", u.name, e.Dir)
		}
		if u.name == "zip" {
			fi, err := os.Stat(filepath.Join(e.Dir, "bin/run"))
			if err != nil || fi.Mode()&0o100 == 0 {
				t.Errorf("zip: bin/run lost its execute bit (%v, %v)", fi, err)
			}
		}
	}
}

// The dashboard's cookie carries the token only together with its own request
// header, so a cross-site form cannot use it.
func TestCookieAuthNeedsHeader(t *testing.T) {
	s := newAPIServer(t)
	req, _ := http.NewRequest("POST", s.URL+"/api/session", strings.NewReader(`{"token":"`+apiToken+`"}`))
	req.Header.Set("X-Requested-With", "taikai")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var cookie *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == web.SessionCookie {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatalf("sign-in: %d, no session cookie", res.StatusCode)
	}
	for _, tc := range []struct {
		header string
		want   int
	}{{"", 401}, {"taikai", 200}} {
		req, _ := http.NewRequest("GET", s.URL+"/api/auth", nil)
		req.AddCookie(cookie)
		if tc.header != "" {
			req.Header.Set("X-Requested-With", tc.header)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("cookie with header %q: %d, want %d", tc.header, res.StatusCode, tc.want)
		}
	}
}

// Under /api/ every answer is JSON, whatever the method (issue 16, item
// 11): HEAD is a GET without its body, and TRACE, OPTIONS and methods HTTP
// does not know are JSON errors naming the method.
func TestAPIMethodsAnswerJSON(t *testing.T) {
	s := newAPIServer(t)
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"HEAD", "/api/engines", http.StatusOK},
		{"HEAD", "/api/nothing", http.StatusNotFound},
		{"TRACE", "/api/engines", http.StatusMethodNotAllowed},
		{"OPTIONS", "/api/tournaments", http.StatusMethodNotAllowed},
		{"BREW", "/api/engines", http.StatusMethodNotAllowed},
		{"BREW", "/api/nothing", http.StatusMethodNotAllowed},
		{"GET", "/api/static/app.js", http.StatusNotFound},
	} {
		req, err := http.NewRequest(tc.method, s.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.status || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s %s: %d %q, want %d with JSON", tc.method, tc.path, res.StatusCode, res.Header.Get("Content-Type"), tc.status)
			continue
		}
		var e struct {
			Error struct{ Code, Message string }
		}
		if tc.method != "HEAD" && tc.status >= 400 && (json.Unmarshal(body, &e) != nil || e.Error.Code == "" || !strings.Contains(e.Error.Message, tc.method) && tc.status == http.StatusMethodNotAllowed) {
			t.Errorf("%s %s: body %q, want a JSON error naming the method", tc.method, tc.path, body)
		}
	}
}

// A body shorter than its Content-Length is answered once the body's time
// is up, not after the server's whole read timeout (issue 16, item 11).
func TestShortBodyIsAnswered(t *testing.T) {
	t.Parallel()
	s := newAPIServer(t, func(srv *web.Server) { srv.BodyTimeout, srv.UploadTimeout = time.Second, time.Second })
	// Both requests at once: each waits out the body's second.
	types := []string{"application/json", "multipart/form-data; boundary=x"}
	conns := make([]net.Conn, len(types))
	for i, ct := range types {
		c, err := net.Dial("tcp", s.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /api/engines HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: 100\r\n\r\n{\"name\":", apiToken, ct)
		conns[i] = c
	}
	for i, ct := range types {
		c := conns[i]
		c.SetReadDeadline(time.Now().Add(20 * time.Second)) // the body's time is 1 s here
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: no answer: %v", ct, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "in time") {
			t.Errorf("%s: %d %s, want 400 saying the body did not arrive in time", ct, res.StatusCode, body)
		}
	}
}

// A fixed engine port equal to the server's own HTTP port is refused, by
// JSON and by upload (issue 16, item 11).
func TestEnginePortIsNotTheServers(t *testing.T) {
	s := newAPIServer(t)
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	code, body := s.do(t, apiRequest{method: "POST", path: "/api/engines", contentType: "application/json",
		body: strings.NewReader(`{"name":"x","game":"othello","command":"./x {host}","port":` + port + `}`)})
	if code != http.StatusBadRequest || !strings.Contains(string(body), `"field":"port"`) {
		t.Errorf("JSON: %d %s, want 400 on port", code, body)
	}
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	meta, _ := mw.CreateFormField("meta")
	meta.Write([]byte(`{"name":"y","game":"othello","command":"./x {host}","port":` + port + `}`))
	fw, _ := mw.CreateFormFile("file", "x")
	fw.Write([]byte("#!/bin/sh\n"))
	mw.Close()
	code, body = s.do(t, apiRequest{method: "POST", path: "/api/engines", contentType: mw.FormDataContentType(), body: &b})
	if code != http.StatusBadRequest || !strings.Contains(string(body), `"field":"port"`) {
		t.Errorf("upload: %d %s, want 400 on port", code, body)
	}
}

// A request with several bad fields names them all at once (issue 16, item
// 16): "field" and "message" are the first's, "fields" has every one.
func TestTournamentErrorsAllAtOnce(t *testing.T) {
	s := newAPIServer(t)
	code, body := s.do(t, apiRequest{method: "POST", path: "/api/tournaments", contentType: "application/json",
		body: strings.NewReader(`{"name":"","game":"othello","engines":[1],"games_per_pair":-1,"pace_ms":3600000}`)})
	var e struct {
		Error struct {
			Code, Field string
			Fields      map[string]string
		}
	}
	if err := json.Unmarshal(body, &e); err != nil || code != http.StatusBadRequest {
		t.Fatalf("%d %s", code, body)
	}
	for _, f := range []string{"name", "engines", "games_per_pair", "pace_ms"} {
		if e.Error.Fields[f] == "" {
			t.Errorf("no error for %s in %s", f, body)
		}
	}
	if e.Error.Code != "invalid" || e.Error.Field != "name" {
		t.Errorf("first error %q on %q, want invalid on name", e.Error.Code, e.Error.Field)
	}
}

// An uploaded suite is listed, read back, and a tournament may start from it
// only when it is for the tournament's game, rule and board size.
func TestUploadedSuite(t *testing.T) {
	s := newAPIServer(t)
	a := s.post(t, "/api/engines", `{"name":"a","game":"gomoku","builtin":"gomoku-random"}`)
	b := s.post(t, "/api/engines", `{"name":"b","game":"gomoku","builtin":"gomoku-threat"}`)
	suite := s.post(t, "/api/openings", `{"name":"mine","game":"gomoku","rule":"renju","text":"# two\nh8 i9 h10\n\nh8i7g9\n"}`)
	if suite["openings"] != 2.0 || suite["rule"] != "renju" || suite["size"] != 15.0 {
		t.Fatalf("suite %v", suite)
	}
	id := suite["id"]
	code, body := s.do(t, apiRequest{method: "GET", path: fmt.Sprintf("/api/openings/%v", id)})
	if code != 200 || !strings.Contains(string(body), "h8i7g9") {
		t.Fatalf("GET suite: %d %s", code, body)
	}
	code, body = s.do(t, apiRequest{method: "GET", path: "/api/openings"})
	if code != 200 || !strings.Contains(string(body), `"mine"`) || !strings.Contains(string(body), `"builtin"`) {
		t.Fatalf("GET suites: %d %s", code, body)
	}
	// For renju on 15x15, not for freestyle.
	code, body = s.do(t, apiRequest{method: "POST", path: "/api/tournaments", contentType: "application/json",
		body: strings.NewReader(fmt.Sprintf(`{"name":"t","game":"gomoku","rule":"freestyle","engines":[%v,%v],"openings":{"suite_id":%v}}`, a["id"], b["id"], id))})
	if code != 400 || !strings.Contains(string(body), "openings.suite_id") || !strings.Contains(string(body), "renju") {
		t.Fatalf("suite of another rule: %d %s", code, body)
	}
	tour := s.post(t, "/api/tournaments", fmt.Sprintf(`{"name":"t","game":"gomoku","rule":"renju","engines":[%v,%v],"openings":{"suite_id":%v,"order":"sequential"},"sprt":"elo0=0 elo1=20"}`, a["id"], b["id"], id))
	set := tour["settings"].(map[string]any)
	if set["openings"] == nil || set["sprt"] == nil {
		t.Fatalf("settings %v: no openings or sprt", set)
	}
}

// A suite may be uploaded as a GGF or PSQ file: its games become the
// openings (cut to plies moves when asked), checked like any suite.
func TestSuiteFromRecords(t *testing.T) {
	s := newAPIServer(t)
	ggf := "(;GM[Othello]PC[x]BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]B[f5//1.2]W[d6]B[c3/0.5/2]W[d3];)\n(;GM[Othello]B[D3]W[c5];)\n"
	suite := s.post(t, "/api/openings", fmt.Sprintf(`{"name":"from-ggf","game":"othello","format":"ggf","text":%q}`, ggf))
	if suite["openings"] != 2.0 {
		t.Fatalf("GGF suite %v", suite)
	}
	code, body := s.do(t, apiRequest{method: "GET", path: fmt.Sprintf("/api/openings/%v", suite["id"])})
	if code != 200 || !strings.Contains(string(body), `f5d6c3d3\nd3c5`) {
		t.Fatalf("GET GGF suite: %d %s", code, body)
	}
	psq := "Piskvorky 15x15, 11:11, 0\n8,8,120\n9,9,40\n7,9,0\n10,10,0\nblack\nwhite\n0\n"
	suite = s.post(t, "/api/openings", fmt.Sprintf(`{"name":"from-psq","game":"gomoku","rule":"freestyle","format":"psq","plies":3,"text":%q}`, psq))
	if suite["openings"] != 1.0 {
		t.Fatalf("PSQ suite %v", suite)
	}
	code, body = s.do(t, apiRequest{method: "GET", path: fmt.Sprintf("/api/openings/%v", suite["id"])})
	if code != 200 || !strings.Contains(string(body), `h8 i7 g7\n`) {
		t.Fatalf("GET PSQ suite: %d %s", code, body)
	}
	for _, c := range []struct{ body, field, want string }{
		{`{"name":"x","game":"othello","format":"sgf","text":"(;;)"}`, "format", `othello games have no \"sgf\" record format`},
		{`{"name":"x","game":"gomoku","format":"ggf","text":"(;;)"}`, "format", `gomoku games have no \"ggf\"`},
		{fmt.Sprintf(`{"name":"x","game":"othello","format":"ggf","text":%q}`, "(;GM[Othello]BO[8 -------- -------- -------- ---OO--- ---*O--- -------- -------- -------- *]B[f5];)"), "text", "game 1: BO["},
		{fmt.Sprintf(`{"name":"x","game":"othello","format":"ggf","text":%q}`, "(;GM[Othello]B[f5]W[a1];)"), "", "line 1"},
		{fmt.Sprintf(`{"name":"x","game":"gomoku","format":"psq","text":%q}`, "Piskvorky 15x15, 11:11, 0\n16,1,0\n"), "text", "off the 15x15 board"},
		{`{"name":"x","game":"othello","format":"ggf","plies":-1,"text":"(;;)"}`, "plies", "plies -1"},
	} {
		code, body := s.do(t, apiRequest{method: "POST", path: "/api/openings", contentType: "application/json", body: strings.NewReader(c.body)})
		if code != 400 || !strings.Contains(string(body), c.want) || (c.field != "" && !strings.Contains(string(body), `"field":"`+c.field+`"`)) {
			t.Errorf("%s: %d %s, want 400 on %q with %q", c.body, code, body, c.field, c.want)
		}
	}
}

// A pbrain brain cannot be told the seed rule's double-three ban: a
// tournament that would make it play the seed rule is refused, naming why;
// freestyle is fine.
func TestPbrainRules(t *testing.T) {
	s := newAPIServer(t)
	brain := s.post(t, "/api/engines", `{"name":"brain","game":"gomoku","builtin":"gomoku-threat","protocol":"pbrain"}`)
	other := s.post(t, "/api/engines", `{"name":"other","game":"gomoku","builtin":"gomoku-random"}`)
	code, body := s.do(t, apiRequest{method: "POST", path: "/api/tournaments", contentType: "application/json",
		body: strings.NewReader(fmt.Sprintf(`{"name":"t","game":"gomoku","engines":[%v,%v]}`, brain["id"], other["id"]))})
	if code != 400 || !strings.Contains(string(body), `"field":"rule"`) || !strings.Contains(string(body), "double-three") {
		t.Errorf("seed rule with a brain: %d %s, want 400 on rule", code, body)
	}
	code, body = s.do(t, apiRequest{method: "POST", path: "/api/tournaments", contentType: "application/json",
		body: strings.NewReader(fmt.Sprintf(`{"name":"t","game":"gomoku","rule":"freestyle","engines":[%v,%v]}`, brain["id"], other["id"]))})
	if code != 201 {
		t.Errorf("freestyle with a brain: %d %s", code, body)
	}
}
