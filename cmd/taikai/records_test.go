package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gamespkg "github.com/taikai-dev/taikai/games"
)

// readRecords runs the independent reader (testdata/records.py) on a file.
func readRecords(t *testing.T, format string, data []byte) []map[string]any {
	t.Helper()
	path := filepath.Join(t.TempDir(), "games."+format)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("python3", "testdata/records.py", format, path).CombinedOutput()
	if err != nil {
		t.Fatalf("records.py %s: %v\n%s\nfile:\n%s", format, err, out, data)
	}
	var list []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("records.py: %q: %v", line, err)
		}
		list = append(list, m)
	}
	return list
}

// finishedDetails lists a tournament's finished games with their moves and
// pieces.
func finishedDetails(t *testing.T, s *serverProcess, tid int64) []apiGame {
	t.Helper()
	list := finishedGames(t, s, tid)
	for i, g := range list {
		s.call(t, "GET", fmt.Sprintf("/api/games/%d", *g.ID), nil, "", &list[i])
	}
	return list
}

func readCSV(t *testing.T, data []byte, header string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatalf("csv: %v\n%s", err, data)
	}
	if len(rows) == 0 || strings.Join(rows[0], ",") != header {
		t.Fatalf("csv header %v, want %s", rows, header)
	}
	return rows[1:]
}

