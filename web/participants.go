package web

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/japanese"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/storage"
)

// Participants (issue 21): the admin creates them, one by one or from a CSV
// of names, and hands each an invitation link; accepting it sets up the
// participant's own token.
const (
	// invitationTTL is how long an invitation link works.
	invitationTTL = 14 * 24 * time.Hour
	// maxParticipantName bounds a participant's name in bytes.
	maxParticipantName = 64
	// maxCSVNames bounds the names of one CSV upload.
	maxCSVNames = 1000
	// deadlineKey is the server setting that holds when submissions close
	// (RFC 3339); unset: open.
	deadlineKey = "submissions_close_at"
)

// invitationJSON is a participant's invitation as the admin gets it, once:
// the code is not stored, only its hash.
type invitationJSON struct {
	Code      string    `json:"code"`
	URL       string    `json:"url"`
	Path      string    `json:"path"`
	ExpiresAt time.Time `json:"expires_at"`
}

// participantJSON is a participant as the admin sees them, with what they
// submitted and when.
type participantJSON struct {
	ID         int64               `json:"id"`
	Name       string              `json:"name"`
	Number     string              `json:"number"` // the student number, "" when none
	Status     string              `json:"status"` // invited, active (accepted an invitation), expired (invitation expired, never accepted), deactivated (removed by the admin)
	CreatedAt  time.Time           `json:"created_at"`
	AcceptedAt *time.Time          `json:"accepted_at"`
	InviteEnds *time.Time          `json:"invitation_expires_at"`
	Invitation *invitationJSON     `json:"invitation,omitempty"` // only in the answer that made it
	Engines    []submittedJSON     `json:"engines"`
	Versions   []engineVersionJSON `json:"versions"` // every version they uploaded, newest first
	LastSubmit *time.Time          `json:"last_submitted_at"`
}

// submittedJSON is one of a participant's engines.
type submittedJSON struct {
	ID          int64      `json:"id"`
	Name        string     `json:"name"`
	Game        string     `json:"game"`
	Version     int        `json:"version"`
	SubmittedAt time.Time  `json:"submitted_at"` // its newest version's
	DeletedAt   *time.Time `json:"deleted_at,omitempty"`
}

