package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/web"
	"golang.org/x/text/encoding/japanese"
)

type rosterParticipant struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Number string `json:"number"`
	Status string `json:"status"`
}

// TestRosterImport sends class rosters as Excel and Japanese Windows save
// them (issue 37): UTF-8 with a byte-order mark, Shift_JIS, headed 学籍番号,
// 氏名; the names come from the name column and the numbers are kept.
func TestRosterImport(t *testing.T) {
	s := startSite(t)
	sjis, err := japanese.ShiftJIS.NewEncoder().String("学籍番号,氏名\r\n6321130,高橋 一郎\r\n6321131,渡辺 花子\r\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what, csv string
		want      []rosterParticipant
	}{
		{"Excel CSV UTF-8 with a BOM", "\ufeffname\r\nAlice\r\nBob\r\n", []rosterParticipant{{Name: "Alice"}, {Name: "Bob"}}},
		{"学籍番号,氏名 with a BOM", "\ufeff学籍番号,氏名\r\n6321120,山田 太郎\r\n6321121,鈴木 花子\r\n", []rosterParticipant{{Name: "山田 太郎", Number: "6321120"}, {Name: "鈴木 花子", Number: "6321121"}}},
		{"Shift_JIS", sjis, []rosterParticipant{{Name: "高橋 一郎", Number: "6321130"}, {Name: "渡辺 花子", Number: "6321131"}}},
		{"名前 and id, in another order", "名前,id,メール\n佐藤 次郎,A-17,x@example.com\n", []rosterParticipant{{Name: "佐藤 次郎", Number: "A-17"}}},
	} {
		var got struct {
			Participants []rosterParticipant `json:"participants"`
		}
		if code := postCSV(t, s, c.csv, &got); code != http.StatusCreated {
			t.Fatalf("%s: status %d", c.what, code)
		}
		if len(got.Participants) != len(c.want) {
			t.Fatalf("%s: got %+v, want %+v", c.what, got.Participants, c.want)
		}
		for i, w := range c.want {
			if g := got.Participants[i]; g.Name != w.Name || g.Number != w.Number {
				t.Errorf("%s: participant %d is %q (number %q), want %q (%q)", c.what, i, g.Name, g.Number, w.Name, w.Number)
			}
		}
	}
	var list struct {
		Participants []rosterParticipant `json:"participants"`
	}
	s.mustCall(t, "GET", "/api/participants", nil, &list)
	for _, p := range list.Participants {
		if p.Name == "6321120" || p.Name == "学籍番号" || strings.HasPrefix(p.Name, "\ufeff") {
			t.Errorf("a participant was made of a header or an id: %+v", p)
		}
	}

	for _, c := range []struct {
		what, csv string
		line      int
		says      []string
	}{
		{"two columns, no name header", "学籍番号,メール\n6321120,a@example.com\n", 1, []string{`"学籍番号"`, `"メール"`, "氏名"}},
		{"two headerless columns", "6321120,山田\n", 1, []string{`"6321120"`, `"山田"`, "2 columns"}},
		{"neither UTF-8 nor Shift_JIS", "name\nok\n\xff\xfe\xfd\n", 3, []string{"CSV UTF-8"}},
		{"a number too long", "氏名,学籍番号\n田中," + strings.Repeat("9", 40) + "\n", 2, []string{"student number"}},
	} {
		var e errorAnswer
		if code := postCSV(t, s, c.csv, &e); code != http.StatusBadRequest {
			t.Fatalf("%s: status %d, want 400", c.what, code)
		}
		if e.Error.Line != c.line || e.Error.Field != "csv" {
			t.Errorf("%s: line %d field %q, want line %d: %s", c.what, e.Error.Line, e.Error.Field, c.line, e.Error.Message)
		}
		for _, w := range c.says {
			if !strings.Contains(e.Error.Message, w) {
				t.Errorf("%s: %q does not say %q", c.what, e.Error.Message, w)
			}
		}
	}
}