// A tournament's games exported as GGF (Othello) and PSQ (Gomoku) through the
// API are read back by an independent reader that replays every game to the
// stored result; the CSVs list every finished game and engine; a single game
// exports the same way; `taikai match --out` writes the same formats.
func TestRecordsExport(t *testing.T) {
	ciRequires(t, "python3")
	t.Parallel()
	bin := taikaiBinary(t)
	dir := t.TempDir()
	s := startServer(t, bin, filepath.Join(dir, "taikai.db"), filepath.Join(dir, "data"))
	oth := registerBuiltins(t, s, "rec-", 3)
	gom := []int64{
		s.postJSON(t, "/api/engines", `{"name":"g-threat","game":"gomoku","builtin":"gomoku-threat"}`),
		s.postJSON(t, "/api/engines", `{"name":"g-random","game":"gomoku","builtin":"gomoku-random"}`),
	}
	to := s.postJSON(t, "/api/tournaments", fmt.Sprintf(`{"name":"rec","game":"othello","engines":[%s],"games_per_pair":2,"move_time_ms":200,"concurrency":2,"start":true}`, idList(oth)))
	tg := s.postJSON(t, "/api/tournaments", fmt.Sprintf(`{"name":"rec-g","game":"gomoku","rule":"freestyle","engines":[%s],"games_per_pair":4,"move_time_ms":200,"concurrency":2,"start":true}`, idList(gom)))
	for _, tid := range []int64{to, tg} {
		s.waitFinished(t, tid, 3*time.Minute)
	}

	// Othello: GGF.
	games := finishedDetails(t, s, to)
	code, body := s.do(t, "GET", fmt.Sprintf("/api/tournaments/%d/games.ggf", to), "", nil)
	if code != 200 {
		t.Fatalf("games.ggf: %d %s", code, body)
	}
	recs := readRecords(t, "ggf", body)
	if len(recs) != len(games) || len(games) != 6 {
		t.Fatalf("%d GGF games for %d finished", len(recs), len(games))
	}
	for i, g := range games {
		r := recs[i]
		b, w := int(r["black_discs"].(float64)), int(r["white_discs"].(float64))
		if r["black"] != g.Black.Name || r["white"] != g.White.Name || int(r["moves"].(float64)) != len(g.Moves) {
			t.Errorf("game %d: GGF %v, stored %s-%s with %d moves", *g.ID, r, g.Black.Name, g.White.Name, len(g.Moves))
		}
		if b != g.Stones["black"] || w != g.Stones["white"] {
			t.Errorf("game %d: GGF replays to %d-%d, stored %v", *g.ID, b, w, g.Stones)
		}
		if *g.Reason == "normal" {
			want := map[bool]string{true: "black", false: "white"}[b > w]
			if b == w {
				want = "draw"
			}
			if *g.Result != want || r["re"] != fmt.Sprintf("%+d.000", b-w) {
				t.Errorf("game %d: stored %s, GGF RE %v, replayed %d-%d", *g.ID, *g.Result, r["re"], b, w)
			}
		}
	}
	code, body = s.do(t, "GET", fmt.Sprintf("/api/games/%d.ggf", *games[0].ID), "", nil)
	if one := readRecords(t, "ggf", body); code != 200 || len(one) != 1 || one[0]["re"] != recs[0]["re"] {
		t.Errorf("game %d.ggf: %d %s", *games[0].ID, code, body)
	}

	// Gomoku: PSQ.
	games = finishedDetails(t, s, tg)
	code, body = s.do(t, "GET", fmt.Sprintf("/api/tournaments/%d/games.psq", tg), "", nil)
	if code != 200 {
		t.Fatalf("games.psq: %d %s", code, body)
	}
	recs = readRecords(t, "psq", body)
	if len(recs) != len(games) || len(games) != 4 {
		t.Fatalf("%d PSQ records for %d finished games", len(recs), len(games))
	}
	for i, g := range games {
		r := recs[i]
		if r["black"] != g.Black.Name || r["white"] != g.White.Name || int(r["moves"].(float64)) != len(g.Moves) || r["size"] != 15.0 {
			t.Errorf("game %d: PSQ %v, stored %s-%s with %d moves", *g.ID, r, g.Black.Name, g.White.Name, len(g.Moves))
		}
		five, _ := r["five"].(string)
		if *g.Reason == "normal" && *g.Result != "draw" && five != *g.Result {
			t.Errorf("game %d: stored %s by five, PSQ replays to five for %q", *g.ID, *g.Result, five)
		}
		if wantCode := map[bool]float64{true: 0, false: -1}[*g.Reason == "normal"]; r["code"] != wantCode {
			t.Errorf("game %d: code %v, want %v", *g.ID, r["code"], wantCode)
		}
	}

	// CSV: the games and the standings.
	code, body = s.do(t, "GET", fmt.Sprintf("/api/tournaments/%d/games.csv", to), "", nil)
	rows := readCSV(t, body, "id,round,pair,black,white,result,reason,cause,plies,black_pieces,white_pieces,opening,started_at,ended_at,black_owner,black_number,white_owner,white_number")
	if code != 200 || len(rows) != 6 {
		t.Errorf("games.csv: %d, %d rows", code, len(rows))
	}
	code, body = s.do(t, "GET", fmt.Sprintf("/api/tournaments/%d/standings.csv", to), "", nil)
	rows = readCSV(t, body, "rank,engine,games,wins,draws,losses,points,score_pct,elo,elo_error,buchholz,owner,number")
	played := 0
	for _, r := range rows {
		var n int
		fmt.Sscan(r[2], &n)
		played += n
	}
	if code != 200 || len(rows) != 3 || played != 12 {
		t.Errorf("standings.csv: %d, rows %v", code, rows)
	}

	// Errors name what is wrong.
	for _, c := range []struct {
		path string
		code int
		want string
	}{
		{fmt.Sprintf("/api/tournaments/%d/games.psq", to), 404, "othello games export as .ggf"},
		{fmt.Sprintf("/api/games/%d.ggf", *games[0].ID), 404, "gomoku games export as .psq"},
		{fmt.Sprintf("/api/tournaments/%d/results.txt", to), 404, "games.csv, standings.csv"},
		{"/api/games/x.ggf", 404, "not an id"},
	} {
		code, body := s.do(t, "GET", c.path, "", nil)
		if code != c.code || !strings.Contains(string(body), c.want) {
			t.Errorf("GET %s: %d %s, want %d with %q", c.path, code, body, c.code, c.want)
		}
	}

	// taikai match --out.
	for _, c := range []struct{ format, game, a, b string }{{"ggf", "othello", "othello-greedy", "othello-random"}, {"psq", "gomoku", "gomoku-threat", "gomoku-random"}} {
		out := filepath.Join(t.TempDir(), "match."+c.format)
		cmd := exec.Command(bin, "match", "--game", c.game, "--games", "2", "--move-time", "200ms", "--out", out, c.a, c.b)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("match --out %s: %v\n%s", out, err, b)
		}
		data, _ := os.ReadFile(out)
		if got := readRecords(t, c.format, data); len(got) != 2 {
			t.Errorf("match --out %s: %d games", out, len(got))
		}
		// The file read back as an opening suite, its games cut to 4 plies.
		cmd = exec.Command(bin, "match", "--game", c.game, "--games", "2", "--move-time", "200ms", "--json",
			"--openings", "file="+out+" order=sequential plies=4", c.a, c.b)
		b, err := cmd.Output()
		var res struct {
			Games []struct {
				Opening struct{ Plies int }
				Moves   []struct{ Text string }
			}
		}
		if err != nil || json.Unmarshal(b, &res) != nil || len(res.Games) != 2 || res.Games[0].Opening.Plies != 4 {
			t.Fatalf("match --openings file=%s plies=4: %v\n%s", out, err, b)
		}
		var first []string
		for _, m := range res.Games[0].Moves[:4] {
			first = append(first, m.Text)
		}
		f, _ := gamespkg.RecordFormatOf(c.game, c.format)
		recs, err := f.Read(bytes.NewReader(data))
		if err != nil || len(recs) != 2 {
			t.Fatalf("read %s: %v", out, err)
		}
		var want []string
		for _, m := range recs[0][:4] {
			want = append(want, gamespkg.Text(c.game, m))
		}
		if strings.Join(first, " ") != strings.Join(want, " ") {
			t.Errorf("%s: the first opening is %v, the record's first game begins %v", c.format, first, want)
		}
	}
}
