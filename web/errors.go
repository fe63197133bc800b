package web

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/tournament"
)

// Error codes of the JSON API; each maps to one HTTP status.
const (
	CodeInvalid      = "invalid"
	CodeNotFound     = "not_found"
	CodeConflict     = "conflict"
	CodeUnauthorized = "unauthorized"
	CodeForbidden    = "forbidden"
	CodeTooLarge     = "too_large"
	CodeUnsupported  = "unsupported_media_type"
	CodeInternal     = "internal"
)

var statusOf = map[string]int{
	CodeInvalid:      http.StatusBadRequest,
	CodeNotFound:     http.StatusNotFound,
	CodeConflict:     http.StatusConflict,
	CodeUnauthorized: http.StatusUnauthorized,
	CodeForbidden:    http.StatusForbidden,
	CodeTooLarge:     http.StatusRequestEntityTooLarge,
	CodeUnsupported:  http.StatusUnsupportedMediaType,
	CodeInternal:     http.StatusInternalServerError,
}

// Error is an API error: {"error": {"code", "message", "field"}}.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

func (e *Error) Error() string { return e.Message }

func errInvalid(field, msg string) *Error {
	return &Error{Code: CodeInvalid, Message: msg, Field: field}
}

// apiError turns any error into the API's error, keeping the field a
// validation error names.
func apiError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var fe *engines.FieldError
	code := CodeInternal
	switch {
	case errors.Is(err, tournament.ErrNotFound):
		code = CodeNotFound
	case errors.Is(err, tournament.ErrConflict):
		code = CodeConflict
	case errors.As(err, &fe):
		code = CodeInvalid
	}
	out := &Error{Code: code, Message: err.Error()}
	if errors.As(err, &fe) {
		out.Field = fe.Field
		if code == CodeNotFound {
			// An id in a request body that names nothing is a bad request field.
			out.Code = CodeInvalid
		}
	}
	if code == CodeInternal {
		out.Message = "internal error"
	}
	return out
}

// writeError writes an error response; internal errors are logged, not shown.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := apiError(err)
	if e.Code == CodeInternal {
		s.log().Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeJSON(w, statusOf[e.Code], map[string]*Error{"error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