// TestParticipantRenameDelete: the admin renames, renumbers and removes a
// participant; the removed one can no longer sign in, and their engine and
// its games stay.
func TestParticipantRenameDelete(t *testing.T) {
	s := startSite(t)
	id, token := newMember(t, s, "Yamda")
	m := member{s: s, token: token}
	var eng engineAnswer
	if code := m.upload(t, "POST", "/api/engines", map[string]any{"name": "yamada-bot", "game": "othello", "protocol": "othello-move", "command": studentCommand}, studentEngine(t, "random"), &eng); code != http.StatusCreated {
		t.Fatalf("upload: %d", code)
	}
	var p rosterParticipant
	s.mustCall(t, "PATCH", fmt.Sprintf("/api/participants/%d", id), map[string]string{"name": "山田 太郎", "number": "6321120"}, &p)
	if p.Name != "山田 太郎" || p.Number != "6321120" || p.Status != "active" {
		t.Errorf("after PATCH: %+v", p)
	}
	// A participant renamed still signs in with their token.
	if code := m.call(t, "GET", "/api/session", nil, nil); code != http.StatusOK {
		t.Errorf("the renamed participant's session: %d", code)
	}
	newMember(t, s, "Suzuki")
	var e errorAnswer
	if code := s.call(t, "PATCH", fmt.Sprintf("/api/participants/%d", id), map[string]string{"name": "suzuki"}, &e); code != http.StatusConflict || !strings.Contains(e.Error.Message, "suzuki") {
		t.Errorf("rename to a taken name: %d %+v", code, e)
	}
	if code := s.call(t, "PATCH", fmt.Sprintf("/api/participants/%d", id), map[string]string{"name": ""}, &e); code != http.StatusBadRequest || e.Error.Field != "name" {
		t.Errorf("rename to nothing: %d %+v", code, e)
	}
	if code := s.call(t, "PATCH", "/api/participants/9999", map[string]string{"name": "x"}, nil); code != http.StatusNotFound {
		t.Errorf("PATCH of no participant: %d", code)
	}
	if code := m.call(t, "PATCH", fmt.Sprintf("/api/participants/%d", id), map[string]string{"name": "me"}, nil); code != http.StatusForbidden {
		t.Errorf("a participant renaming themself: %d, want 403", code)
	}

	s.mustCall(t, "DELETE", fmt.Sprintf("/api/participants/%d", id), nil, &p)
	if p.Status != "deactivated" {
		t.Errorf("after DELETE: %+v", p)
	}
	if code := m.call(t, "GET", "/api/engines", nil, nil); code == http.StatusOK {
		var sess struct {
			Participant *struct{ ID int64 } `json:"participant"`
		}
		m.call(t, "GET", "/api/session", nil, &sess)
		if sess.Participant != nil {
			t.Errorf("a removed participant is still signed in: %+v", sess.Participant)
		}
	}
	if code := m.call(t, "POST", fmt.Sprintf("/api/engines/%d/check", eng.ID), nil, nil); code != http.StatusForbidden && code != http.StatusUnauthorized {
		t.Errorf("a removed participant's token still works: %d", code)
	}
	var got engineAnswer
	s.mustCall(t, "GET", fmt.Sprintf("/api/engines/%d", eng.ID), nil, &got)
	if got.Name != "yamada-bot" {
		t.Errorf("the removed participant's engine: %+v", got)
	}
	if code := s.call(t, "POST", fmt.Sprintf("/api/participants/%d/invitation", id), nil, &e); code != http.StatusConflict {
		t.Errorf("inviting a removed participant: %d %+v", code, e)
	}
	var list struct {
		Participants []rosterParticipant `json:"participants"`
	}
	s.mustCall(t, "GET", "/api/participants", nil, &list)
	if len(list.Participants) != 2 || list.Participants[0].Status != "deactivated" || list.Participants[0].Number != "6321120" {
		t.Errorf("the list after DELETE: %+v", list.Participants)
	}
}

// TestInvitationLinksPublicURL (issue 37, item 8): invitation links start
// with the server's public URL when it has one; without it, the list says
// when links would point at this computer only.
func TestInvitationLinksPublicURL(t *testing.T) {
	s := startSite(t) // reached at 127.0.0.1: links would be local
	var list struct {
		Invitations struct {
			BaseURL string `json:"base_url"`
			Local   bool   `json:"local"`
		} `json:"invitations"`
	}
	s.mustCall(t, "GET", "/api/participants", nil, &list)
	if !list.Invitations.Local || !strings.HasPrefix(list.Invitations.BaseURL, "http://127.0.0.1:") {
		t.Errorf("without a public URL: %+v", list.Invitations)
	}
	s = startSiteWith(t, false, func(srv *web.Server) { srv.PublicURL = "https://taikai.example.ac.jp" })
	var inv invitedAnswer
	s.mustCall(t, "POST", "/api/participants", map[string]string{"name": "Ito"}, &inv)
	if got := inv.Participants[0].Invitation.URL; !strings.HasPrefix(got, "https://taikai.example.ac.jp/invite/") {
		t.Errorf("the invitation link with a public URL: %q", got)
	}
	list.Invitations.Local = true
	s.mustCall(t, "GET", "/api/participants", nil, &list)
	if list.Invitations.Local || list.Invitations.BaseURL != "https://taikai.example.ac.jp" {
		t.Errorf("with a public URL: %+v", list.Invitations)
	}
}

// TestDeadlineInItsZone (issue 37, item 12): a deadline set with +09:00
// is said in +09:00 when it refuses a late upload, and read back so.
func TestDeadlineInItsZone(t *testing.T) {
	s := startSite(t)
	_, token := newMember(t, s, "Kato")
	at := time.Now().Add(-time.Hour).In(time.FixedZone("JST", 9*3600)).Truncate(time.Second)
	var sub struct {
		CloseAt string `json:"close_at"`
	}
	s.mustCall(t, "PUT", "/api/submissions", map[string]string{"close_at": at.Format(time.RFC3339)}, &sub)
	if !strings.HasSuffix(sub.CloseAt, "+09:00") {
		t.Errorf("the deadline reads back as %q, not in +09:00", sub.CloseAt)
	}
	var e errorAnswer
	if code := (member{s: s, token: token}).upload(t, "POST", "/api/engines", map[string]any{"name": "late", "game": "othello", "protocol": "othello-move", "command": studentCommand}, studentEngine(t, "othello-random"), &e); code != http.StatusConflict {
		t.Fatalf("a late upload: %d", code)
	}
	if want := at.Format("2006-01-02 15:04:05") + " +09:00"; !strings.Contains(e.Error.Message, want) {
		t.Errorf("the deadline's error %q does not say %q", e.Error.Message, want)
	}
}
