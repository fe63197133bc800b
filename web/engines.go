package web

// The engines resource: /api/engines and /api/builtins.

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/storage"
)

// engineExtras are what an engine list shows beside the engines: owners'
// names, newest versions, last checks.
type engineExtras struct {
	owners   map[int64]string
	versions map[int64]storage.EngineVersion
	checks   map[int64]storage.EngineCheck
	caller   caller
}

func (s *Server) loadEngineExtras(r *http.Request) (engineExtras, error) {
	x := engineExtras{owners: map[int64]string{}, versions: map[int64]storage.EngineVersion{}, caller: s.softCaller(r)}
	ps, err := s.DB.Participants(r.Context())
	if err != nil {
		return x, err
	}
	for _, p := range ps {
		x.owners[p.ID] = p.Name
	}
	vs, err := s.DB.EngineVersions(r.Context(), 0)
	if err != nil {
		return x, err
	}
	for _, v := range vs {
		if _, ok := x.versions[v.EngineID]; !ok {
			x.versions[v.EngineID] = v
		}
	}
	x.checks, err = s.DB.Checks(r.Context())
	return x, err
}

// add fills in an engine's owner, version and check.
func (x engineExtras) add(j *engineJSON, owner int64) {
	if owner > 0 {
		j.Owner = &participantRef{ID: owner, Name: x.owners[owner]}
	}
	if v, ok := x.versions[j.ID]; ok {
		t := v.CreatedAt
		j.Version, j.SubmittedAt = v.Version, &t
	}
	if c, ok := x.checks[j.ID]; ok && mayRead(x.caller, owner) == nil {
		j.Check = checkSummary(c)
	}
}

// checkSummary is a stored check as the engine list and the versions show it.
func checkSummary(c storage.EngineCheck) *checkSummaryJSON {
	sum := &checkSummaryJSON{Status: c.Status, Version: c.Version, FinishedAt: c.FinishedAt}
	if c.Result != nil {
		var res checkJSON
		if json.Unmarshal(c.Result, &res) == nil {
			sum.OK, sum.Message = res.OK, res.Message
			sum.Result, sum.Reason, sum.LegalMoves = res.Result, res.Reason, res.LegalMoves
			sum.MessageKey, sum.MessageParams = res.MessageKey, res.MessageParams
		}
	}
	return sum
}

func (s *Server) listEngines(w http.ResponseWriter, r *http.Request) {
	list, err := s.DB.Engines(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	x, err := s.loadEngineExtras(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]engineJSON, len(list))
	for i, e := range list {
		out[i] = s.engineJSON(e)
		x.add(&out[i], e.OwnerID)
	}
	writeJSON(w, http.StatusOK, map[string]any{"engines": out})
}

func (s *Server) getEngine(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeEngine(w, r, http.StatusOK, id)
}

// engineRequest is the body of POST /api/engines (or its multipart "meta" part).
type engineRequest struct {
	Name     string          `json:"name"`
	Game     string          `json:"game"`
	Protocol string          `json:"protocol"`
	Command  json.RawMessage `json:"command"`
	Port     int             `json:"port"`
	Builtin  string          `json:"builtin"`
	MemoryMB int             `json:"memory_mb"`
	MaxProcs int             `json:"max_procs"`
	// ConnectTimeoutMS is the time the engine has to connect after its start.
	ConnectTimeoutMS int64 `json:"connect_timeout_ms"`
}

// engine turns a request into a validated engine definition.
func (req *engineRequest) engine() (engines.Engine, error) {
	e := engines.Engine{Name: strings.TrimSpace(req.Name), Game: req.Game, Protocol: req.Protocol, Port: req.Port, Builtin: req.Builtin,
		MemoryMB: req.MemoryMB, MaxProcs: req.MaxProcs, ConnectTimeoutMS: req.ConnectTimeoutMS}
	if len(req.Command) > 0 && string(req.Command) != "null" {
		var line string
		var argv []string
		switch {
		case json.Unmarshal(req.Command, &line) == nil:
			var err error
			if argv, err = engines.SplitCommand(line); err != nil {
				return e, errInvalid("command", "command: "+err.Error())
			}
		case json.Unmarshal(req.Command, &argv) == nil:
		default:
			return e, errInvalid("command", "command: want a string or an array of strings")
		}
		e.Command = argv
	}
	if e.Game == "" {
		return e, errInvalid("game", "game: must be one of "+strings.Join(games.Names(), ", "))
	}
	return e, e.Validate()
}

// createEngine is POST /api/engines: the admin registers an engine of
// their own, a participant one they own (until submissions close). Every
// engine but a built-in is checked in the background.
func (s *Server) createEngine(w http.ResponseWriter, r *http.Request) {
	c := callerOf(r)
	if err := s.submissionsOpen(r.Context(), c); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.receiveEngine(w, r, c.ID, 0, nil, func(e *engines.Engine, up storage.Upload) (int, error) {
		if err := s.DB.RegisterEngine(r.Context(), e, storage.Submission{Owner: c.ID, By: c.ID, MaxOwned: s.participantLimits().Engines, Upload: up}); err != nil {
			return 0, err
		}
		if e.Builtin == "" {
			s.startCheck(*e, c.ID, 1)
		}
		return http.StatusCreated, nil
	})
}

// writeEngine answers with an engine and the files of its upload.
func (s *Server) writeEngine(w http.ResponseWriter, r *http.Request, status int, id int64) {
	row, err := s.DB.EngineRow(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	j := s.engineJSON(row)
	if row.Dir != "" {
		// The list stored at upload: no walk of what the engine's directory
		// holds now (issue 36, item 5).
		files, err := s.DB.UploadedFiles(r.Context(), id)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if len(files) == 0 {
			files = listFiles(row.Dir, maxListed) // uploaded before the list was stored
		}
		j.Files = files
	}
	x, err := s.loadEngineExtras(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	x.add(&j, row.OwnerID)
	writeJSON(w, status, j)
}

// deleteEngine is DELETE /api/engines/{id}: the admin deletes any engine, a
// participant withdraws their own (until submissions close).
func (s *Server) deleteEngine(w http.ResponseWriter, r *http.Request) {
	row, ok := s.ownedEngine(w, r)
	if !ok {
		return
	}
	if err := s.submissionsOpen(r.Context(), callerOf(r)); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.DB.DeleteEngine(r.Context(), row.ID); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.wakeLeagues() // a withdrawn engine plays no more league games
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listBuiltins(w http.ResponseWriter, r *http.Request) {
	type builtinJSON struct {
		Name      string   `json:"name"`
		Game      string   `json:"game"`
		Protocols []string `json:"protocols"`
		About     string   `json:"about"`
	}
	var out []builtinJSON
	for _, b := range engines.Builtins() {
		out = append(out, builtinJSON{b.Name, b.Game, b.Protocols, b.About})
	}
	protos := map[string][]string{}
	for _, g := range games.Names() {
		protos[g] = engines.Protocols(g)
	}
	writeJSON(w, http.StatusOK, map[string]any{"builtins": out, "protocols": protos, "placeholders": engines.Placeholders})
}
