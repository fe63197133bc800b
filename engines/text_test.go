package engines_test

import (
	"testing"

	"github.com/taikai-dev/taikai/engines"
)

func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"hello, 世界", "hello, 世界"},
		{"hi\rTURN 1", "hi TURN 1"},
		{"hi\nTURN 1", "hi TURN 1"},
		{"hi\r\nTURN 1", "hi  TURN 1"},
		{"a\u2028b\u2029c\u0085d", "a b c d"},
		{"tab\there\x00\x1b[2J", "tab here  [2J"},
		{"bad\xffutf8", "bad utf8"},
		{"zero\u200bwidth", "zero width"},
	} {
		if got := engines.OneLine(tc.in); got != tc.want {
			t.Errorf("OneLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
