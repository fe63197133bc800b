package engines_test

import (
	"strings"
	"testing"

	"github.com/taikai-dev/taikai/engines"
)

// Expand fills in known placeholders anywhere in an argument and leaves an
// unknown one, or an unclosed brace, as written.
func TestExpand(t *testing.T) {
	vars := map[string]string{"host": "127.0.0.1", "port": "4000", "colorflag": "-b"}
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"{host}", "127.0.0.1"},
		{"--addr={host}:{port}", "--addr=127.0.0.1:4000"},
		{"{colorflag}{colorflag}", "-b-b"},
		{"{nope}", "{nope}"},
		{"x{host", "x{host"},
		{"{port}{", "4000{"},
		{"{}", "{}"},
	} {
		if got := engines.Expand([]string{tc.in}, vars)[0]; got != tc.want {
			t.Errorf("Expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A command's placeholders are checked: unknown names and unclosed braces are
// refused, naming the argument.
func TestCommandPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string // "" for valid
	}{
		{[]string{"prog", "{host}", "{port}", "--name={name}-{colornum}"}, ""},
		{[]string{"prog", "{hots}"}, `argument 1 "{hots}": unknown placeholder {hots}`},
		{[]string{"prog", "{host"}, `argument 1 "{host": unclosed {`},
		{[]string{"prog", "{bad} {host"}, `unknown placeholder {bad}`},
		{[]string{"{host}x{port"}, `argument 0 "{host}x{port": unclosed {`},
	} {
		e := engines.Engine{Name: "e", Game: "othello", Protocol: "othello-board", Command: tc.argv}
		err := e.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v, want valid", tc.argv, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %v, want an error containing %q", tc.argv, err, tc.want)
		}
	}
}

// A match spec gives an engine its time to connect (issue 16, item 5);
// the time is validated like every field.
func TestSpecConnect(t *testing.T) {
	e, err := engines.ParseSpec("name=book cmd='./client {host} {port}' connect=45s", "othello")
	if err != nil || e.ConnectTimeoutMS != 45000 || e.Validate() != nil {
		t.Errorf("connect=45s: %+v, %v", e, err)
	}
	if _, err := engines.ParseSpec("name=x cmd=./x connect=soon", "othello"); err == nil || !strings.Contains(err.Error(), "connect") {
		t.Errorf("connect=soon: %v, want an error naming connect", err)
	}
	e.ConnectTimeoutMS = 3600 * 1000
	if err := e.Validate(); err == nil || !strings.Contains(err.Error(), "connect_timeout_ms") {
		t.Errorf("an hour to connect: %v, want an error naming connect_timeout_ms", err)
	}
}
