package games

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Error codes: what kind of error a caller can act on. The web layer maps
// each to one HTTP status, in one place.
const (
	EInvalid      = "invalid"   // bad input; Field names it
	ENotFound     = "not_found" // nothing has that id or name
	EConflict     = "conflict"  // the state forbids it now (a duplicate name, a running tournament)
	EUnauthorized = "unauthorized"
	EForbidden    = "forbidden"
	ETooMany      = "too_many_requests" // too many failed sign-ins from one address: wait and try again
	ETooLarge     = "too_large"
	EUnsupported  = "unsupported_media_type"
	EUnavailable  = "unavailable"          // the server cannot do it as it runs (no engine sandbox on this host, a database it cannot use)
	ENoSpace      = "insufficient_storage" // the server's disk is full
	EInternal     = "internal"             // anything else: a bug or a broken system, not the caller's doing
	// EIllegal: a person's move the rules refuse; Key names the refusal
	// (occupied, no_flip, forbidden, must_capture ...) and the game goes on.
	EIllegal = "illegal_move"
)

// Error is taikai's one error type for errors a caller can act on: a code,
// the input field it is about (if any, for programs), and a message for
// people, which names the field itself.
type Error struct {
	Code    string
	Field   string
	Message string
	// Line is the line of an uploaded file that the error is on (from 1);
	// 0 for none. The message names it too.
	Line int
	// Err is the cause, for the server's log: it may name server paths that
	// the message, which callers see, must not.
	Err error
	// Key and Params are the message as facts, for a client that says it in
	// its own language: Key names the sentence ("out_of_range"), Params its
	// values ({"value": 0, "min": 1, "max": 1000}). Key is "" for a message
	// that has no such form.
	Key    string
	Params map[string]any
}

// With sets the error's Key and Params and returns it.
func (e *Error) With(key string, params map[string]any) *Error {
	e.Key, e.Params = key, params
	return e
}

// OutOfRange is an input field's value outside min-max, with its facts.
func OutOfRange(field string, value, min, max int64, note string) *Error {
	return Invalid(field, "%d out of range %d-%d%s", value, min, max, note).With("out_of_range", map[string]any{"value": value, "min": min, "max": max})
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

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

// Errors are several errors in one input at once, one per field, in the
// order they were found: a form shows them all, not one at a time.
type Errors []*Error

// Error joins the messages.
func (e Errors) Error() string {
	msgs := make([]string, len(e))
	for i, x := range e {
		msgs[i] = x.Message
	}
	return strings.Join(msgs, "; ")
}

// Unwrap gives the errors to errors.Is and errors.As: the first *Error is
// the one a caller that wants one sees.
func (e Errors) Unwrap() []error {
	out := make([]error, len(e))
	for i, x := range e {
		out[i] = x
	}
	return out
}

// Add appends err (an *Error or Errors; anything else is kept as an
// internal error), keeping the first error of each field.
func (e Errors) Add(err error) Errors {
	var list Errors
	var one *Error
	switch {
	case err == nil:
		return e
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = Errors{one}
	default:
		list = Errors{{Code: EInternal, Message: err.Error()}}
	}
	for _, x := range list {
		if !slices.ContainsFunc(e, func(y *Error) bool { return y.Field == x.Field }) {
			e = append(e, x)
		}
	}
	return e
}

// Err is nil when there is no error, the error itself when there is one,
// and all of them otherwise.
func (e Errors) Err() error {
	switch len(e) {
	case 0:
		return nil
	case 1:
		return e[0]
	}
	return e
}