// engineVersionJSON is one version of an engine.
type engineVersionJSON struct {
	EngineID    int64     `json:"engine_id"`
	Version     int       `json:"version"`
	Command     string    `json:"command_line"`
	Protocol    string    `json:"protocol"`
	FilesHash   string    `json:"files_hash,omitempty"`
	UploadedBy  string    `json:"uploaded_by"`
	UploadedByI int64     `json:"uploaded_by_id,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

func versionJSON(v storage.EngineVersion) engineVersionJSON {
	cmd := engines.QuoteCommand(v.Engine.Command)
	if v.Engine.Builtin != "" {
		cmd = "taikai engine " + v.Engine.Builtin
	}
	return engineVersionJSON{EngineID: v.EngineID, Version: v.Version, Command: cmd, Protocol: v.Engine.Protocol, FilesHash: v.FilesHash,
		UploadedBy: v.By, UploadedByI: v.ByID, CreatedAt: v.CreatedAt}
}

// inviteBase is where invitation links point: the server's public URL
// (--public-url) if it has one, else the scheme and host the admin's
// browser used.
func (s *Server) inviteBase(r *http.Request) string {
	if s.PublicURL != "" {
		return s.PublicURL
	}
	scheme := "http"
	if overTLS(r) {
		scheme = "https"
	}
	host := r.Host
	if !validHost(host) {
		host = "localhost"
	}
	return scheme + "://" + host
}

// localBase says whether links to base reach this machine only: localhost,
// 127.0.0.0/8 or ::1 (a student's browser would open their own computer).
func localBase(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// newInvitation makes an invitation code and its link.
func (s *Server) newInvitation(r *http.Request) (invitationJSON, string) {
	code := newSecret()
	path := "/invite/" + code
	return invitationJSON{Code: code, Path: path, URL: s.inviteBase(r) + path, ExpiresAt: time.Now().Add(invitationTTL).UTC()}, HashToken(code)
}

// csvError is an error on a line of a CSV of names.
func csvError(line int, format string, args ...any) *games.Error {
	return &games.Error{Code: games.EInvalid, Field: "csv", Line: line, Message: fmt.Sprintf("line %d: ", line) + fmt.Sprintf(format, args...)}
}

// rosterEntry is one participant of a roster: a name and, when the roster
// has a student-number column, their number.
type rosterEntry struct {
	Name, Number string
}

// The headers a roster's columns are recognised by, compared without case
// and spaces: a class list exported from a university system or Excel.
var (
	nameHeaders   = []string{"name", "fullname", "studentname", "氏名", "名前", "学生氏名", "学生名", "なまえ", "お名前"}
	numberHeaders = []string{"id", "number", "no", "no.", "studentid", "studentnumber", "studentno", "学籍番号", "学生番号", "番号", "出席番号"}
)

// headerIs says whether a header cell is one of the names (no case, no spaces).
func headerIs(cell string, names []string) bool {
	key := strings.ToLower(strings.Join(strings.Fields(cell), ""))
	return slices.Contains(names, key)
}

// rosterText is a roster's bytes as UTF-8: a UTF-8 byte-order mark (Excel's
// "CSV UTF-8") is dropped, and a file that is not UTF-8 is read as Shift_JIS
// (Windows code page 932, Excel's plain "CSV" on a Japanese Windows). A file
// that is neither is refused with how to save it.
func rosterText(b []byte) ([]byte, error) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if utf8.Valid(b) {
		return b, nil
	}
	out, err := japanese.ShiftJIS.NewDecoder().Bytes(b)
	if err == nil && utf8.Valid(out) && !bytes.ContainsRune(out, utf8.RuneError) {
		return out, nil
	}
	line := 1 + bytes.Count(b[:firstInvalid(b)], []byte("\n"))
	return nil, csvError(line, "the file is neither UTF-8 nor Shift_JIS (CP932): in Excel, save it with \"Save As\" and the type \"CSV UTF-8 (Comma delimited) (*.csv)\"")
}

// firstInvalid is the offset of the first byte of b that is not UTF-8.
func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// parseNames reads a class roster, CSV: one name a line in the first
// column, or, when the first line is a header, the column headed name, 氏名
// or 名前 (nameHeaders), with the student number from the column headed
// 学籍番号 or id (numberHeaders), if there is one. A file of several columns
// must say which holds the names. Blank lines are skipped. Every error names
// its line.
func parseNames(r io.Reader) ([]rosterEntry, []int, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	text, err := rosterText(raw)
	if err != nil {
		return nil, nil, err
	}
	cr := csv.NewReader(bytes.NewReader(text))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	var (
		list  []rosterEntry
		lines []int
		col   = 0
		num   = -1
		seen  = map[string]int{}
		first = true
	)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, nil, csvError(pe.Line, "%v", pe.Err)
			}
			return nil, nil, errInvalid("csv", "csv: "+err.Error())
		}
		line, _ := cr.FieldPos(0)
		if first {
			first = false
			name, number := -1, -1
			for i, f := range rec {
				switch {
				case name < 0 && headerIs(f, nameHeaders):
					name = i
				case number < 0 && headerIs(f, numberHeaders):
					number = i
				}
			}
			if name >= 0 {
				col, num = name, number
				continue
			}
			if len(rec) > 1 {
				cols := make([]string, len(rec))
				for i, f := range rec {
					cols[i] = strconv.Quote(strings.TrimSpace(f))
				}
				return nil, nil, csvError(line, "%d columns (%s) and none is headed name, 氏名 or 名前: give the names' column one of these headers (and the student numbers' column 学籍番号 or id), or send one name a line", len(rec), strings.Join(cols, ", "))
			}
		}
		if col >= len(rec) {
			if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
				continue
			}
			return nil, nil, csvError(line, "no name: the line has %d columns, the names are in column %d", len(rec), col+1)
		}
		name := strings.TrimSpace(rec[col])
		if name == "" && len(strings.TrimSpace(strings.Join(rec, ""))) == 0 {
			continue
		}
		if err := checkParticipantName(name); err != nil {
			return nil, nil, csvError(line, "%s", err.Error())
		}
		var number string
		if num >= 0 && num < len(rec) {
			number = strings.TrimSpace(rec[num])
			if err := checkParticipantNumber(number); err != nil {
				return nil, nil, csvError(line, "%s", err.Error())
			}
		}
		key := strings.ToLower(name)
		if prev, ok := seen[key]; ok {
			return nil, nil, csvError(line, "the name %q is already on line %d", name, prev)
		}
		seen[key] = line
		list = append(list, rosterEntry{Name: name, Number: number})
		lines = append(lines, line)
		if len(list) > maxCSVNames {
			return nil, nil, csvError(line, "more than %d names in one file", maxCSVNames)
		}
	}
	if len(list) == 0 {
		return nil, nil, errInvalid("csv", "csv: no names in the file: want one name a line")
	}
	return list, lines, nil
}

// maxParticipantNumber bounds a student number in bytes.
const maxParticipantNumber = 32

// checkParticipantNumber says what is wrong with a student number, nil if
// nothing ("" is none).
func checkParticipantNumber(n string) error {
	if len(n) > maxParticipantNumber {
		return fmt.Errorf("the student number %q is longer than %d bytes", n, maxParticipantNumber)
	}
	for _, c := range n {
		if !unicode.IsPrint(c) {
			return fmt.Errorf("the student number %q has a character that cannot be printed (%U)", n, c)
		}
	}
	return nil
}

// checkParticipantName says what is wrong with a name, nil if nothing.
func checkParticipantName(name string) error {
	switch {
	case name == "":
		return errors.New("the name is empty")
	case len(name) > maxParticipantName:
		return fmt.Errorf("the name %q is longer than %d bytes", name, maxParticipantName)
	case !utf8.ValidString(name):
		return errors.New("the name is not valid UTF-8")
	}
	for _, c := range name {
		if !unicode.IsPrint(c) {
			return fmt.Errorf("the name %q has a character that cannot be printed (%U)", name, c)
		}
	}
	return nil
}

// createParticipants is POST /api/participants: JSON {"name"} for one, or a
// CSV of names (Content-Type text/csv) for many, all or none. Each comes
// with an invitation link, shown this once.
func (s *Server) createParticipants(w http.ResponseWriter, r *http.Request) {
	var (
		names []rosterEntry
		lines []int
	)
	if strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") {
		var err error
		if names, lines, err = parseNames(http.MaxBytesReader(w, r.Body, maxJSON)); err != nil {
			var big *http.MaxBytesError
			if errors.As(err, &big) {
				err = &games.Error{Code: games.ETooLarge, Field: "csv", Message: fmt.Sprintf("csv: over %d bytes", maxJSON)}
			}
			s.writeError(w, r, err)
			return
		}
	} else {
		var req struct {
			Name   string `json:"name"`
			Number string `json:"number"`
		}
		if err := decode(w, r, &req); err != nil {
			s.writeError(w, r, err)
			return
		}
		name, number := strings.TrimSpace(req.Name), strings.TrimSpace(req.Number)
		if err := checkParticipantName(name); err != nil {
			s.writeError(w, r, errInvalid("name", "name: "+err.Error()))
			return
		}
		if err := checkParticipantNumber(number); err != nil {
			s.writeError(w, r, errInvalid("number", "number: "+err.Error()))
			return
		}
		names = []rosterEntry{{Name: name, Number: number}}
	}
	list := make([]storage.NewParticipant, len(names))
	invites := make([]invitationJSON, len(names))
	for i, n := range names {
		var hash string
		invites[i], hash = s.newInvitation(r)
		list[i] = storage.NewParticipant{Name: n.Name, Number: n.Number, InviteHash: hash}
	}
	made, bad, err := s.DB.CreateParticipants(r.Context(), list, invites[0].ExpiresAt)
	if err != nil {
		var ge *games.Error
		if bad >= 0 && lines != nil && errors.As(err, &ge) {
			e := csvError(lines[bad], "%s", strings.TrimPrefix(ge.Message, "name: "))
			e.Code = ge.Code // a conflict stays one
			err = e
		}
		s.writeError(w, r, err)
		return
	}
	out := make([]participantJSON, len(made))
	for i, p := range made {
		out[i] = participantOut(p)
		inv := invites[i]
		out[i].Invitation = &inv
	}
	writeJSON(w, http.StatusCreated, map[string]any{"participants": out})
}

func participantOut(p storage.Participant) participantJSON {
	j := participantJSON{ID: p.ID, Name: p.Name, Number: p.Number, CreatedAt: p.CreatedAt, AcceptedAt: p.Accepted, InviteEnds: p.InviteExpires,
		Engines: []submittedJSON{}, Versions: []engineVersionJSON{}}
	switch {
	case p.Deactivated != nil:
		j.Status = "deactivated"
	case p.Accepted != nil:
		j.Status = "active"
	case p.InviteExpires != nil && time.Now().After(*p.InviteExpires):
		j.Status = "expired"
	default:
		j.Status = "invited"
	}
	return j
}

// listParticipants is GET /api/participants: every participant with their
// engines and every version they uploaded, and when.
func (s *Server) listParticipants(w http.ResponseWriter, r *http.Request) {
	ps, err := s.DB.Participants(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rows, err := s.DB.EnginesOwned(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	versions, err := s.DB.EngineVersions(r.Context(), 0)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	latest := map[int64]storage.EngineVersion{}
	for _, v := range versions {
		if _, ok := latest[v.EngineID]; !ok {
			latest[v.EngineID] = v // newest first
		}
	}
	out := make([]participantJSON, len(ps))
	index := map[int64]int{}
	for i, p := range ps {
		out[i] = participantOut(p)
		index[p.ID] = i
	}
	for _, e := range rows {
		i, ok := index[e.OwnerID]
		if !ok {
			continue
		}
		v := latest[e.ID]
		out[i].Engines = append(out[i].Engines, submittedJSON{ID: e.ID, Name: e.Name, Game: e.Game, Version: v.Version, SubmittedAt: v.CreatedAt, DeletedAt: e.DeletedAt})
	}
	for _, v := range versions {
		if i, ok := index[v.ByID]; ok && v.ByID > 0 {
			out[i].Versions = append(out[i].Versions, versionJSON(v))
			if out[i].LastSubmit == nil {
				t := v.CreatedAt
				out[i].LastSubmit = &t
			}
		}
	}
	sub, err := s.submissions(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	base := s.inviteBase(r)
	writeJSON(w, http.StatusOK, map[string]any{"participants": out, "submissions": sub,
		"invitations": map[string]any{"base_url": base, "local": localBase(base), "public_url_set": s.PublicURL != ""}})
}

// updateParticipant is PATCH /api/participants/{id} {"name", "number"}:
// the admin renames or renumbers a participant (a field left out stays).
// Their engines and games are not touched.
func (s *Server) updateParticipant(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req struct {
		Name   *string `json:"name"`
		Number *string `json:"number"`
	}
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	var c storage.ParticipantChange
	var bad games.Errors
	if req.Name != nil {
		name := strings.TrimSpace(*req.Name)
		if err := checkParticipantName(name); err != nil {
			bad = append(bad, errInvalid("name", "name: "+err.Error()))
		}
		c.Name = &name
	}
	if req.Number != nil {
		number := strings.TrimSpace(*req.Number)
		if err := checkParticipantNumber(number); err != nil {
			bad = append(bad, errInvalid("number", "number: "+err.Error()))
		}
		c.Number = &number
	}
	if len(bad) > 0 {
		s.writeError(w, r, bad.Err())
		return
	}
	if c.Name == nil && c.Number == nil {
		s.writeError(w, r, errInvalid("name", "name: give a new name or number (or both)"))
		return
	}
	p, err := s.DB.UpdateParticipant(r.Context(), id, c)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.log().Info("participant changed", "id", id, "name", p.Name, "number", p.Number)
	writeJSON(w, http.StatusOK, participantOut(p))
}

// deleteParticipant is DELETE /api/participants/{id}: the participant is
// deactivated, not erased. Their token and invitation stop working at
// once; their engines stay (with their owner) and so does every game they
// played, in tournaments, standings and exports.
func (s *Server) deleteParticipant(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := s.DB.DeactivateParticipant(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.log().Info("participant deactivated", "id", id, "name", p.Name)
	writeJSON(w, http.StatusOK, participantOut(p))
}

// reinvite is POST /api/participants/{id}/invitation: a new invitation link,
// which replaces the pending one; accepting it replaces the participant's
// token (for a student who lost theirs).
func (s *Server) reinvite(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if p, err := s.DB.Participant(r.Context(), id); err != nil || p.Deactivated != nil {
		if err == nil {
			err = &games.Error{Code: games.EConflict, Message: fmt.Sprintf("participant %d (%s) was removed from the class: add them again to invite them", id, p.Name)}
		}
		s.writeError(w, r, err)
		return
	}
	inv, hash := s.newInvitation(r)
	if err := s.DB.SetInvitation(r.Context(), id, hash, inv.ExpiresAt); err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := s.DB.Participant(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	j := participantOut(p)
	j.Invitation = &inv
	writeJSON(w, http.StatusCreated, j)
}

// acceptInvitation is POST /api/invitations/accept {"code"}: the invitation
// is used up, the participant gets a new token (in this answer only) and the
// browser is signed in with it. A wrong code counts as a failed sign-in.
func (s *Server) acceptInvitation(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Code string `json:"code"`
	}
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	addr, now := clientAddr(r), time.Now()
	if wait, blocked := s.signIns.blocked(addr, now); blocked {
		s.writeAuthError(w, r, tooMany("too many failed sign-ins from this address: try again in %s s", wait))
		return
	}
	code := strings.TrimSpace(req.Code)
	if code == "" {
		s.writeError(w, r, errInvalid("code", "code: the invitation code is missing"))
		return
	}
	p, token, err := s.accept(r.Context(), HashToken(code))
	if err != nil {
		if errors.Is(err, storage.ErrBadInvitation) {
			s.signIns.failed(addr, now)
		}
		s.writeError(w, r, err)
		return
	}
	if r.Header.Get(csrfHeader) == csrfValue {
		if err := s.startSession(w, r, caller{ID: p.ID, Name: p.Name}, token); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"participant": participantRef{ID: p.ID, Name: p.Name}, "token": token})
}

// accept uses up an invitation and gives its participant a new token.
func (s *Server) accept(ctx context.Context, codeHash string) (storage.Participant, string, error) {
	var token string
	p, err := s.DB.AcceptInvitationWith(ctx, codeHash, func(id int64) string {
		token = newParticipantToken(id)
		return HashToken(token)
	})
	return p, token, err
}

// submissionsJSON says whether participants may submit.
type submissionsJSON struct {
	Open    bool       `json:"open"`
	CloseAt *time.Time `json:"close_at"` // nil: no deadline
}

func (s *Server) submissions(ctx context.Context) (submissionsJSON, error) {
	v, err := s.DB.Setting(ctx, deadlineKey)
	if err != nil || v == "" {
		return submissionsJSON{Open: true}, err
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return submissionsJSON{}, fmt.Errorf("setting %s: %w", deadlineKey, err)
	}
	// In the zone it was set in (+09:00): the deadline a teacher gave.
	return submissionsJSON{Open: time.Now().Before(t), CloseAt: &t}, nil
}

// submissionsOpen refuses a participant's submission after the deadline; the
// admin is never refused.
func (s *Server) submissionsOpen(ctx context.Context, c caller) error {
	if c.Admin {
		return nil
	}
	sub, err := s.submissions(ctx)
	if err != nil || sub.Open {
		return err
	}
	return &games.Error{Code: games.EConflict, Field: "deadline", Message: fmt.Sprintf("Submissions closed at %s (the deadline the admin set): engines can no longer be registered, replaced or withdrawn.", zoned(*sub.CloseAt))}
}

// zoned is a time as people write it, with its zone: "2026-11-28 12:50:00
// +09:00", "2026-11-28 03:50:00 UTC".
func zoned(t time.Time) string {
	if _, off := t.Zone(); off == 0 {
		return t.Format("2006-01-02 15:04:05") + " UTC"
	}
	return t.Format("2006-01-02 15:04:05 -07:00")
}

func (s *Server) getSubmissions(w http.ResponseWriter, r *http.Request) {
	sub, err := s.submissions(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sub)
}

// setSubmissions is PUT /api/submissions: {"close_at": RFC 3339} sets the
// deadline, {"close_at": null} removes it, {"locked": true} closes
// submissions now and {"locked": false} opens them.
func (s *Server) setSubmissions(w http.ResponseWriter, r *http.Request) {
	var req struct {
		CloseAt *string `json:"close_at"`
		Locked  *bool   `json:"locked"`
	}
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	var at string
	switch {
	case req.Locked != nil && req.CloseAt != nil:
		s.writeError(w, r, errInvalid("locked", "locked: give either locked or close_at, not both"))
		return
	case req.Locked != nil && *req.Locked:
		at = time.Now().UTC().Format(time.RFC3339Nano)
	case req.CloseAt != nil:
		t, err := time.Parse(time.RFC3339, *req.CloseAt)
		if err != nil {
			s.writeError(w, r, errInvalid("close_at", fmt.Sprintf("close_at: %q is not a time like 2025-06-30T23:59:00+09:00", *req.CloseAt)))
			return
		}
		at = t.Format(time.RFC3339Nano) // its zone kept, to say it as it was set
	}
	var err error
	if at == "" {
		err = s.DB.DeleteSetting(r.Context(), deadlineKey)
	} else {
		err = s.DB.SetSetting(r.Context(), deadlineKey, at)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.getSubmissions(w, r)
}

// ownedEngine is the engine of the route's id if the caller may change it:
// the admin any, a participant their own.
func (s *Server) ownedEngine(w http.ResponseWriter, r *http.Request) (storage.EngineRow, bool) {
	id, err := idParam(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return storage.EngineRow{}, false
	}
	row, err := s.DB.EngineRow(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return row, false
	}
	if c := callerOf(r); !c.owns(row.OwnerID) {
		s.writeError(w, r, games.Errorf(games.EForbidden, "engine %d is not yours: a participant may change only their own engines", id))
		return row, false
	}
	return row, true
}

// mayRead says whether the caller may read what only an engine's owner
// reads (its logs, its checks, its versions): anyone for the admin's and the
// built-in engines, the admin and the owner for a participant's.
func mayRead(c caller, owner int64) error {
	switch {
	case owner == 0 || c.owns(owner):
		return nil
	case c.member():
		return &games.Error{Code: games.EForbidden, Message: "this belongs to another participant's engine: only its owner and the admin may read it"}
	}
	return &games.Error{Code: games.EUnauthorized, Message: "this belongs to a participant's engine: sign in as its owner (or the admin) to read it"}
}

// readableEngine is the engine of the route's id if the caller may read its
// private parts.
func (s *Server) readableEngine(w http.ResponseWriter, r *http.Request) (storage.EngineRow, bool) {
	id, err := idParam(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return storage.EngineRow{}, false
	}
	row, err := s.DB.EngineRow(r.Context(), id)
	if err == nil {
		err = mayRead(callerOf(r), row.OwnerID)
	}
	if err != nil {
		s.writeError(w, r, err)
		return row, false
	}
	return row, true
}

// replaceEngine is PUT /api/engines/{id}: a new version of an engine (JSON,
// or multipart with files like POST /api/engines); the name and game stay,
// the old version is kept in the engine's history.
func (s *Server) replaceEngine(w http.ResponseWriter, r *http.Request) {
	row, ok := s.ownedEngine(w, r)
	if !ok {
		return
	}
	c := callerOf(r)
	if err := s.submissionsOpen(r.Context(), c); err != nil {
		s.writeError(w, r, err)
		return
	}
	if row.DeletedAt != nil {
		s.writeError(w, r, games.Errorf(games.ENotFound, "engine %d was withdrawn: register a new one", row.ID))
		return
	}
	fill := func(req *engineRequest) {
		if strings.TrimSpace(req.Name) == "" {
			req.Name = row.Name
		}
		if req.Game == "" {
			req.Game = row.Game
		}
	}
	save := func(e *engines.Engine, up storage.Upload) (int, error) {
		if e.Name != row.Name {
			return 0, errInvalid("name", fmt.Sprintf("name: a new version keeps the name %q (register another engine for another name)", row.Name))
		}
		e.ID = row.ID
		version, err := s.DB.ReplaceEngine(r.Context(), *e, storage.Submission{Owner: row.OwnerID, By: c.ID, Upload: up})
		if err != nil {
			return 0, err
		}
		s.log().Info("engine replaced", "engine", e.Name, "id", e.ID, "version", version, "by", c.Name)
		s.wakeLeagues()
		if e.Builtin == "" {
			s.startCheck(*e, row.OwnerID, version)
		}
		return http.StatusOK, nil
	}
	s.receiveEngine(w, r, row.OwnerID, row.ID, fill, save)
}

// patchEngine is PATCH /api/engines/{id} {"playable_by_others": bool}: the
// engine's owner (or the admin) lets other participants play it in the
// browser, or stops them. It makes no new version, and submissions need not
// be open: it changes who may play the engine, not the engine.
func (s *Server) patchEngine(w http.ResponseWriter, r *http.Request) {
	row, ok := s.ownedEngine(w, r)
	if !ok {
		return
	}
	var req struct {
		PlayableByOthers *bool `json:"playable_by_others"`
	}
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.PlayableByOthers == nil {
		s.writeError(w, r, errInvalid("playable_by_others", "playable_by_others: want true or false"))
		return
	}
	if err := s.DB.SetPlayable(r.Context(), row.ID, *req.PlayableByOthers); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.log().Info("engine playable by others", "engine", row.Name, "id", row.ID, "on", *req.PlayableByOthers, "by", callerOf(r).Name)
	s.writeEngine(w, r, http.StatusOK, row.ID)
}

// receiveEngine reads an engine from a request, JSON or multipart, and saves it.
func (s *Server) receiveEngine(w http.ResponseWriter, r *http.Request, owner, engineID int64, fill func(*engineRequest), save engineSaver) {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		s.uploadEngine(w, r, owner, engineID, fill, save)
		return
	}
	var req engineRequest
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	e, err := s.admitted(r, &req, fill)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status, err := save(&e, storage.Upload{})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeEngine(w, r, status, e.ID)
}

// getVersions is GET /api/engines/{id}/versions: the engine's versions,
// newest first, for its owner and the admin.
func (s *Server) getVersions(w http.ResponseWriter, r *http.Request) {
	// Public, as the engine's command and owner are: its page shows them.
	id, err := idParam(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	row, err := s.DB.EngineRow(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	vs, err := s.DB.EngineVersions(r.Context(), row.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ratings, err := s.DB.VersionRatings(r.Context(), row.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// Each version's pre-flight check, for those who may read the engine's
	// checks (as GET .../check); null for the others and a version never
	// checked.
	var checks map[int]storage.EngineCheck
	if mayRead(callerOf(r), row.OwnerID) == nil {
		if checks, err = s.DB.VersionChecks(r.Context(), row.ID); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	type ratedVersion struct {
		engineVersionJSON
		// Ratings: the version's rating in each league it played.
		Ratings []storage.VersionRating `json:"ratings"`
		Check   *checkSummaryJSON       `json:"check"`
	}
	out := make([]ratedVersion, len(vs))
	for i, v := range vs {
		out[i] = ratedVersion{engineVersionJSON: versionJSON(v), Ratings: ratings[v.Version]}
		if out[i].Ratings == nil {
			out[i].Ratings = []storage.VersionRating{}
		}
		if c, ok := checks[v.Version]; ok {
			out[i].Check = checkSummary(c)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"versions": out})
}
