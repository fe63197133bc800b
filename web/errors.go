package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"syscall"

	"github.com/taikai-dev/taikai/games"
)

// statusOf maps each error code to its HTTP status: the one place where
// taikai's errors meet HTTP.
var statusOf = map[string]int{
	games.EInvalid:      http.StatusBadRequest,
	games.ENotFound:     http.StatusNotFound,
	games.EConflict:     http.StatusConflict,
	games.EUnauthorized: http.StatusUnauthorized,
	games.EForbidden:    http.StatusForbidden,
	games.ETooMany:      http.StatusTooManyRequests,
	games.ETooLarge:     http.StatusRequestEntityTooLarge,
	games.EUnsupported:  http.StatusUnsupportedMediaType,
	games.EUnavailable:  http.StatusServiceUnavailable,
	games.ENoSpace:      http.StatusInsufficientStorage,
	games.EInternal:     http.StatusInternalServerError,
	games.EIllegal:      http.StatusUnprocessableEntity,
}

// errorJSON is an error as the API shows it: {"error": {"code", "message", "field"}}.
type errorJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	// Line is the line of an uploaded file the error is on (a CSV of
	// participants), for a dashboard that says it in its own language.
	Line int `json:"line,omitempty"`
	// Fields has every field in error when there are several (a form shows
	// them all at once); Field and Message are the first's, and all of them.
	Fields map[string]string `json:"fields,omitempty"`
	// MessageKey and MessageParams are the message as facts (games.Error's
	// Key and Params), for a dashboard that says it in its own language;
	// FieldFacts the same for each of Fields that has them.
	MessageKey    string                  `json:"message_key,omitempty"`
	MessageParams map[string]any          `json:"message_params,omitempty"`
	FieldFacts    map[string]messageFacts `json:"field_facts,omitempty"`
}

// messageFacts is one field's message as facts.
type messageFacts struct {
	Key    string         `json:"message_key"`
	Params map[string]any `json:"message_params,omitempty"`
}

func errInvalid(field, msg string) *games.Error {
	return &games.Error{Code: games.EInvalid, Field: field, Message: msg}
}

// diskFull says a full disk as such, whatever failed on it.
func diskFull(err error) error {
	if games.ErrorCode(err) == games.EInternal && (errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)) {
		return &games.Error{Code: games.ENoSpace, Message: "the server's disk is full: nothing can be stored until space is freed", Err: err}
	}
	return err
}

// apiError turns any error into the API's error. The message of an internal
// error is not shown (it is logged).
func apiError(err error) errorJSON {
	err = diskFull(err)
	out := errorJSON{Code: games.ErrorCode(err), Message: err.Error()}
	var e *games.Error
	if errors.As(err, &e) {
		out.Field, out.Line = e.Field, e.Line
		out.MessageKey, out.MessageParams = e.Key, e.Params
	}
	var list games.Errors
	if errors.As(err, &list) {
		out.Fields = make(map[string]string, len(list))
		for _, x := range list {
			out.Fields[x.Field] = x.Message
			if x.Key != "" {
				if out.FieldFacts == nil {
					out.FieldFacts = map[string]messageFacts{}
				}
				out.FieldFacts[x.Field] = messageFacts{Key: x.Key, Params: x.Params}
			}
		}
	}
	if out.Code == games.EInternal {
		out.Message = "internal error"
	}
	return out
}

// writeError writes an error response; internal errors are logged, not shown.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	err = diskFull(err)
	e := apiError(err)
	// Logged: a bug, or a cause on the server's side (a full disk), with
	// the details the caller is not shown.
	var ge *games.Error
	if e.Code == games.EInternal || errors.As(err, &ge) && ge.Err != nil {
		s.log().Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err, "cause", errors.Unwrap(err))
	}
	writeJSON(w, statusOf[e.Code], map[string]errorJSON{"error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
