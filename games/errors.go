package games

import (
	"errors"
	"fmt"
)

// Error codes: what kind of error a caller can act on. The web layer maps
// each to one HTTP status, in one place.
const (
	EInvalid      = "invalid"   // bad input; Field names it
	ENotFound     = "not_found" // nothing has that id or name
	EConflict     = "conflict"  // the state forbids it now (a duplicate name, a running tournament)
	EUnauthorized = "unauthorized"
	EForbidden    = "forbidden"
	ETooLarge     = "too_large"
	EUnsupported  = "unsupported_media_type"
	EUnavailable  = "unavailable" // the server cannot do it as it runs (no engine sandbox on this host)
	EInternal     = "internal"    // anything else: a bug or a broken system, not the caller's doing
)

// Error is taikai's one error type for errors a caller can act on: a code,
// the input field it is about (if any, for programs), and a message for
// people, which names the field itself.
type Error struct {
	Code    string
	Field   string
	Message string
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Invalid is an error in the input field named: "field: what is wrong".
func Invalid(field, format string, args ...any) *Error {
	return &Error{Code: EInvalid, Field: field, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// Errorf is an error with a code and no field.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EInternal
// if there is none, "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}
