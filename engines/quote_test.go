package engines_test

import (
	"testing"

	"github.com/taikai-dev/taikai/engines"
)

// TestQuoteCommandLeavesPlaceholders (issue 37, item 14): a command shows
// as it was written, `python3 client.py {host} {port}`, not with each
// placeholder quoted; shell syntax is still quoted.
func TestQuoteCommandLeavesPlaceholders(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"python3", "client.py", "{host}", "{port}"}, "python3 client.py {host} {port}"},
		{[]string{"./c", "--port={port}"}, "./c --port={port}"},
		{[]string{"echo", "{a,b}"}, "echo '{a,b}'"},
		{[]string{"echo", "{}"}, "echo '{}'"},
		{[]string{"echo", "{host} x"}, "echo '{host} x'"},
	} {
		if got := engines.QuoteCommand(c.argv); got != c.want {
			t.Errorf("QuoteCommand(%q) = %q, want %q", c.argv, got, c.want)
		}
	}
}
